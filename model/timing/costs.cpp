// Per-instance costs of the timing model (timing.h: instance_cost_ns), one overload per
// instruction, so that a new instruction does not compile until it has a cost. Formulas from
// cost_table.cpp's sources; what the trace cannot tell (input strides, the second input's dtype)
// is taken as the common case and listed in model/timing/README.md.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include "model/timing/internal.h"

namespace ncv {
inline namespace timing {

namespace {

bool is_16bit_float(DType t) {
  return t == DType::bf16 || t == DType::fp16;
}

// Region i of an event (reads first, then writes).
const Region& region(const Trace& tr, const TraceEvent& ev, int i) {
  return tr.regions.at(ev.region_begin + static_cast<uint32_t>(i));
}

bool any_read_in(const Trace& tr, const TraceEvent& ev, Memory m) {
  for (int i = 0; i < ev.num_reads; ++i) {
    if (region(tr, ev, i).memory == m) return true;
  }
  return false;
}

// What the Vector-engine formulas of one instance read from its event.
struct VectorInputs {
  double n;       // elements per partition (at least 1)
  double min_ii;  // MIN_II
  bool psum_in;   // some input is in PSUM
  bool all16;     // input and output are 16-bit floats
  double mode;    // ARCH3 performance mode of copies / tensor_scalar (1, 2 or 4)

  VectorInputs(const CostTable& t, const TraceEvent& ev, const Trace& tr)
      : n(static_cast<double>(std::max<int64_t>(ev.free_elems, 1))),
        min_ii(t.min_ii_cycles),
        psum_in(any_read_in(tr, ev, Memory::PSUM)),
        all16(is_16bit_float(ev.in_dtype) && is_16bit_float(ev.out_dtype)),
        // ARCH3: 4x for SBUF->SBUF 16-bit copies/tensor_scalar, 2x with a PSUM side.
        mode(!t.vector_perf_modes ? 1.0
             : !all16             ? 1.0
             : psum_in            ? 2.0
                                  : 4.0) {}
};

// An instance on one of the elementwise engines, given its Vector-engine cycles before the
// static overhead (ISA-OLD; the Scalar and GpSimd formulas do not depend on the instruction):
// Vector (cycles + static) / clock, Scalar (max(MIN_II, N) + static [+ accumulator read-out]) /
// clock, GpSimd (start + N + static) / clock.
double elementwise_ns(const CostTable& t, const TraceEvent& ev, double vector_cycles,
                      bool readout = false) {
  const HwConfig& hw = *t.hw;
  const double n = static_cast<double>(std::max<int64_t>(ev.free_elems, 1));
  switch (ev.engine) {
    case Engine::Vector:
      return (vector_cycles + t.static_overhead_cycles) / hw.vector_ghz;
    case Engine::Scalar: {
      double cycles = std::max(t.min_ii_cycles, n) + t.static_overhead_cycles;
      if (readout) cycles += t.act_readout_cycles;
      return cycles / hw.scalar_ghz;
    }
    case Engine::GpSimd:
      return (t.gpsimd_start_cycles + n + t.static_overhead_cycles) / hw.gpsimd_ghz;
    case Engine::Tensor:
    case Engine::Dma:
      break;
  }
  throw std::invalid_argument("an elementwise instruction on the " +
                              std::string(engine_name(ev.engine)) +
                              " engine (the validator allows none)");
}

double dma_data_ns(const CostTable& t, const TraceEvent& ev, int engines) {
  const double bytes = static_cast<double>(ev.bytes);
  if (element_wise_dma(ev)) {
    // One element per contiguous run (load_transpose2d, a transposing store): the DMA engines'
    // transpose mode (PERF-FIG31 `transpose_mode`), at a lower rate than a plain copy ("much
    // lower DMA bandwidth compared to nl.load", PERF) but without a descriptor per element.
    return bytes / (engines * t.dma_transpose_bytes_per_ns);
  }
  const double chunk = static_cast<double>(std::max<int64_t>(ev.contiguous_bytes, 1));
  const double chunks = std::ceil(bytes / chunk);
  return bytes / (engines * t.dma_engine_bytes_per_ns) + chunks * t.dma_chunk_overhead_ns / engines;
}

// --- one cost per instruction -----------------------------------------------------------------

// The queue's occupancy: the data time. The fixed cost is latency before it (timing.cpp). A
// read-modify-write (dst_rmw) records the destination's bytes twice (exec.cpp: read, then
// written back); a DMA that skips out-of-bounds rows records every row (its descriptors do).
double cost_ns(const CostTable& t, const DmaCopy&, const TraceEvent& ev, const Trace&) {
  return dma_transfer_ns(t, ev);
}

double cost_ns(const CostTable& t, const Matmul&, const TraceEvent& ev, const Trace&) {
  return matmul_ns(t, ev);
}

// nc_matmul_mx: the docstring publishes no cost. Each PE multiplies-accumulates the four values
// of a packed element at once ("each TensorE processing element is able to perform four
// simultaneous, FP4/FP8, multiply-accumulate computations", MX deep dive, "Data Tensor"), so a
// pass over the N moving columns takes nc_matmul's cycles for the same [K, M] x [K, N] tile in
// packed elements: the nc_matmul formula (the in dtype is packed, never fp32's slow rate).
double cost_ns(const CostTable& t, const MatmulMx&, const TraceEvent& ev, const Trace&) {
  return matmul_ns(t, ev);
}

// quantize_mx: no published cost; one Vector-engine pass over the source's elements per
// partition (free_elems is the source's 4F), as the model's other Vector instructions without
// a formula. The deep dive's "Matmul-MX produces data at double the rate that Quantize-MX can
// consume it" is consistent with it (TensorE's clock is twice VectorE's).
double cost_ns(const CostTable& t, const QuantizeMx&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const Transpose&, const TraceEvent& ev, const Trace& tr) {
  if (ev.engine != Engine::Tensor) {
    const VectorInputs v(t, ev, tr);
    return elementwise_ns(t, ev, std::max(v.min_ii, v.n));  // 32x32 blocks, one pass
  }
  // max(P, min(64, F)) cycles (ISA-OLD), P = partitions, F = free size.
  const double p = static_cast<double>(ev.partitions);
  const double f = static_cast<double>(std::max<int64_t>(ev.free_elems, 1));
  double cycles = std::max(p, std::min(t.matmul_min_cycles, f));
  if (ev.in_dtype == DType::fp32) cycles *= t.fp32_transpose_factor;
  return cycles / t.hw->tensor_ghz;
}

double cost_ns(const CostTable& t, const Activation&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n), ev.reduce_readout);
}

double cost_ns(const CostTable& t, const TensorReduce& r, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  const bool half = v.all16 && (r.op == AluOp::add || r.op == AluOp::max);
  return elementwise_ns(t, ev, std::max(v.min_ii, half ? v.n / 2 : v.n));
}

// tensor_scalar(op0=rsqrt) on the GpSimd engine: "the computation throughput of reverse square
// root on GpSIMD Engine is 4x lower than Scalar Engine" (SHARED, "NKI Engine Selection for
// Operators Supported on Multiple Engines"). The Scalar engine's rsqrt streams one element per
// Scalar cycle (activation, max(MIN_II, N)), so the N elements take 4N Scalar cycles after
// GpSimd's start and static overhead (the GpSimd formula's one element per cycle otherwise).
// Only rsqrt has a published figure; the other unary ops on GpSimd keep the GpSimd formula.
double cost_ns(const CostTable& t, const TensorScalar& ts, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  if (ev.engine == Engine::GpSimd && ts.op0 == AluOp::rsqrt) {
    const double stream_ns = t.gpsimd_rsqrt_slowdown * v.n / t.hw->scalar_ghz;
    return (t.gpsimd_start_cycles + t.static_overhead_cycles) / t.hw->gpsimd_ghz + stream_ns;
  }
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n / v.mode));
}

