// Per-case data of attention_tkg's paged-cache and sliding-window configurations, on the
// oracle's side: the kv_cache mask of a sliding window over a circular (flat) or linear (block)
// cache, block tables shaped like the nki-library test's, and the physical cache the kernel
// reads (aws-neuron/nki-library d2ad3a5, test/integration/nkilib/core/attention/
// test_attention_tkg_utils.py build_swa_positions 127–156, gen_deterministic_active_block_table
// 89–97).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "model/interp/host_tensor.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"
#include "oracle/attention_spec.h"

namespace ncv::kernels::tkg {

// The window of a query at position `end` (exclusive) with window length W over a cache of S
// slots (build_swa_positions): start = (end − W + 1) mod S for a flat circular cache, max(0,
// end − W + 1) for a block cache (its table is linear).
int64_t swa_start(int64_t end, int64_t window, int64_t slots, bool block_cache);

// The kernel's SWA window [start, end) over slots [0, S) — wrapping to [start, S) ∪ [0, end) when
// start > end (gen_mask_tkg_swa.h) — restricted to the `cached` = S − s_active prior slots, as the
// oracle's kv_cache range (cache_begin, cache_end) (the active slots' mask comes from the active
// mask, not from the window): the same set of cached slots.
std::pair<int64_t, int64_t> cache_range_of_window(int64_t start, int64_t end, int64_t cached);

// spec.mask = kv_cache for sliding windows of length W: query i of batch b sits at position
// base_pos[b] + i (build_swa_positions: pos = pos_id[b] + i), its window is
// [swa_start(pos), pos). Also returns the kernel's inputs that reproduce it: the window ends and
// starts [batch][seqlen_q] to feed as rope_pos_ids and start_pos_ids, clamped into [0, cached]
// (cache_range_of_window's values, which select the same cached slots; the source's positions
// may exceed the cached length, which only touches active slots the active mask overwrites).
struct SwaPositions {
  std::vector<int64_t> end, start;  // [batch][seqlen_q]
};
SwaPositions set_swa_mask(oracle::AttentionSpec& spec, const std::vector<int64_t>& base_pos,
                          int64_t window, bool block_cache);
// The kernel's (start, end) inputs of a kv_cache mask (the ranges themselves: a wrapping range
// is the kernel's wrapping window, a plain one its plain window).
SwaPositions swa_inputs_of(const oracle::AttentionSpec& spec);

// A block table for spec (its mask decides which logical blocks matter) with `block_len` and
// `num_blocks` physical blocks: every logical block of a batch that holds a key some query of that
// batch sees, or an active slot, gets its own physical block (a random permutation: no batch's
// blocks are consecutive or in order); every other entry (a block only of stale, masked slots —
// the nki-library test sets those entries to 0, a block another batch uses) points at a block
// another batch uses (at a spare block when there is no other batch). The physical blocks left
// over stay unused (their contents are whatever the input distribution put there). Throws
// std::invalid_argument when num_blocks cannot hold the distinct blocks.
oracle::BlockKv draw_block_table(const oracle::AttentionSpec& spec, int64_t block_len,
                                 int64_t num_blocks, std::mt19937_64& rng);

// The physical cache [num_blocks][1][bl][d] the kernel's HBM k_prior / v_prior holds: `physical`
// (AttentionInputs::k or ::v of a block_kv spec) with the rows of the active slots (the last
// seqlen_q keys of every batch) negated — the kernel must take those keys from k_active /
// v_active, and a kernel that reads them from the cache instead sees different values.
std::vector<double> stale_active_rows(const oracle::AttentionSpec& spec,
                                      std::vector<double> physical);

// The physical cache of attention_tkg's block-KV programs holds this many slots
// (num_blocks = kBlockCacheSlots / block_len) whatever the shape: the IR's indirect offsets have a
// build-time declared range, which the solver must prove inside the cache, so the cache cannot
// grow with the params; the domain requires bs · seqlen <= kBlockCacheSlots (a distinct block for
// every batch's block).
inline constexpr int64_t kBlockCacheSlots = 32768;

// spec.block_kv for the block length of the source's table (block_size = block_len, num_blocks =
// kBlockCacheSlots / block_len), drawn by draw_block_table from `seed` for spec's mask.
void set_block_kv(oracle::AttentionSpec& spec, int64_t block_len, uint64_t seed);

// Per-case draws (Variant::draw_case, after the positions): a spec whose kv_cache mask records a
// sliding window (mask.window > 0) gets a window length drawn from `seed` — the source's test
// windows 128, 256, 512, a short one, one beyond the cache, or uniform in [1, S] — and its ranges
// rebuilt around the case's base positions (cache_end of each batch's first query); a block-KV
// spec then gets a new table over its own num_blocks physical blocks.
void draw_window_and_table(oracle::AttentionSpec& spec, uint64_t seed);

// Layout::pack_extra parts for block KV and SWA (attention_tkg_variant.cpp):
// - the paged cache: "k_prior" / "v_prior" (declared [num_blocks·rf, block_len / rf, d], the same
//   bytes as the spec's [num_blocks][1][block_len][d]) from stale_active_rows, and
//   "active_blocks_table" [B, S / block_len] uint32 = spec.block_kv->table;
// - the window: "rope_pos_ids" and "start_pos_ids" [1, B, s_a] fp32 = swa_inputs_of(spec).
void pack_block_cache(const Program& p, const ParamValues& params,
                      const oracle::AttentionSpec& spec, const oracle::AttentionInputs& in,
                      std::map<std::string, HostTensor>& packed);
void pack_window_positions(const Program& p, const ParamValues& params,
                           const oracle::AttentionSpec& spec,
                           std::map<std::string, HostTensor>& packed);

// The slot of row R of the HBM mask [S, B, H, s_a] under the block layout: the kernel loads the
// rows of each s_prior tile of `tile_slots` slots as tile-local row t·128 + p into (p, t)
// (attention_tkg.py 1449–1455), and (p, t) holds slot fold·128·bl + p·bl + j (t = fold·bl + j)
// of the tile; bl is the (resized) block length.
int64_t block_mask_row_slot(int64_t row, int64_t tile_slots, int64_t block_len);

}  // namespace ncv::kernels::tkg
