// What the attention_cte builder, its registry entry and its tests share: the source's tile
// constants, the build options and the configuration they select, and the modelled domain's caps.
// Source: aws-neuron/nki-library src/nkilib_src/nkilib/core/attention/attention_cte.py
// @d2ad3a579498d1888aa8740af97fd325dd5f2740 (line numbers below are that file's).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// Tile constants (attention_cte.py lines 156-164).
inline constexpr int64_t kCteGroup = 128;          // _Q_GRP_SZ: q rows per group
inline constexpr int64_t kCteVTile = 128;          // _V_TILE_SZ: keys per PV matmul
inline constexpr int64_t kCteKTile = 512;          // _K_TILE_SZ = _EXP_TILE_SZ: keys per QK matmul
inline constexpr int64_t kCteLargeTile = 2048;     // _LARGE_TILE_SZ: 4 K tiles
inline constexpr int64_t kCteFaThreshold = 10240;  // _FLASH_ATTENTION_THRESHOLD
inline constexpr int64_t kCteSectionLen = 8192;    // _FLASH_ATTENTION_SECTION_LENGTH
inline constexpr int64_t kCteSwaRangeSelectMax = 128;  // _SWA_ALLOCATION_STRATEGY_THRESHOLD
// _FLOAT32_MIN (line 135): the mask fill and the partial-max initial value.
inline constexpr float kCteFp32Min = std::numeric_limits<float>::lowest();

// Domain caps of the model (not of the source, which allows bs <= 512 and seqlen <= 131072).
inline constexpr int64_t kCteMaxKvBatch = 2;  // bs_kv
inline constexpr int64_t kCteMaxGroup = 2;    // q rows per kv row (GQA)
// Single section: Sk <= 10240 (the source's flash-attention threshold); from 8704 keys the
// buffers exceed trn1's SBUF (the kernel runs on trn2 and trn3 only: Variant::generations).
inline constexpr int64_t kCteMaxSingleSeqlen = kCteFaThreshold;
// Multi-section: from 10752 (the first multiple of 512 above the threshold) to 16896 (three
// sections, the last of 512 keys).
inline constexpr int64_t kCteMinMultiSeqlen = kCteFaThreshold + kCteKTile;
inline constexpr int64_t kCteMaxMultiSeqlen = 2 * kCteSectionLen + kCteKTile;

struct CteConfig {
  bool causal = true;           // causal_mask (forced on by the sliding window, as the source)
  bool sliding_window = false;  // sliding_window = the symbolic param `window` (> 128)
  bool sink = false;            // sink [bs, 1] fp32 given
  // Sk > 10240: sections of 8192 keys merged through HBM (the variant attention_cte_multi_section)
  bool multi_section = false;
  int lnc = 1;                         // SPMD programs (the batch split across 2 cores)
  float scale = 1.0f;                  // the fp32 scale multiplied into the masked scores
  DType io_dtype = DType::bf16;        // q, k, v and o in HBM (all loaded as bf16)
  int64_t q_groups_per_load() const {  // num_q_grps_per_load (line 1000)
    return io_dtype == DType::fp32 ? 4 : 8;
  }
};

std::vector<OptionSpec> attention_cte_options();
// The configuration of attention_cte (multi_section false) or attention_cte_multi_section (true).
CteConfig attention_cte_config(const Options& o, bool multi_section);
// Why a combination is not offered ("" if it is).
std::string attention_cte_excluded(const Options& o);
Program build_attention_cte(const Options& o, bool multi_section);

// The multi-section path with sections of `section_len` keys instead of 8192 (a positive
// multiple of the 2048-key large tile), for tests: the flash-attention threshold scales with
// it (10240 / 8192 = 5 / 4), so seqlen runs from 5/4 section_len + 512 to 2 section_len + 512
// (two or three sections, as at the source's length) at a fraction of a check case's cost.
// Throws std::invalid_argument for any other section length.
struct CteSeqlenRange {
  int64_t min = 0, max = 0;
};
CteSeqlenRange cte_multi_section_seqlens(int64_t section_len);
Program build_attention_cte_multi_section_scaled(const Options& o, int64_t section_len);
// attention_cte_multi_section with that build, domain and contract (same name, spec and notes).
Variant attention_cte_multi_section_scaled_variant(int64_t section_len);

// The sink logit of folded row h (spec and tests): fixed fp32 values, cycled over the rows,
// some above and some below typical row maxima so that both the max and the sum depend on them.
double attention_cte_sink_value(int64_t h);

}  // namespace ncv::kernels
