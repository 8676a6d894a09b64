// The interval shadow map against a tag-per-byte array under random writes and queries.
#include "model/interp/shadow_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace ncv {
inline namespace interp {
namespace {

struct ByteTags {
  int64_t parts, bytes;
  std::vector<uint32_t> tag;
  ByteTags(int64_t p, int64_t b) : parts(p), bytes(b), tag(static_cast<size_t>(p * b), 0) {}
  uint32_t& at(int64_t p, int64_t b) { return tag[static_cast<size_t>(p * bytes + b)]; }
};

std::vector<ByteRun> random_runs(std::mt19937& rng, int64_t bytes) {
  std::vector<ByteRun> runs;
  int64_t cur = std::uniform_int_distribution<int64_t>(0, bytes - 1)(rng);
  const int n = std::uniform_int_distribution<int>(1, 6)(rng);
  for (int k = 0; k < n && cur < bytes; ++k) {
    const int64_t len = std::uniform_int_distribution<int64_t>(1, 24)(rng);
    const int64_t end = std::min(bytes, cur + len);
    runs.push_back({cur, end});
    cur = end + std::uniform_int_distribution<int64_t>(0, 8)(rng);
  }
  return runs;
}

TEST(ShadowMap, MatchesATagPerByteUnderRandomWrites) {
  const int64_t parts = 8, bytes = 96;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    ShadowMap map(parts);
    ByteTags ref(parts, bytes);
    for (int op = 0; op < 60; ++op) {
      int64_t p0 = std::uniform_int_distribution<int64_t>(0, parts - 1)(rng);
      int64_t p1 = std::uniform_int_distribution<int64_t>(p0 + 1, parts)(rng);
      auto runs = random_runs(rng, bytes);
      const uint32_t stamp = std::uniform_int_distribution<uint32_t>(1, 4)(rng);
      if (rng() % 2) {
        map.write(p0, p1, runs, stamp);
        for (int64_t p = p0; p < p1; ++p) {
          for (const auto& r : runs) {
            for (int64_t b = r.begin; b < r.end; ++b) ref.at(p, b) = stamp;
          }
        }
        continue;
      }
      std::optional<ShadowMap::Mismatch> want;
      for (int64_t p = p0; p < p1 && !want; ++p) {
        for (const auto& r : runs) {
          for (int64_t b = r.begin; b < r.end && !want; ++b) {
            if (ref.at(p, b) != stamp) want = ShadowMap::Mismatch{p, b, ref.at(p, b)};
          }
          if (want) break;
        }
      }
      const auto got = map.find_other(p0, p1, runs, stamp);
      ASSERT_EQ(got.has_value(), want.has_value()) << "seed " << seed << " op " << op;
      if (want) {
        EXPECT_EQ(got->partition, want->partition) << "seed " << seed << " op " << op;
        EXPECT_EQ(got->byte, want->byte) << "seed " << seed << " op " << op;
        EXPECT_EQ(got->found, want->found) << "seed " << seed << " op " << op;
      }
      // others(): every distinct foreign stamp once, at its first byte in scan order.
      std::vector<ShadowMap::Mismatch> want_all, got_all;
      for (int64_t p = p0; p < p1; ++p) {
        for (const auto& r : runs) {
          for (int64_t b = r.begin; b < r.end; ++b) {
            const uint32_t f = ref.at(p, b);
            const bool seen =
                std::any_of(want_all.begin(), want_all.end(),
                            [&](const ShadowMap::Mismatch& m) { return m.found == f; });
            if (f != stamp && !seen) want_all.push_back({p, b, f});
          }
        }
      }
      map.others(p0, p1, runs, stamp, got_all);
      ASSERT_EQ(got_all.size(), want_all.size()) << "seed " << seed << " op " << op;
      for (size_t k = 0; k < want_all.size(); ++k) {
        EXPECT_EQ(got_all[k].found, want_all[k].found) << "seed " << seed << " op " << op;
      }
    }
    for (int64_t p = 0; p < parts; ++p) {
      ShadowMap::Gaps want;
      for (int64_t b = 0; b < bytes; ++b) {
        if (ref.at(p, b) != 0) continue;
        if (want.first < 0) want.first = b;
        want.count++;
      }
      const auto got = map.unwritten(p, bytes);
      EXPECT_EQ(got.count, want.count) << "seed " << seed << " partition " << p;
      EXPECT_EQ(got.first, want.first) << "seed " << seed << " partition " << p;
    }
  }
}

TEST(ShadowMap, IdenticalPartitionsShareOneBand) {
  ShadowMap map(128);
  map.write(0, 64, {{0, 512}}, 1);
  map.write(64, 128, {{0, 512}}, 1);
  EXPECT_EQ(map.num_bands(), 1u);
  map.write(32, 64, {{0, 4}}, 2);
  EXPECT_EQ(map.num_bands(), 3u);
  map.write(32, 64, {{0, 4}}, 1);
  EXPECT_EQ(map.num_bands(), 1u);
}

TEST(ShadowMap, ReportsTheFirstForeignByte) {
  ShadowMap map(4);
  map.write(0, 4, {{0, 64}}, 7);
  map.write(2, 3, {{10, 12}}, 9);
  auto m = map.find_other(0, 4, {{0, 8}, {9, 20}}, 7);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->partition, 2);
  EXPECT_EQ(m->byte, 10);
  EXPECT_EQ(m->found, 9u);
  auto u = map.find_other(0, 1, {{60, 70}}, 7);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->byte, 64);
  EXPECT_EQ(u->found, 0u);
}

}  // namespace
}  // namespace interp
}  // namespace ncv
