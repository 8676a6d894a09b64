// Per-generation cost constants of the timing model (model/timing/README.md; sources ARCH2/3,
// ISA-OLD, DMA, DMABW, GLOSS): the documented per-instruction cost formulas and DMA behaviour, plus
// the few constants that are genuinely uncertain, which `ncverify calibrate` fits to measured trn1
// latencies. Engine clocks come from HwConfig. cost_table.cpp cites the source of every value.
#pragma once

#include <string_view>

#include "model/hw/hw_config.h"

namespace ncv {
inline namespace timing {

struct CostTable {
  const HwConfig* hw = nullptr;
  // --- Tensor engine
  double matmul_min_cycles = 64;       // the min(64, N_stationary) floor of the MM cost
  double fp32_matmul_factor = 4;       // fp32 operands: 4 passes
  double load_stationary_speedup = 4;  // LoadStationary vs a MultiplyMoving of the same free size
  double fp32_transpose_factor = 4;    // fp32 tensor-engine transposes (v3+: transpose mode, 2x)
  bool tensor_throttle = false;        // trn2/trn3 dI/dt ramp
  double throttle_start_rate = 0.5;    // fraction of full rate when the ramp starts
  double throttle_ramp_ns = 3000;      // ramp to full rate over this much busy time
  // --- Vector / Scalar / GpSimd
  double min_ii_cycles = 64;          // MIN_II: fixed minimum of Vector/Scalar instructions
  double act_readout_cycles = 64;     // ActReadAccumulator after an activation with reduce_res
  double gpsimd_start_cycles = 150;   // GpSimd instruction start overhead
  double gpsimd_rsqrt_slowdown = 4;   // GpSimd rsqrt: throughput 4x below the Scalar engine's
  double static_overhead_cycles = 0;  // uncertain: per-instruction fixed cost, Vector/Scalar/GpSimd
  bool vector_perf_modes = false;     // v3+: 2x/4x tensor_copy/tensor_scalar, 2x tensor_tensor
  // --- DMA
  int dma_engines = 16;
  int dma_partitions_per_engine = 8;      // 128 partitions / 16 engines
  double dma_engine_bytes_per_ns = 0;     // per engine
  double dma_fixed_ns = 0;                // fitted: descriptor + semaphore latency per transfer
  double dma_chunk_overhead_ns = 0;       // fitted: per contiguous chunk, per engine
  double dma_transpose_bytes_per_ns = 0;  // fitted: per engine, element-wise (transposing) DMA
  // --- synchronisation
  double semaphore_ns = 0;  // fitted: a wait on another engine's semaphore
};

const CostTable& cost_table_trn1();
const CostTable& cost_table_trn2();
const CostTable& cost_table_trn3();
// The table of a generation by HwConfig name; nullptr when unknown.
const CostTable* find_cost_table(std::string_view gen);

}  // namespace timing
}  // namespace ncv
