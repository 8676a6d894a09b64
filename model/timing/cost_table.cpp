// Cost tables (cost_table.h). Sources (keys: docs/SOURCES.md; the figures themselves:
// calibration/public-figures.json):
//   ISA-OLD  legacy nki.isa cost formulas (aws-neuron-sdk @0521004c): matmul
//            max(min(64, N_stationary), N_moving), x4 fp32; Vector/Scalar max(MIN_II, N) with
//            MIN_II ~ 64; tensor_tensor 2N unless one PSUM input or all-bf16 SBUF; tensor_reduce
//            N/2 for bf16 add/max; reciprocal 8N; memset N/2 for 0 in bf16/fp16; activation
//            read-out + MIN_II; GpSimd start ~150 cycles; TensorE transpose max(P, min(64, F)).
//   ARCH2    NeuronCore-v2 architecture page: LoadStationary up to 4x faster than MM and
//            overlapped with the previous MM; ActReadAccumulator ~64 cycles; 16 DMA engines, 8
//            partitions each; static access overhead ~60 cycles.
//   ARCH3    v3 page: Vector 2x/4x performance modes; transpose mode 2x faster for fp32.
//   DMA/DMABW  DMA pages: 17 / 23 / 33 bytes/ns per engine (trn1 / trn2 / trn3); ~1300 ns fixed
//            cost per transfer (descriptor, sync, semaphore); < 256 B per partition is overhead
//            bound, >= 2 KiB near peak.
//   GLOSS    trn2/trn3 TensorE dI/dt throttling: starts near 50% and ramps over ~3 us.
//   SHARED   "NKI Engine Selection": reverse square root on GpSimd (tensor_scalar op0=rsqrt) has
//            4x lower throughput than on the Scalar engine (activation rsqrt), all generations.
// Uncertain constants (static_overhead_cycles, dma_fixed_ns, dma_chunk_overhead_ns,
// semaphore_ns, dma_transpose_bytes_per_ns): fitted by `ncverify calibrate` to the measured
// latencies in calibration/latencies/ within the ranges of kFittedConstants
// (model/timing/calibration.cpp); the record of the fit is in model/timing/README.md,
// "Calibration". trn2/trn3 share them (no measurements there).
#include "model/timing/cost_table.h"

namespace ncv {
inline namespace timing {

namespace {

// The uncertain constants, shared by all generations: the committed fit. Their plausible ranges
// and the documented values those ranges bracket are in kFittedConstants
// (model/timing/calibration.cpp).
void fitted(CostTable& t) {
  t.static_overhead_cycles = 46.4;
  t.dma_fixed_ns = 717.5;
  t.dma_chunk_overhead_ns = 25.6;
  t.semaphore_ns = 18.1;
  t.dma_transpose_bytes_per_ns = 4.1;
}

CostTable make_trn1() {
  CostTable t;
  t.hw = &hw_config_trn1();
  t.dma_engine_bytes_per_ns = 17;  // DMABW trn1
  fitted(t);
  return t;
}

CostTable make_trn2() {
  CostTable t;
  t.hw = &hw_config_trn2();
  t.fp32_transpose_factor = 2;     // ARCH3 transpose mode: fp32 transposes 2x faster
  t.tensor_throttle = true;        // GLOSS
  t.vector_perf_modes = true;      // ARCH3
  t.dma_engine_bytes_per_ns = 23;  // DMABW trn2
  fitted(t);
  return t;
}

CostTable make_trn3() {
  CostTable t = make_trn2();
  t.hw = &hw_config_trn3();
  t.dma_engine_bytes_per_ns = 33;  // DMABW trn3
  return t;
}

}  // namespace

const CostTable& cost_table_trn1() {
  static const CostTable t = make_trn1();
  return t;
}
const CostTable& cost_table_trn2() {
  static const CostTable t = make_trn2();
  return t;
}
const CostTable& cost_table_trn3() {
  static const CostTable t = make_trn3();
  return t;
}

const CostTable* find_cost_table(std::string_view gen) {
  if (gen == "trn1") return &cost_table_trn1();
  if (gen == "trn2") return &cost_table_trn2();
  if (gen == "trn3") return &cost_table_trn3();
  return nullptr;
}

}  // namespace timing
}  // namespace ncv
