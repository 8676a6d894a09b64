// What the attention_tkg builder (attention_tkg.cpp), its mask generation (gen_mask_tkg.cpp), its
// registry entry (attention_tkg_variant.cpp) and its tests share: the build-time options, the
// configuration they imply and the fixed sizes of the source.
//
// Source: aws-neuron/nki-library @d2ad3a579498d1888aa8740af97fd325dd5f2740,
// src/nkilib_src/nkilib/core/attention/attention_tkg.py (+ attention_tkg_utils.py,
// gen_mask_tkg.py) and the test wrapper attn_tkg_wrapper in
// test/integration/nkilib/core/attention/test_attention_tkg.py (lines 93-220).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/builder.h"

namespace ncv::kernels {

// _FA_TILE_SIZE (attention_tkg_utils.py line 24): the s_prior tile of the flash-attention path
// and the per-core length above which it is used.
inline constexpr int64_t kTkgFaTile = 8192;
// The modelled FA domain: exactly two 8192-slot tiles per core (see the notes: with three or
// more tiles the source's correction factor is exp(-inf + inf) = NaN for rows whose first two
// tiles are fully masked).
inline constexpr int64_t kTkgFaTilesPerCore = 2;
// Largest per-core s_prior without FA in the declared domain: 32768, where every shape the
// relations allow fits trn2's SBUF (k_sb is 2 s_prior bytes per partition next to 7 n * bqh
// bytes of scores; `ncverify frontier` finds each shape's own limit beyond it). The source's own
// limit is 65536: the row-sum PSUM tile [bqh, n] fp32 holds n = s_prior / 128 <= 512 columns in
// one 2 KiB bank (_tile_sum_reduction, line 2569).
inline constexpr int64_t kTkgMaxNoFaSprior = 32768;
// _BATCH_TILE_SBUF_BUDGET = 16 MiB (utils line 30): uses_batch_tiling splits the batch when
// 8 * bs * H * s_a * tile_s_prior exceeds it; the modelled domain keeps one batch tile.
inline constexpr int64_t kTkgBatchTileBudget = int64_t{16} << 20;
// MM1's PSUM group: 4 key tiles of [128, H*s_a] fp32 fit one bank for every H*s_a <= 128 (the
// source's group is min(32, 512 // (H*s_a)) tiles, line 1901; the IR divides by constants only).
inline constexpr int64_t kTkgMm1GroupTiles = 4;

enum class TkgLnc : uint8_t { one, sprior, batch };
enum class TkgMask : uint8_t { hbm, pos_id };

struct TkgConfig {
  TkgLnc lnc = TkgLnc::one;
  bool strided_mm1 = true;  // AttnTKGConfig.strided_mm1 (default True)
  TkgMask mask = TkgMask::hbm;
  bool sink = false;
  DType kv_dtype = DType::bf16;  // k_prior, v_prior, k_active, v_active
  bool fa = false;               // enable_fa_s_prior_tiling with s_prior per core > 8192
  // q's dtype, the source's io_type (atp.io_type = q.dtype, attention_tkg.py line 822): q in
  // SBUF, one_vec and the exp output qk_io_type that the row sum and PV take (line 1042)
  DType io_dtype = DType::bf16;
  DType out_dtype = DType::bf16;  // the output tensor the caller allocates (the test's dtype)
  // Block KV (AttnTKGConfig.block_len > 0): the table's block length, and the resize factor rf of
  // resize_cache_block_len_for_attention_tkg_kernel (attention_tkg_utils.py 240-329): the kernel
  // reads sub-blocks of block_len / rf rows. 0: a flat cache.
  int64_t block_len = 0;
  int64_t block_resize = 1;
  bool swa = false;  // sliding window: start_pos_ids [B, s_a] (gen_mask_tkg's SWA path)
  // AttnTKGConfig.out_in_sb: the kernel leaves the output in an SBUF tensor [d, B*H*s_a] (io)
  // that the test wrapper DMAs to HBM as it is (test_attention_tkg.py lines 130-135, 204-208).
  bool out_in_sb = false;
  bool block() const { return block_len > 0; }
  int64_t kernel_block_len() const { return block_len / block_resize; }
  int n_programs() const { return lnc == TkgLnc::one ? 1 : 2; }
  int sprior_programs() const { return lnc == TkgLnc::sprior ? 2 : 1; }
  int batch_programs() const { return lnc == TkgLnc::batch ? 2 : 1; }
};

std::vector<OptionSpec> attention_tkg_options();
TkgConfig attention_tkg_config(const Options& o);
// Why a combination is not offered ("" when it is).
std::string attention_tkg_excluded(const Options& o);
Program build_attention_tkg(const Options& o);

}  // namespace ncv::kernels
