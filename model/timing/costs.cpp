// Per-instance costs of the timing model (timing.h: instance_cost_ns). Formulas from
// cost_table.cpp's sources; what the trace cannot tell (input strides, the second input's dtype)
// is taken as the common case and listed in model/README.md "Timing model".
#include <algorithm>
#include <cmath>
#include <variant>

#include "model/timing/internal.h"

namespace ncv::inline timing {

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

// Vector-engine cycles of one instruction, before the static overhead (ISA-OLD; ARCH3 modes).
double vector_cycles(const CostTable& t, const Instruction& ins, const TraceEvent& ev,
                     const Trace& tr) {
  const double n = static_cast<double>(std::max<int64_t>(ev.free_elems, 1));
  const double min_ii = t.min_ii_cycles;
  const bool psum_in = any_read_in(tr, ev, Memory::PSUM);
  const bool all16 = is_16bit_float(ev.in_dtype) && is_16bit_float(ev.out_dtype);
  // ARCH3: 4x for SBUF->SBUF 16-bit copies/tensor_scalar, 2x with a PSUM side.
  const double mode = !t.vector_perf_modes ? 1.0 : !all16 ? 1.0 : psum_in ? 2.0 : 4.0;
  if (auto* tt = std::get_if<TensorTensor>(&ins)) {
    const bool psum_and_sbuf = psum_in && any_read_in(tr, ev, Memory::SBUF);
    const bool fast_op =
        tt->op == AluOp::add || tt->op == AluOp::multiply || tt->op == AluOp::subtract;
    const bool one_pass = psum_and_sbuf || (!psum_in && all16 && fast_op);
    const double perf = t.vector_perf_modes && !psum_in && all16 ? 2.0 : 1.0;
    return std::max(min_ii, (one_pass ? n : 2 * n) / perf);
  }
  if (auto* r = std::get_if<TensorReduce>(&ins)) {
    const bool half = all16 && (r->op == AluOp::add || r->op == AluOp::max);
    return std::max(min_ii, half ? n / 2 : n);
  }
  if (std::holds_alternative<TensorScalarReduce>(ins)) return std::max(min_ii, n) + min_ii;
  if (std::holds_alternative<Reciprocal>(ins)) return std::max(min_ii, 8 * n);
  if (auto* m = std::get_if<Memset>(&ins)) {
    const bool half = m->value.value == 0.0f && all16;
    return std::max(min_ii, half ? n / 2 : n);
  }
  if (std::holds_alternative<TensorCopyPredicated>(ins)) {
    return std::max(min_ii, psum_in ? n : 2 * n);
  }
  if (std::holds_alternative<TensorCopy>(ins) || std::holds_alternative<TensorScalar>(ins)) {
    return std::max(min_ii, n / mode);
  }
  return std::max(min_ii, n);  // transpose (32x32 blocks), anything else one-pass
}

double dma_data_ns(const CostTable& t, const TraceEvent& ev, int engines) {
  const double bytes = static_cast<double>(ev.bytes);
  const double chunk = static_cast<double>(std::max<int64_t>(ev.contiguous_bytes, 1));
  const double chunks = std::ceil(bytes / chunk);
  return bytes / (engines * t.dma_engine_bytes_per_ns) + chunks * t.dma_chunk_overhead_ns / engines;
}

}  // namespace

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
  const HwConfig& hw = *t.hw;
  const double n = static_cast<double>(std::max<int64_t>(ev.free_elems, 1));
  switch (ev.engine) {
    case Engine::Dma:
      return t.dma_fixed_ns + dma_transfer_ns(t, ev);
    case Engine::Tensor: {
      if (std::holds_alternative<Matmul>(ins)) return matmul_ns(t, ev);
      // Transpose: max(P, min(64, F)) cycles (ISA-OLD), P = partitions, F = free size.
      const double p = static_cast<double>(ev.partitions);
      double cycles = std::max(p, std::min(t.matmul_min_cycles, n));
      if (ev.in_dtype == DType::fp32) cycles *= t.fp32_transpose_factor;
      return cycles / hw.tensor_ghz;
    }
    case Engine::Vector:
      return (vector_cycles(t, ins, ev, tr) + t.static_overhead_cycles) / hw.vector_ghz;
    case Engine::Scalar: {
      double cycles = std::max(t.min_ii_cycles, n) + t.static_overhead_cycles;
      if (std::holds_alternative<Activation>(ins) && ev.reduce_readout)
        cycles += t.act_readout_cycles;
      return cycles / hw.scalar_ghz;
    }
    case Engine::GpSimd:
      return (t.gpsimd_start_cycles + n + t.static_overhead_cycles) / hw.gpsimd_ghz;
  }
  return 0;
}

}  // namespace ncv::inline timing
