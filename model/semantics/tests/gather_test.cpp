// The gathers and the stream shuffle against the pages' descriptions written out here as plain
// loops, in both execution modes: local_gather's partition-first index order per 16-partition
// group, num_valid_indices and num_elem_per_idx; the shuffle's quadrants, in-place use and the
// 255 entry; gather_flattened's flattened free dims and dtype conversion; and an index outside
// its source reported with nothing written.
#include <gtest/gtest.h>

#include <vector>

#include "model/semantics/semantics.h"
#include "model/semantics/tests/dense_tile.h"
#include "model/semantics/tests/test_values.h"

namespace ncv {
namespace {

using namespace semtest;  // NOLINT

const ExecMode kModes[] = {ExecMode::fast, ExecMode::reference};

void fill(Tile& t, Rng& rng) {
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) t.set(r, c, static_cast<float>(rng.real(-100, 100)));
  }
}

// Two GpSimd cores (32 partitions), 3 indices per partition (48 per core), E elements each.
TEST(Gather, LocalGatherReadsEachCoresIndicesPartitionFirst) {
  for (ExecMode mode : kModes) {
    for (int64_t e : {1, 2, 8}) {
      for (int64_t valid : {0, 40}) {
        Rng rng(7 + e);
        Tile src(DType::fp32, 32, 64), index(DType::uint16, 32, 3);
        fill(src, rng);
        for (int64_t r = 0; r < 32; ++r) {
          for (int64_t c = 0; c < 3; ++c) index.set(r, c, static_cast<float>(rng.uni(0, 64 - e)));
        }
        const int64_t n = valid ? valid : 48;
        Tile dst(DType::fp32, 32, n * e);
        ASSERT_FALSE(exec_local_gather(mode, dst.view(), src.view(), index.view(), e, valid));
        for (int64_t r = 0; r < 32; ++r) {
          const int64_t g = r / 16 * 16;
          for (int64_t j = 0; j < n; ++j) {
            // indices_1d[j]: partition g + j % 16, element j / 16 (the core's slice, "F" order).
            const auto at = static_cast<int64_t>(index.get(g + j % 16, j / 16));
            for (int64_t k = 0; k < e; ++k) {
              ASSERT_EQ(dst.raw(r, j * e + k), src.raw(r, at + k)) << r << " " << j << " " << k;
            }
          }
        }
      }
    }
  }
}

TEST(Gather, LocalGatherPastTheRowIsAMissAndWritesNothing) {
  for (ExecMode mode : kModes) {
    Tile src(DType::bf16, 16, 10), index(DType::uint16, 16, 1), dst(DType::bf16, 16, 32);
    for (int64_t r = 0; r < 16; ++r) index.set(r, 0, 4.0f);
    index.set(5, 0, 9.0f);  // elements 9 and 10 of a 10-element row: one past the end
    for (int64_t r = 0; r < 16; ++r) {
      for (int64_t c = 0; c < 32; ++c) dst.set(r, c, 3.0f);
    }
    auto miss = exec_local_gather(mode, dst.view(), src.view(), index.view(), 2, 0);
    ASSERT_TRUE(miss);
    EXPECT_EQ(miss->row, 5);
    EXPECT_EQ(miss->position, 0);
    EXPECT_EQ(miss->index, 9);
    EXPECT_EQ(miss->limit, 10);
    for (int64_t c = 0; c < 32; ++c) EXPECT_EQ(dst.get(0, c), 3.0f);
    // The last pair that fits is no miss.
    index.set(5, 0, 8.0f);
    EXPECT_FALSE(exec_local_gather(mode, dst.view(), src.view(), index.view(), 2, 0));
  }
}

TEST(Gather, StreamShuffleMovesPartitionsWithinEachQuadrant) {
  for (ExecMode mode : kModes) {
    Rng rng(3);
    std::vector<int64_t> rotate(32);
    for (int64_t i = 0; i < 32; ++i) rotate[i] = (i + 31) % 32;
    // In place over four quadrants: every quadrant rotates by one, from the old values.
    Tile a(DType::fp32, 128, 5);
    fill(a, rng);
    Tile before = a;
    exec_stream_shuffle(mode, a.view(), a.view(), rotate);
    for (int64_t r = 0; r < 128; ++r) {
      const int64_t from = r / 32 * 32 + (r % 32 + 31) % 32;
      for (int64_t c = 0; c < 5; ++c) ASSERT_EQ(a.raw(r, c), before.raw(from, c)) << r;
    }
    // A broadcast of one partition, and 255 entries that leave their partitions alone.
    Tile one(DType::fp32, 1, 5), dst(DType::fp32, 32, 5);
    fill(one, rng);
    fill(dst, rng);
    Tile old = dst;
    std::vector<int64_t> mask(32, 0);
    mask[3] = mask[30] = kShuffleKeep;
    exec_stream_shuffle(mode, dst.view(), one.view(), mask);
    for (int64_t r = 0; r < 32; ++r) {
      for (int64_t c = 0; c < 5; ++c) {
        ASSERT_EQ(dst.raw(r, c), mask[r] == kShuffleKeep ? old.raw(r, c) : one.raw(0, c));
      }
    }
    EXPECT_EQ(shuffle_source_row(rotate, 33), 32);
    EXPECT_EQ(shuffle_source_row(mask, 35), -1);
  }
}

TEST(Gather, GatherFlattenedTakesAlongTheFlattenedRowAndConverts) {
  for (ExecMode mode : kModes) {
    Rng rng(11);
    Tile data(DType::fp32, 8, 24), indices(DType::uint32, 8, 10);
    fill(data, rng);
    for (int64_t r = 0; r < 8; ++r) {
      for (int64_t c = 0; c < 10; ++c) indices.set(r, c, static_cast<float>(rng.uni(0, 23)));
    }
    Tile same(DType::fp32, 8, 10), narrow(DType::bf16, 8, 10);
    ASSERT_FALSE(exec_gather_flattened(mode, same.view(), data.view(), indices.view()));
    ASSERT_FALSE(exec_gather_flattened(mode, narrow.view(), data.view(), indices.view()));
    for (int64_t r = 0; r < 8; ++r) {
      for (int64_t c = 0; c < 10; ++c) {
        const auto k = static_cast<int64_t>(indices.get(r, c));
        ASSERT_EQ(same.raw(r, c), data.raw(r, k));
        ASSERT_EQ(narrow.raw(r, c), encode_from_float(DType::bf16, data.get(r, k)));
      }
    }
    indices.set(6, 2, 24.0f);  // one past the row
    auto miss = exec_gather_flattened(mode, same.view(), data.view(), indices.view());
    ASSERT_TRUE(miss);
    EXPECT_EQ(miss->row, 6);
    EXPECT_EQ(miss->position, 2);
    EXPECT_EQ(miss->index, 24);
    EXPECT_EQ(miss->limit, 24);
  }
}

}  // namespace
}  // namespace ncv