double cost_ns(const CostTable& t, const TensorTensor& tt, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  const bool psum_and_sbuf = v.psum_in && any_read_in(tr, ev, Memory::SBUF);
  const bool fast_op = tt.op == AluOp::add || tt.op == AluOp::multiply || tt.op == AluOp::subtract;
  const bool one_pass = psum_and_sbuf || (!v.psum_in && v.all16 && fast_op);
  const double perf = t.vector_perf_modes && !v.psum_in && v.all16 ? 2.0 : 1.0;
  return elementwise_ns(t, ev, std::max(v.min_ii, (one_pass ? v.n : 2 * v.n) / perf));
}

double cost_ns(const CostTable& t, const TensorScalarReduce&, const TraceEvent& ev,
               const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n) + v.min_ii);
}

double cost_ns(const CostTable& t, const TensorCopy&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n / v.mode));
}

double cost_ns(const CostTable& t, const TensorCopyPredicated&, const TraceEvent& ev,
               const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.psum_in ? v.n : 2 * v.n));
}

double cost_ns(const CostTable& t, const AffineSelect&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const Iota&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const Memset& m, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  const bool half = m.value.value == 0.0f && v.all16;
  return elementwise_ns(t, ev, std::max(v.min_ii, half ? v.n / 2 : v.n));
}

