// Per-generation NeuronCore hardware constants (DESIGN.md §3, facts §1-2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ncv {

struct HwConfig {
  std::string name;    // "trn1", "trn2", "trn3"
  std::string core;    // "NeuronCore-v2", ...
  int generation = 2;  // NeuronCore version: 2, 3, 4
  int64_t partitions = 128;
  int64_t sbuf_bytes_per_partition = 0;
  int64_t sbuf_reserved_bytes_per_partition = 0;  // compiler-reserved, not usable by kernels
  int64_t psum_bytes_per_partition = 0;
  int64_t psum_banks = 0;
  int64_t psum_bank_bytes = 0;
  // Engine clocks in GHz.
  double tensor_ghz = 0, vector_ghz = 0, scalar_ghz = 0, gpsimd_ghz = 0;
  int dma_engines = 16;
  int dma_queues = 16;
  // Instruction shape limits: facts §2 Tensor Engine (ISA-NEW nc_matmul: K, M <= 128, N <= 512
  // on v2/v3).
  int64_t matmul_max_k = 128;
  int64_t matmul_max_m = 128;
  int64_t matmul_max_n = 512;
  int64_t vector_transpose_max = 32;    // ISA-OLD nc_transpose: VectorE up to [32, 32]
  int64_t free_max_sbuf_elems = 65536;  // ARCH2: Vector/Scalar free size <= 64K (SBUF)
  int64_t free_max_psum_elems = 4096;   // ARCH2: ... <= 4K elements (PSUM)
  bool scalar_tensor_copy = false;      // ARCH3: tensor_copy on ScalarE from v3
  bool psum_bf16_matmul_dst = false;    // ARCH4: matmul may write bf16 PSUM

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

}  // namespace ncv
