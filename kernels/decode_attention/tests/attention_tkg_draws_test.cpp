// The oracle-side draws of attention_tkg's sliding-window and block-KV configurations
// (attention_tkg_draws.h): windows as kv_cache ranges (the same cached slots as the kernel's
// window, wrapping or not, positions past the cached length included), block tables with
// distinct blocks where it matters and stale entries into other batches' blocks, and the stale
// active rows of the physical cache.
#include "kernels/decode_attention/attention_tkg_draws.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/decode_attention/gen_mask_tkg_swa.h"

namespace ncv::kernels::tkg {
namespace {

oracle::AttentionSpec decode_spec(int64_t batch, int64_t s_active, int64_t slots) {
  oracle::AttentionSpec s;
  s.batch = batch;
  s.heads = 2;
  s.seqlen_q = s_active;
  s.seqlen_kv = slots;
  s.d_head = 4;
  return s;
}

TEST(AttentionTkgDraws, SwaStartsFollowBuildSwaPositions) {
  EXPECT_EQ(swa_start(300, 128, 1024, false), 173);
  EXPECT_EQ(swa_start(10, 128, 1024, false), 1024 + 10 - 127);  // circular: wraps
  EXPECT_EQ(swa_start(10, 128, 1024, true), 0);                 // linear: clamped
  EXPECT_EQ(swa_start(127, 128, 1024, false), 0);
}

TEST(AttentionTkgDraws, CacheRangesSelectTheKernelsCachedSlots) {
  // Every window (start, end) over S = 64 slots, 5 of them active: the oracle's range must keep
  // exactly the cached slots the kernel's window keeps.
  const int64_t S = 64, cached = 59;
  for (int64_t start = 0; start < S; ++start) {
    for (int64_t end = 0; end < S + 4; ++end) {
      const auto [lo, hi] = cache_range_of_window(start, end, cached);
      ASSERT_GE(lo, 0);
      ASSERT_LE(hi, cached);
      for (int64_t j = 0; j < cached; ++j) {
        const bool oracle = lo <= hi ? (j >= lo && j < hi) : (j >= lo || j < hi);
        ASSERT_EQ(oracle, swa_keeps(j, start, end)) << start << " " << end << " " << j;
      }
    }
  }
}

TEST(AttentionTkgDraws, SwaMaskMatchesTheWindowsForFlatAndBlockCaches) {
  for (bool block : {false, true}) {
    oracle::AttentionSpec s = decode_spec(3, 4, 512);
    // base positions: near the start (wraps on the flat cache), middle, at the cached end (the
    // last queries' positions pass the cached length).
    const std::vector<int64_t> base{5, 300, 508};
    const SwaPositions k = set_swa_mask(s, base, 128, block);
    ASSERT_NO_THROW(s.validate());
    bool wrapped = false;
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t end = base[static_cast<size_t>(b)] + i;
        const int64_t start = swa_start(end, 128, 512, block);
        wrapped |= start > end;
        const size_t q = static_cast<size_t>(b * 4 + i);
        for (int64_t j = 0; j < 508; ++j) {
          ASSERT_EQ(s.visible(b, i, j), swa_keeps(j, start, end)) << block << b << i << j;
          ASSERT_EQ(s.visible(b, i, j), swa_keeps(j, k.start[q], k.end[q]));
        }
        for (int64_t a = 0; a < 4; ++a) EXPECT_EQ(s.visible(b, i, 508 + a), a <= i);
      }
    }
    EXPECT_EQ(wrapped, !block);  // flat caches wrap at base 5, block caches never do
  }
}