double cost_ns(const CostTable& t, const Reciprocal&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, 8 * v.n));
}

// The top-8 family: ISA-OLD (aws-neuron-sdk 0521004c) gives N Vector cycles for max8 and
// nc_find_index8 (N: data elements per partition) and "min(MIN_II, N)" for nc_match_replace8,
// read here as max(MIN_II, N): every other Vector formula of the page has max, and a minimum
// would make a 16,384-element pass cost at most 64 cycles.
double cost_ns(const CostTable& t, const Max8&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, v.n);
}

double cost_ns(const CostTable& t, const FindIndex8&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, v.n);
}

double cost_ns(const CostTable& t, const MatchReplace8&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

// dropout: max(MIN_II, N) Vector cycles (ISA-OLD dropout). nl.rand has no cost formula in either
// ISA page (nor does ISA-NEW rng, its instruction); taken as one elementwise Vector pass, the
// same max(MIN_II, N), an assumption listed in model/timing/README.md.
double cost_ns(const CostTable& t, const Rand&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const Dropout&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

// max(MIN_II, 2N) Vector cycles, N elements per partition (ISA docstring of tensor_tensor_scan,
// aws-neuron-sdk 0521004c general/nki/api/nki/isa/__init__.py).
double cost_ns(const CostTable& t, const TensorTensorScan&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, 2 * v.n));
}

// No published cost (the tensor_scalar_cumulative page, NKI 2.27 on, gives none): one pass
// over the elements, max(MIN_II, N), the rate of tensor_scalar without a performance mode.
double cost_ns(const CostTable& t, const TensorScalarCumulative&, const TraceEvent& ev,
               const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

// bn_stats: max(MIN_II, N); bn_aggr: max(MIN_II, 13 * (N / 3)) Vector cycles, N elements per
// partition of the input (ISA docstrings, aws-neuron-sdk 0521004c general/nki/api/nki/isa).
double cost_ns(const CostTable& t, const BnStats&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const BnAggr&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, 13 * (v.n / 3)));
}

// tensor_partition_reduce and sequence_bounds: no published cost (their pages, SDK 2.26, and the
// ISA docstrings at aws-neuron-sdk 0521004c give none): the GpSimd formula of every GpSimd
// instruction, N the source's elements per partition.
double cost_ns(const CostTable& t, const TensorPartitionReduce&, const TraceEvent& ev,
               const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const SequenceBounds&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

// range_select: max(MIN_II, N) Vector cycles (ISA docstring, aws-neuron-sdk 0521004c
// general/nki/api/nki/isa/__init__.py). select_reduce has no published cost: the same one pass,
// as tensor_copy_predicated's rate without its dst read, plus the accumulator read-out when
// reduce_res is written (as tensor_scalar_reduce's + MIN_II).
double cost_ns(const CostTable& t, const RangeSelect&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

double cost_ns(const CostTable& t, const SelectReduce&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n) + (ev.reduce_readout ? v.min_ii : 0.0));
}

