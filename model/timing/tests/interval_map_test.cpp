// IntervalMap (interval_map.h): updates split pieces at their bounds and fill gaps, visits see
// exactly the pieces overlapping a range; checked against a per-key array on random updates.
#include "model/timing/interval_map.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ncv {
namespace {

// The values visit() reports over [b, e), in order.
std::vector<int> seen(const IntervalMap<int, int>& m, int b, int e) {
  std::vector<int> out;
  m.visit(b, e, [&](int v) { out.push_back(v); });
  return out;
}

TEST(IntervalMap, UpdateSplitsAtItsBoundsAndFillsGaps) {
  IntervalMap<int, int> m;
  m.update(10, 20, [](int& v) { v = 1; });
  m.update(15, 30, [](int& v) { v += 2; });  // [15, 20) had 1, [20, 30) is a gap
  EXPECT_EQ(m.pieces(), 3u);
  EXPECT_EQ(seen(m, 0, 100), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(seen(m, 0, 10), std::vector<int>{});
  EXPECT_EQ(seen(m, 19, 20), std::vector<int>{3});
  EXPECT_EQ(seen(m, 30, 40), std::vector<int>{});
  m.update(5, 5, [](int& v) { v = 9; });  // empty range: no piece
  EXPECT_EQ(m.pieces(), 3u);
}

TEST(IntervalMap, AgreesWithAPerKeyArrayOnRandomUpdates) {
  constexpr int kKeys = 64;
  std::mt19937 rng(7);
  IntervalMap<int, int> m;
  std::vector<int> ref(kKeys, 0);
  for (int step = 1; step <= 500; ++step) {
    int b = static_cast<int>(rng() % (kKeys + 1)), e = static_cast<int>(rng() % (kKeys + 1));
    if (b > e) std::swap(b, e);
    if (rng() % 2) {
      m.update(b, e, [&](int& v) { v = step; });
      for (int k = b; k < e; ++k) ref[k] = step;
    } else {
      // The largest value over [b, e) seen through visit equals the array's.
      int got = 0, want = 0;
      m.visit(b, e, [&](int v) { got = std::max(got, v); });
      for (int k = b; k < e; ++k) want = std::max(want, ref[k]);
      ASSERT_EQ(got, want) << "step " << step << " [" << b << ", " << e << ")";
    }
  }
  EXPECT_LE(m.pieces(), static_cast<size_t>(kKeys));
}

}  // namespace
}  // namespace ncv
