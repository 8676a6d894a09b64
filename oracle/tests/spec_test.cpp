// AttentionSpec: validation errors name the offending field; mask semantics as oracle/README.md
// defines them; indexing with GQA and a paged KV cache.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "oracle/attention_spec.h"

namespace ncv::oracle {
namespace {

AttentionSpec base() {
  AttentionSpec s;
  s.batch = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.seqlen_q = 3;
  s.seqlen_kv = 5;
  s.d_head = 4;
  s.scale = 0.5;
  return s;
}

std::string error_path(const AttentionSpec& s) {
  try {
    s.validate();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find(e.path + ": "), std::string::npos) << e.what();
    return e.path;
  }
  return "<valid>";
}

TEST(SpecValidate, AcceptsBase) {
  EXPECT_EQ(error_path(base()), "<valid>");
}

TEST(SpecValidate, Shapes) {
  for (const char* f : {"batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "d_head"}) {
    AttentionSpec s = base();
    int64_t* field = std::string(f) == "batch"       ? &s.batch
                     : std::string(f) == "heads"     ? &s.heads
                     : std::string(f) == "kv_heads"  ? &s.kv_heads
                     : std::string(f) == "seqlen_q"  ? &s.seqlen_q
                     : std::string(f) == "seqlen_kv" ? &s.seqlen_kv
                                                     : &s.d_head;
    *field = 0;
    EXPECT_EQ(error_path(s), f);
    *field = -3;
    EXPECT_EQ(error_path(s), f);
    *field = int64_t{1} << 40;
    EXPECT_EQ(error_path(s), f);
  }
  AttentionSpec s = base();
  s.kv_heads = 3;
  EXPECT_EQ(error_path(s), "kv_heads");
  s = base();
  s.seqlen_q = s.seqlen_kv = s.d_head = int64_t{1} << 20;  // product overflows the limit
  EXPECT_EQ(error_path(s), "q");
  s = base();
  s.scale = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_path(s), "scale");
  s = base();
  s.input_dtype = DType::int32;
  EXPECT_EQ(error_path(s), "input_dtype");
}

TEST(SpecValidate, Masks) {
  AttentionSpec s = base();
  s.mask.kind = MaskKind::sliding_window;
  s.mask.window = 0;
  EXPECT_EQ(error_path(s), "mask.window");
  s.mask.window = 1;
  EXPECT_EQ(error_path(s), "<valid>");
  s.mask = {};
  s.mask.kind = MaskKind::explicit_mask;
  s.mask.allowed.assign(14, 1);
  EXPECT_EQ(error_path(s), "mask.allowed");
  s.mask.allowed.assign(15, 1);
  EXPECT_EQ(error_path(s), "<valid>");
  s.mask = {};
  s.mask.kind = MaskKind::position_ids;
  s.mask.pos.assign(5, 0);
  EXPECT_EQ(error_path(s), "mask.pos");
  s.mask.pos.assign(6, 0);
  EXPECT_EQ(error_path(s), "<valid>");
  s.mask.pos[4] = int64_t{1} << 50;
  EXPECT_EQ(error_path(s), "mask.pos[1][1]");
}

TEST(SpecValidate, SinkRopeBlockTable) {
  AttentionSpec s = base();
  s.sink = {0, 1, 2};
  EXPECT_EQ(error_path(s), "sink");
  s.sink = {0, 1, std::nan(""), 2};
  EXPECT_EQ(error_path(s), "sink[2]");
  s = base();
  s.rope = Rope{10000.0, std::vector<int64_t>(6, 0), std::vector<int64_t>(10, 0)};
  EXPECT_EQ(error_path(s), "<valid>");
  s.rope->pos_k.pop_back();
  EXPECT_EQ(error_path(s), "rope.pos_k");
  s.rope->pos_k.push_back(0);
  s.rope->pos_q.push_back(0);
  EXPECT_EQ(error_path(s), "rope.pos_q");
  s.rope->pos_q.pop_back();
  s.rope->theta = 0;
  EXPECT_EQ(error_path(s), "rope.theta");
  s.rope->theta = 10000;
  s.d_head = 3;
  EXPECT_EQ(error_path(s), "rope");

  s = base();
  s.seqlen_kv = 6;
  s.block_kv = BlockKv{4, 3, {0, 1, 2, 0}};
  EXPECT_EQ(error_path(s), "block_table.block_size");  // 6 % 4 != 0
  s.block_kv->block_size = 3;
  EXPECT_EQ(error_path(s), "<valid>");
  s.block_kv->table[3] = 3;
  EXPECT_EQ(error_path(s), "block_table.table[1][1]");
  s.block_kv->table[3] = -1;
  EXPECT_EQ(error_path(s), "block_table.table[1][1]");
  s.block_kv->table.pop_back();
  EXPECT_EQ(error_path(s), "block_table.table");
  s.block_kv->table.push_back(0);
  s.block_kv->num_blocks = 0;
  EXPECT_EQ(error_path(s), "block_table.num_blocks");
}

TEST(SpecVisible, CausalIsBottomRight) {
  AttentionSpec s = base();  // Sq = 3, Skv = 5: query i sees keys j <= i + 2
  s.mask.kind = MaskKind::causal;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(s.visible(0, i, j), j <= i + 2) << i << "," << j;
  }
  EXPECT_TRUE(s.visible(1, 2, 4));  // last query sees last key
  EXPECT_FALSE(s.visible(1, 0, 3));
}

TEST(SpecVisible, SlidingWindow) {
  AttentionSpec s = base();
  s.mask.kind = MaskKind::sliding_window;
  s.mask.window = 2;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(s.visible(0, i, j), j <= i + 2 && j > i) << i << "," << j;
    }
  }
}