// local_gather: 150 + (n * E) / C GpSimd cycles, C = ((28 + t * E) / (t * E)) / min(4 /
// dtype_size, E), t = 4, n indices per core, E = num_elem_per_idx (ISA docstring of local_gather,
// aws-neuron-sdk 0521004c general/nki/api/nki/isa/__init__.py), plus the static overhead every
// instruction pays here. n * E is the destination's elements per partition (the event's).
double cost_ns(const CostTable& t, const LocalGather& g, const TraceEvent& ev, const Trace&) {
  const double e = static_cast<double>(g.num_elem_per_idx), tt = 4.0;
  const double dsize = static_cast<double>(dtype_size(ev.in_dtype));
  const double c = ((28.0 + tt * e) / (tt * e)) / std::min(4.0 / dsize, e);
  const double ne = static_cast<double>(std::max<int64_t>(ev.free_elems, 1));
  return (150.0 + ne / c + t.static_overhead_cycles) / t.hw->gpsimd_ghz;
}

// nc_stream_shuffle: max(MIN_II, N) Vector cycles, N elements per partition of src (ISA
// docstring, aws-neuron-sdk 0521004c general/nki/api/nki/isa/__init__.py).
double cost_ns(const CostTable& t, const StreamShuffle&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

// gather_flattened: no published cost (the language page gives none; the ISA's nc_n_gather page,
// SDK 2.27 on, neither). The GpSimd engine's per-element rate, start + N + static, N elements
// per partition of the result: one pass over what it writes.
double cost_ns(const CostTable& t, const GatherFlattened&, const TraceEvent& ev, const Trace& tr) {
  const VectorInputs v(t, ev, tr);
  return elementwise_ns(t, ev, std::max(v.min_ii, v.n));
}

}  // namespace

bool element_wise_dma(const TraceEvent& ev) {
  return ev.contiguous_bytes > 0 &&
         ev.contiguous_bytes <= static_cast<int64_t>(dtype_size(ev.in_dtype)) &&
         ev.bytes > static_cast<uint64_t>(ev.contiguous_bytes);
}

int dma_engines_used(const CostTable& t, const TraceEvent& ev) {
  const int64_t per = t.dma_partitions_per_engine;
  const int64_t used = (std::max<int64_t>(ev.partitions, 1) + per - 1) / per;
  return static_cast<int>(std::clamp<int64_t>(used, 1, t.dma_engines));
}

// Occupancy of the core's DMA engines (their shared bandwidth) by one transfer.
double dma_pool_ns(const CostTable& t, const TraceEvent& ev) {
  return dma_data_ns(t, ev, t.dma_engines);
}

double dma_transfer_ns(const CostTable& t, const TraceEvent& ev) {
  return dma_data_ns(t, ev, dma_engines_used(t, ev));
}

// The Tensor engine's MultiplyMoving cost (without LoadStationary).
double matmul_ns(const CostTable& t, const TraceEvent& ev) {
  const double m = static_cast<double>(ev.stationary_cols), n = static_cast<double>(ev.free_elems);
  double cycles = std::max(std::min(t.matmul_min_cycles, m), n);
  if (ev.in_dtype == DType::fp32) cycles *= t.fp32_matmul_factor;
  return cycles / t.hw->tensor_ghz;
}

// LoadStationary of an M-column stationary: up to 4x faster than an MM of that free size.
double load_stationary_ns(const CostTable& t, const TraceEvent& ev) {
  const double m = static_cast<double>(ev.stationary_cols);
  double cycles = std::max(t.matmul_min_cycles, m) / t.load_stationary_speedup;
  if (ev.in_dtype == DType::fp32) cycles *= t.fp32_matmul_factor;
  return cycles / t.hw->tensor_ghz;
}

double instance_cost_ns(const CostTable& t, const Instruction& ins, const TraceEvent& ev,
                        const Trace& tr) {
  return std::visit([&](const auto& i) { return cost_ns(t, i, ev, tr); }, ins);
}

}  // namespace timing
}  // namespace ncv