TEST(AttentionTkgDraws, BlockTablesAreShuffledDistinctAndAliasStaleBlocks) {
  oracle::AttentionSpec s = decode_spec(3, 5, 2048);
  set_swa_mask(s, {100, 1000, 2043}, 256, true);
  std::mt19937_64 rng(3);
  const int64_t bl = 16, per = 2048 / bl, nblk = 4 * per;
  s.block_kv = draw_block_table(s, bl, nblk, rng);
  ASSERT_NO_THROW(s.validate());
  const auto& t = s.block_kv->table;
  std::set<int64_t> used;
  int64_t stale = 0, aliased = 0;
  std::vector<std::set<int64_t>> own(3);
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t L = 0; L < per; ++L) {
      bool matters = L * bl + bl > 2048 - 5;
      for (int64_t i = 0; i < 5; ++i) {
        for (int64_t j = L * bl; j < L * bl + bl; ++j) matters |= s.visible(b, i, j);
      }
      const int64_t e = t[static_cast<size_t>(b * per + L)];
      if (matters) {
        EXPECT_TRUE(used.insert(e).second) << "block " << e << " given twice";
        own[static_cast<size_t>(b)].insert(e);
      }
    }
  }
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t L = 0; L < per; ++L) {
      const int64_t e = t[static_cast<size_t>(b * per + L)];
      if (own[static_cast<size_t>(b)].count(e)) continue;
      ++stale;
      for (int64_t o = 0; o < 3; ++o) aliased += o != b && own[static_cast<size_t>(o)].count(e);
    }
  }
  EXPECT_GT(stale, 0);
  EXPECT_EQ(aliased, stale);  // every stale entry names another batch's block
  EXPECT_LT(static_cast<int64_t>(used.size()), nblk);  // spare blocks stay unused
  // Not the identity: some batch's blocks are out of order.
  bool shuffled = false;
  for (size_t e = 1; e < t.size(); ++e) shuffled |= t[e] != t[e - 1] + 1;
  EXPECT_TRUE(shuffled);
}

TEST(AttentionTkgDraws, StaleActiveRowsNegatesOnlyActiveRows) {
  oracle::AttentionSpec s = decode_spec(2, 3, 256);
  set_swa_mask(s, {10, 200}, 64, true);
  std::mt19937_64 rng(5);
  s.block_kv = draw_block_table(s, 16, 3 * 16, rng);
  std::vector<double> phys(static_cast<size_t>(s.kv_elements()));
  for (size_t e = 0; e < phys.size(); ++e) phys[e] = static_cast<double>(e + 1);
  const std::vector<double> st = stale_active_rows(s, phys);
  int64_t changed = 0;
  for (size_t e = 0; e < phys.size(); ++e) changed += st[e] != phys[e];
  EXPECT_EQ(changed, 2 * 3 * 4);  // batches x active keys x d_head
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t a = 0; a < 3; ++a) {
      const auto at = static_cast<size_t>(s.kv_index(b, 0, 253 + a, 0));
      EXPECT_EQ(st[at], -phys[at]);
    }
  }
}

TEST(AttentionTkgDraws, PerCaseWindowsAndTablesAreValidAndVaried) {
  std::set<int64_t> windows;
  bool wrapped = false;
  for (bool block : {false, true}) {
    for (uint64_t seed = 0; seed < 12; ++seed) {
      oracle::AttentionSpec s = decode_spec(2, 3, 4096);
      set_swa_mask(s, {1000, 7}, 128, block);
      s.mask.window = 128;
      if (block) set_block_kv(s, 16, 99);
      // the positions a check case drew (Variant::draw_case runs the positions first)
      s.mask.cache_end = {int64_t(seed * 300), int64_t(seed * 300), int64_t(seed * 300), 5, 5, 5};
      draw_window_and_table(s, seed);
      ASSERT_NO_THROW(s.validate()) << seed;
      windows.insert(s.mask.window);
      EXPECT_EQ(s.block_kv.has_value(), block);
      if (block) {
        EXPECT_EQ(s.block_kv->num_blocks, kBlockCacheSlots / 16);
      }
      for (size_t q = 0; q < s.mask.cache_begin.size(); ++q) {
        wrapped |= s.mask.cache_begin[q] > s.mask.cache_end[q];
        if (block) {
          EXPECT_LE(s.mask.cache_begin[q], s.mask.cache_end[q]);
        }
      }
    }
  }
  EXPECT_TRUE(wrapped);
  EXPECT_GE(windows.size(), 6u);
}

TEST(AttentionTkgDraws, BlockMaskRowsAreTheTilesSlots) {
  // Two tiles of 2048 slots with blocks of 8: rows t·128 + p of each tile hold slot
  // fold·1024 + p·8 + j; every slot once.
  std::set<int64_t> seen;
  for (int64_t r = 0; r < 4096; ++r) {
    const int64_t slot = block_mask_row_slot(r, 2048, 8);
    EXPECT_EQ(slot / 2048, r / 2048);
    seen.insert(slot);
  }
  EXPECT_EQ(seen.size(), 4096u);
  EXPECT_EQ(block_mask_row_slot(1 * 128 + 5, 2048, 8), 5 * 8 + 1);
  EXPECT_EQ(block_mask_row_slot(2048 + 9 * 128 + 2, 2048, 8), 2048 + 1024 + 2 * 8 + 1);
}

}  // namespace
}  // namespace ncv::kernels::tkg
