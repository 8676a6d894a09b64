#include "model/hw/hw_config.h"

// The generations' constants, each with its source (keys in docs/SOURCES.md): ARCH2/3/4 =
// the NKI architecture guides of NeuronCore-v2/v3/v4, ALLOC = the NKI direct allocation guide,
// KLR = KLR's tile_size constants (secondary), ISA-NEW / ISA-OLD = the nki.isa docstrings,
// NKILIB = nki-library's allocator constants, DMA = the NKI DMA overview.

namespace ncv {
inline namespace hw {

namespace {

constexpr int64_t KiB = 1024;

HwConfig make_trn1() {
  HwConfig c;
  c.name = "trn1";
  c.core = "NeuronCore-v2";
  c.generation = 2;
  c.partitions = kPartitions;                      // ARCH2: 128 SBUF partitions
  c.sbuf_bytes_per_partition = 192 * KiB;          // ARCH2: 24 MiB SBUF = 128 x 192 KiB
  c.sbuf_reserved_bytes_per_partition = 16 * KiB;  // ALLOC: usable byte range [0, 176 KiB)
  c.psum_bytes_per_partition = 16 * KiB;           // ARCH2: 2 MiB PSUM = 128 x 16 KiB
  c.psum_banks = 8;                                // ARCH2; NKILIB NUM_HW_PSUM_BANKS = 8
  c.psum_bank_bytes = 2 * KiB;                     // ARCH2; NKILIB PSUM_BANK_SIZE = 2048
  c.tensor_ghz = 2.8;                              // ARCH2 clock table
  c.vector_ghz = 1.12;                             // ARCH2
  c.scalar_ghz = 1.4;                              // ARCH2
  c.gpsimd_ghz = 1.4;                              // ARCH2
  c.dma_engines = 16;                              // ARCH2: 16 DMA engines per core
  c.dma_queues = kDmaQueues;                       // DMA: 16 queues per engine
  c.matmul_max_k = 128;                            // ISA-NEW nc_matmul: K <= 128 (partitions)
  c.matmul_max_m = 128;                            // ISA-NEW: stationary free <= 128
  c.matmul_max_n = 512;                            // ISA-NEW: moving free <= 512 on v2/v3
  c.matmul_dst_spans_banks = false;                // ISA-NEW: N <= 512 fp32 = one 2 KiB bank
  c.tensor_transpose_max = 128;                    // ISA-OLD nc_transpose: TensorE <= [128, 128]
  c.vector_transpose_max = 32;                     // ISA-OLD nc_transpose: VectorE <= [32, 32]
  c.free_max_sbuf_elems = 65536;                   // ARCH2: Vector/Scalar free size <= 64K (SBUF)
  c.free_max_psum_elems = 4096;                    // ARCH2: ... <= 4K elements (PSUM)
  c.scalar_tensor_copy = false;                    // ARCH2: tensor_copy not on ScalarE on v2
  return c;
}

HwConfig make_trn2() {
  HwConfig c = make_trn1();
  c.name = "trn2";
  c.core = "NeuronCore-v3";
  c.generation = 3;
  c.sbuf_bytes_per_partition = 224 * KiB;  // ARCH3: 28 MiB SBUF
  // KLR total_available_sbuf_size = 212984 B per partition (secondary source, UNCONFIRMED).
  c.sbuf_reserved_bytes_per_partition = 224 * KiB - 212984;
  c.tensor_ghz = 2.4;  // ARCH3 clock table
  c.vector_ghz = 0.96;
  c.scalar_ghz = 1.2;
  c.gpsimd_ghz = 1.2;
  c.scalar_tensor_copy = true;  // ARCH3: ScalarE bit-accurate copies on v3+
  // ARCH3, ISA-NEW nc_transpose: v3+ TensorE transpose mode is bit-accurate (16-bit PSUM output
  // for 16-bit input).
  c.tensor_transpose_bit_exact = true;
  return c;
}

HwConfig make_trn3() {
  HwConfig c = make_trn2();
  c.name = "trn3";
  c.core = "NeuronCore-v4";
  c.generation = 4;
  c.sbuf_bytes_per_partition = 256 * KiB;  // ARCH4: 32 MiB SBUF
  // KLR total_available_sbuf_size = 245752 B per partition (secondary source, UNCONFIRMED).
  c.sbuf_reserved_bytes_per_partition = 256 * KiB - 245752;
  c.tensor_ghz = 2.4;  // ARCH4 clock table
  c.vector_ghz = 1.2;
  c.scalar_ghz = 1.2;
  c.gpsimd_ghz = 1.2;
  c.matmul_max_n = 4096;            // ISA-NEW: N <= 4096 for an fp32 dst on v4 (all 8 banks)
  c.matmul_dst_spans_banks = true;  // ISA-NEW: so the destination spans banks on v4
  c.psum_bf16_matmul_dst = true;    // ARCH4: bf16 PSUM destination allowed
  return c;
}

}  // namespace

const HwConfig& hw_config_trn1() {
  static const HwConfig c = make_trn1();
  return c;
}
const HwConfig& hw_config_trn2() {
  static const HwConfig c = make_trn2();
  return c;
}
const HwConfig& hw_config_trn3() {
  static const HwConfig c = make_trn3();
  return c;
}

const HwConfig* find_hw_config(std::string_view name) {
  if (name == "trn1") return &hw_config_trn1();
  if (name == "trn2") return &hw_config_trn2();
  if (name == "trn3") return &hw_config_trn3();
  return nullptr;
}

std::vector<std::string_view> hw_config_names() {
  return {"trn1", "trn2", "trn3"};
}

}  // namespace hw
}  // namespace ncv