TEST(SpecVisible, ExplicitAndPositionIds) {
  AttentionSpec s = base();
  s.mask.kind = MaskKind::explicit_mask;
  s.mask.allowed.assign(15, 0);
  s.mask.allowed[1 * 5 + 3] = 1;
  EXPECT_TRUE(s.visible(1, 1, 3));
  EXPECT_FALSE(s.visible(1, 1, 2));
  s.mask = {};
  s.mask.kind = MaskKind::position_ids;
  s.mask.pos = {0, 2, -1, 4, 4, 4};
  EXPECT_TRUE(s.visible(0, 0, 0));
  EXPECT_FALSE(s.visible(0, 0, 1));
  EXPECT_TRUE(s.visible(0, 1, 2));
  EXPECT_FALSE(s.visible(0, 1, 3));
  for (int64_t j = 0; j < 5; ++j) EXPECT_FALSE(s.visible(0, 2, j));  // fully masked row
  for (int64_t j = 0; j < 5; ++j) EXPECT_TRUE(s.visible(1, 0, j));
}

// visible_range is the contiguous form of visible(): same keys for every contiguous mask kind,
// including windows wider than the row, windows entirely before key 0, positions past the end.
TEST(SpecVisible, RangeMatchesVisibleForContiguousMasks) {
  AttentionSpec s = base();  // batch 2, Sq = 3, Skv = 5
  auto expect_same = [&](const char* what) {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        const auto range = s.visible_range(b, i);
        ASSERT_TRUE(range.has_value()) << what;
        for (int64_t j = 0; j < s.seqlen_kv; ++j) {
          EXPECT_EQ(s.visible(b, i, j), j >= range->first && j < range->second)
              << what << " b=" << b << " i=" << i << " j=" << j;
        }
      }
    }
  };
  expect_same("none");
  s.mask.kind = MaskKind::causal;
  s.seqlen_q = 7;  // more queries than keys: the first rows are fully masked
  expect_same("causal Sq > Skv");
  s.seqlen_q = 3;
  s.mask.kind = MaskKind::sliding_window;
  for (int64_t w : {1, 2, 5, 100}) {
    s.mask.window = w;
    expect_same("sliding_window");
  }
  s.mask = {};
  s.mask.kind = MaskKind::position_ids;
  s.mask.pos = {-5, 0, 9, 4, 2, -1};
  expect_same("position_ids");
  s.mask = {};
  s.mask.kind = MaskKind::explicit_mask;
  s.mask.allowed.assign(15, 1);
  EXPECT_FALSE(s.visible_range(0, 0).has_value());
}

TEST(SpecVisible, KvCacheRangesAndCausalActiveTail) {
  AttentionSpec s;
  s.batch = 2;
  s.seqlen_q = 2;    // two active tokens: keys 8 and 9
  s.seqlen_kv = 10;  // eight cached keys 0..7
  s.mask.kind = MaskKind::kv_cache;
  // Batch 0: cached [0, 3) for both queries (stale keys 3..7). Batch 1: a window wrapping the
  // circular cache, [6, 8) and [0, 2) for query 0; an empty range for query 1.
  s.mask.cache_begin = {0, 0, 6, 4};
  s.mask.cache_end = {3, 3, 2, 4};
  ASSERT_NO_THROW(s.validate());
  auto keys = [&](int64_t b, int64_t i) {
    std::vector<int64_t> out;
    s.visible_keys(b, i, out);
    return out;
  };
  EXPECT_EQ(keys(0, 0), (std::vector<int64_t>{0, 1, 2, 8}));
  EXPECT_EQ(keys(0, 1), (std::vector<int64_t>{0, 1, 2, 8, 9}));
  EXPECT_EQ(keys(1, 0), (std::vector<int64_t>{0, 1, 6, 7, 8}));
  EXPECT_EQ(keys(1, 1), (std::vector<int64_t>{8, 9}));
  EXPECT_FALSE(s.visible_range(0, 0).has_value());
  s.mask.cache_end[1] = 9;  // beyond the cached keys
  EXPECT_THROW(s.validate(), SpecError);
  s.mask.cache_end[1] = 3;
  s.seqlen_q = 11;
  EXPECT_THROW(s.validate(), SpecError);
}

TEST(SpecIndex, GqaAndPagedCache) {
  AttentionSpec s = base();
  EXPECT_EQ(s.group_size(), 2);
  EXPECT_EQ(s.kv_head_of(0), 0);
  EXPECT_EQ(s.kv_head_of(3), 1);
  EXPECT_EQ(s.q_index(1, 2, 1, 3), ((1 * 4 + 2) * 3 + 1) * 4 + 3);
  EXPECT_EQ(s.kv_index(1, 1, 4, 2), ((1 * 2 + 1) * 5 + 4) * 4 + 2);
  EXPECT_EQ(s.kv_elements(), 2 * 2 * 5 * 4);
  s.seqlen_kv = 6;
  s.block_kv = BlockKv{3, 5, {4, 0, 2, 1}};
  EXPECT_EQ(s.kv_elements(), 5 * 2 * 3 * 4);
  // batch 1, key 4: logical block 1 -> physical table[1][1] = 1, row 1
  EXPECT_EQ(s.kv_index(1, 1, 4, 2), ((1 * 2 + 1) * 3 + 1) * 4 + 2);
  EXPECT_EQ(s.kv_index(0, 0, 0, 0), (4 * 2 * 3) * 4);
}

}  // namespace
}  // namespace ncv::oracle
