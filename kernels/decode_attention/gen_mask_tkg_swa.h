// nki-library gen_mask_tkg's slot indices for every KV-cache layout and its sliding-window (SWA)
// prior mask (aws-neuron/nki-library d2ad3a5, src/nkilib_src/nkilib/core/attention/
// gen_mask_tkg.py). attention_tkg lays the key slots of an
// s_prior tile on partitions p < 128 and tiles t < n; which slot sits at (p, t) depends on the
// cache layout, and the mask must agree with the K/V loads on it.
#pragma once

#include <cstdint>
#include <string>

#include "model/ir/builder.h"

namespace ncv::kernels::tkg {

inline constexpr int64_t kSlotPartitions = 128;  // TileConstants.p_max (attention_tkg_utils.py)

// The cache layout the slot indices follow (gen_mask_tkg.py _generate_iota_tensor, 292–365).
enum class SlotLayout : uint8_t {
  flat_strided,     // strided_mm1: slot = base + p·n + t
  flat_contiguous,  // not strided_mm1: slot = base + t·128 + p
  block,            // block KV: slot = base + fold·128·bl + p·bl + j, tile t = fold·bl + j
};

// The slot of partition p, tile t (host side, for packers and tests). n = tiles, bl = block_len
// (block layout only; n a multiple of bl).
int64_t slot_of(SlotLayout layout, int64_t block_len, int64_t n, int64_t base, int64_t p,
                int64_t t);

struct SlotIota {
  SlotLayout layout = SlotLayout::flat_strided;
  int64_t block_len = 0;  // block layout: the block length (static: a build option)
  Expr tiles;             // n: tiles of this s_prior tile (block: a multiple of block_len)
  Expr base;              // iota_base = s_prior shard · s_prior per shard + FA tile offset
  std::string suffix;     // appended to the names of the buffers it declares (one per FA tile)
};

// dst [128, n] or [128, n, 1] (fp32: the positions' dtype in the source's tests) = slot_of(...)
// at every (p, t): one iota for the flat contiguous layout, one per fold (a loop) for the block
// layout, as the source. The strided layout's channel multiplier n is a param here while the
// IR's is a build-time constant: base + t from one iota, plus p·n computed exactly in fp32 (values
// < 2^24) from two [128, 1] iotas and a multiply.
void emit_slot_iota(Builder& b, const Access& dst, const SlotIota& s);

// The SWA prior mask (gen_mask_tkg.py _create_batch_masks_swa, 417–540): for batch b < batches and
// query i < s_active, with start = start_pos[:, b·s_active + i] and end = pos[:, b·s_active + i]
// ([128, batches·s_active] columns, every partition holding the same value):
//   ge = iota >= start, lt = iota < end, normal = ge·lt, wrap = max(ge, lt),
//   is_wrap = start > end, final = normal + is_wrap·(wrap − normal),
// all fp32 in three [128, n] scratch tiles per batch, then copied (uint8) into
// mask_out[:, :, b, h, i] for every head h. So slot j is kept iff j ∈ [start, end), or, when the
// window wraps (start > end), j ≥ start or j < end.
struct SwaMask {
  Access iota;         // [128, n, 1] fp32 slot indices (emit_slot_iota)
  TensorRef mask_out;  // [128, n, batches, heads, s_active] uint8
  Access pos;          // [128, batches, s_active] fp32 window ends (exclusive)
  Access start;        // [128, batches, s_active] fp32 window starts (inclusive)
  Expr tiles, batches, heads, s_active;
  std::string suffix;  // appended to the scratch tiles' names (one call per FA tile)
  // The scratch tile the greater_equal writes ("swa_ge" + suffix): the catalogue's "window start
  // dropped" edit finds the comparison by it.
  static constexpr const char* kGeTile = "swa_ge";
};
void emit_swa_mask(Builder& b, const SwaMask& m);

// Reference of the mask above for one slot (host side): 1 when slot j is kept.
bool swa_keeps(int64_t j, int64_t start, int64_t end);

}  // namespace ncv::kernels::tkg
