// Per-generation NeuronCore hardware constants, and the few that every generation shares. Each
// per-generation value cites its source once, in hw_config.cpp (source keys: docs/SOURCES.md);
// a default-constructed HwConfig holds zeros. The rules that read them: model/isa/rules.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ncv {
inline namespace hw {

// Shared by trn1, trn2 and trn3, so that generation-independent checks (the static validator)
// can use them: partitions per core (ARCH2, ARCH3, ARCH4: 128), free dims of one access pattern
// (ARCH2: "up to 4-D pattern per partition"), DMA queues per engine (DMA: 16).
inline constexpr int64_t kPartitions = 128;
inline constexpr int kMaxFreeDims = 4;
inline constexpr int kDmaQueues = 16;

struct HwConfig {
  std::string name;    // "trn1", "trn2", "trn3"
  std::string core;    // "NeuronCore-v2", ...
  int generation = 0;  // NeuronCore version: 2, 3, 4
  int64_t partitions = kPartitions;
  int64_t sbuf_bytes_per_partition = 0;
  int64_t sbuf_reserved_bytes_per_partition = 0;  // compiler-reserved, not usable by kernels
  int64_t psum_bytes_per_partition = 0;
  int64_t psum_banks = 0;
  int64_t psum_bank_bytes = 0;
  // Engine clocks in GHz.
  double tensor_ghz = 0, vector_ghz = 0, scalar_ghz = 0, gpsimd_ghz = 0;
  int dma_engines = 0;
  int dma_queues = kDmaQueues;
  // Instruction shape limits.
  int64_t matmul_max_k = 0;
  int64_t matmul_max_m = 0;
  int64_t matmul_max_n = 0;
  // A matmul destination may span PSUM banks (N beyond one bank of fp32); else it lies in one.
  bool matmul_dst_spans_banks = false;
  int64_t tensor_transpose_max = 0;  // Tensor engine transpose up to [L, L]
  // The Tensor engine transposes in "transpose mode": bits moved unchanged (NaN/Inf stay in
  // place, -0 stays -0); else as an identity matmul (v2), where an Inf or NaN spreads.
  bool tensor_transpose_bit_exact = false;
  int64_t vector_transpose_max = 0;   // Vector engine transpose up to [L, L]
  int64_t free_max_sbuf_elems = 0;    // Vector/Scalar elements per partition of an SBUF operand
  int64_t free_max_psum_elems = 0;    // ... of a PSUM operand
  bool scalar_tensor_copy = false;    // tensor_copy may run on the Scalar engine
  bool psum_bf16_matmul_dst = false;  // matmul may write bf16 PSUM

  int64_t sbuf_usable_bytes_per_partition() const {
    return sbuf_bytes_per_partition - sbuf_reserved_bytes_per_partition;
  }
};

const HwConfig& hw_config_trn1();
const HwConfig& hw_config_trn2();
const HwConfig& hw_config_trn3();
// nullptr for an unknown name.
const HwConfig* find_hw_config(std::string_view name);
std::vector<std::string_view> hw_config_names();

}  // namespace hw
}  // namespace ncv
