// What the pipelined_attention builder, its registry entry and its tests share: the fixed shape
// the source runs at, its softmax scale and the SBUF byte offsets its manual allocation hands out.
#pragma once

#include <cstdint>

#include "kernels/variant.h"

namespace ncv::kernels {

// "This kernel can only run on 16k seqlen" (pipelined_attention.py line 40): Sq = Sk = 16384 in
// two KV sections of 8192 keys (lines 87-88); d = 128 (the output views are 0:128 wide).
inline constexpr int64_t kPipeSeqlen = 16384;
inline constexpr int64_t kPipeSectionLen = 8192;
inline constexpr int64_t kPipeSections = kPipeSeqlen / kPipeSectionLen;
inline constexpr int64_t kPipeDHead = 128;
inline constexpr int64_t kPipeGroups = kPipeSeqlen / 128;  // num_grps (line 86)
inline constexpr int64_t kPipeMaxBatch = 2;                // cap of the modelled grid
inline constexpr float kPipeSoftmaxScale = 0.125f;         // the source's test (line 369)

// The source's `sca` counter (lines 94-190) at each allocation, in declaration order, and its
// end: 136140 + 3 * S / 32 bytes per partition at S = 16384.
struct PipeSbufOffsets {
  int64_t identity_load = 0, zero_bias = 0, running_max = 0, running_sum = 0, div_25 = 0,
          k_loaded = 0, v_loaded = 0, q_loaded = 0, scaling_factor = 0, temp_reduce14 = 0,
          mhlo_mul_2 = 0, final_reduce_max = 0, prev_running_max = 0, final_reduce_sum_b = 0,
          final_reduce_sum_b_collect = 0, prev_running_sum = 0, prev_output = 0, mm2_sbuf_res = 0,
          mm2_div_sbuf = 0, exp6_sbuf = 0, tp_sbuf = 0, mm2_sbuf = 0, end = 0;
};
// The source's structure at a seqlen other than 16384, for tests: two KV sections of
// `section_len` keys (a multiple of 2048, the source's chunk), so seqlen = 2 * section_len and
// every loop count scales with it (groups, 512-key tiles, 2048-key chunks). The source itself
// runs at kPipeSectionLen only; the registered kernel uses nothing else.
struct PipeShape {
  int64_t section_len = kPipeSectionLen;
  int64_t seqlen() const { return kPipeSections * section_len; }
  int64_t groups() const { return seqlen() / 128; }        // num_grps
  int64_t tiles_2k() const { return section_len / 2048; }  // num_2048_tiles_per_section
  int64_t v_tiles() const { return section_len / 128; }    // num_128_tiles_per_section
  int64_t k_tiles() const { return section_len / 512; }    // num_512_tiles_per_section
};

// The `sca` offsets at `shape` (the source's at the default).
PipeSbufOffsets pipe_sbuf_offsets(const PipeShape& shape = {});

Program build_pipelined_attention(const Options& o);

// The same builder at a scaled-down shape: the registered kernel's instructions, loops, slots
// and banks at a fraction of a check case's cost (3 x seqlen^2 x 128 multiply-adds), so that
// the default test tier can judge the kernel and its catalogue entries (tests/). Throws
// std::invalid_argument for a section length that is not a positive multiple of 2048.
Program build_pipelined_attention_scaled(const PipeShape& shape);

// The registry entry with its build, domain and contract at `shape` (same name, spec and notes).
Variant pipelined_attention_scaled_variant(const PipeShape& shape);

}  // namespace ncv::kernels
