// gen_mask_tkg (nki-library src/nkilib_src/nkilib/core/attention/gen_mask_tkg.py
// @d2ad3a579498d1888aa8740af97fd325dd5f2740): the decode kernel's in-kernel mask. A key slot's
// visibility for one FA tile of one core, written into mask_out [128, n, bs, H, s_a] uint8 in the
// kernel's slot order (flat strided: slot = base + p * n + t; flat non-strided: base + t * 128 +
// p), from the positions broadcast to every partition: prior slot j is visible to every query of
// batch b iff j < pos[b, 0] (the standard path, lines 380-423); the active tail comes from the
// HBM active mask [s_a, B, H, s_a] (lines 600-681). Sliding windows and block KV are extension
// points (the SWA comparison replaces the standard path; the block iota replaces the flat one:
// gen_mask_tkg_swa.h).
#pragma once

#include <optional>
#include <string>

#include "model/ir/builder.h"

namespace ncv::kernels {

struct GenMaskTkgArgs {
  Access pos_ids;  // [128, bs, s_a] fp32 positions of this tile's batches, equal on every partition
  TensorRef mask_out;  // [128, n, bs, H, s_a] uint8
  Expr n, bs, q_head, s_active;
  // sprior_prg_id * s_prior_per_shard + s_prior_offset (_generate_iota_tensor line 325)
  Expr iota_base;
  bool strided_mm1 = true;
  // Block KV: the kernel's (resized) block length, the block iota (lines 326-348) and the block
  // placement of the active mask (684-743) replacing the flat ones (gen_mask_tkg_swa.h,
  // attention_tkg_block_kv.h); 0: a flat cache.
  int64_t block_len = 0;
  // Sliding window (start_pos given, lines 417-540): [128, bs, s_a] fp32 window starts, the
  // window ends being pos_ids[b, i] (per query); replaces the standard path.
  std::optional<Access> start_pos;
  std::string name_suffix;  // appended to the buffers' names (one call per FA tile)
  // The HBM active mask [s_a, B, H, s_a] and the first global batch of this tile; loaded only
  // where `active_trips` is 1 (the last core's last FA tile), 0 elsewhere.
  std::optional<TensorRef> active_mask;
  Expr batch_start;
  Expr active_trips = Expr(1);
};

// Emits gen_mask_tkg's standard path into `b` (a scope of its own buffers).
void gen_mask_tkg(Builder& b, const GenMaskTkgArgs& a);

}  // namespace ncv::kernels
