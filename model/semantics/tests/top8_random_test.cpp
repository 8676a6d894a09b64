// Tests of the top-8 family (max8, nc_find_index8, nc_match_replace8) against computations
// written here from the ISA's own words (its NumPy equivalent for nc_match_replace8), and of the
// model's random draws (rand, dropout): range, reproducibility, independence of streams, and the
// drop rate a probability asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "model/numerics/dtype.h"
#include "model/semantics/random.h"
#include "model/semantics/tests/dense_tile.h"
#include "model/semantics/top8.h"

namespace ncv {
namespace {

using semtest::Tile;

Tile random_tile(int64_t rows, int64_t cols, uint32_t seed, int distinct_values) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(0, distinct_values - 1);
  Tile t(DType::fp32, rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t.set(r, c, static_cast<float>(d(g)) * 0.25f - 3.0f);
  }
  return t;
}

TEST(Top8Semantics, Max8IsTheEightLargestInDescendingOrder) {
  // Few distinct values, so rows hold duplicates: max8 keeps them (it selects values, not
  // distinct values).
  for (int distinct : {5, 1000}) {
    Tile src = random_tile(16, 100, 7u + static_cast<uint32_t>(distinct), distinct);
    Tile dst(DType::fp32, 16, 8);
    exec_max8(dst.view(), src.view());
    for (int64_t r = 0; r < 16; ++r) {
      std::vector<float> row;
      for (int64_t c = 0; c < 100; ++c) row.push_back(src.get(r, c));
      std::sort(row.begin(), row.end(), std::greater<float>());
      for (int k = 0; k < 8; ++k) EXPECT_EQ(dst.get(r, k), row[static_cast<size_t>(k)]) << r;
    }
  }
}

TEST(Top8Semantics, Max8OrdersPlusZeroAboveMinusZeroAndNaNFirst) {
  Tile src(DType::fp32, 2, 9);
  for (int c = 0; c < 9; ++c) {
    src.set(0, c, -1.0f - static_cast<float>(c));
    src.set(1, c, static_cast<float>(c));
  }
  src.set(0, 3, 0.0f);
  src.set(0, 4, -0.0f);
  src.set(1, 5, std::numeric_limits<float>::quiet_NaN());
  Tile dst(DType::fp32, 2, 8);
  exec_max8(dst.view(), src.view());
  EXPECT_FALSE(std::signbit(dst.get(0, 0)));  // +0 first
  EXPECT_EQ(dst.get(0, 0), 0.0f);
  EXPECT_TRUE(std::signbit(dst.get(0, 1)));  // then -0
  EXPECT_EQ(dst.get(0, 2), -1.0f);
  EXPECT_TRUE(std::isnan(dst.get(1, 0)));
  EXPECT_EQ(dst.get(1, 1), 8.0f);
  EXPECT_EQ(dst.get(1, 7), 1.0f);  // 5 was the NaN
}

TEST(Top8Semantics, Max8RoundsToTheDestinationDtype) {
  Tile src(DType::fp32, 1, 8);
  for (int c = 0; c < 8; ++c) src.set(0, c, 1.0f + 0x1p-12f * static_cast<float>(c));
  Tile dst(DType::bf16, 1, 8);
  exec_max8(dst.view(), src.view());
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(dst.get(0, k), quantize(DType::bf16, 1.0f + 0x1p-12f * static_cast<float>(7 - k)));
  }
}

TEST(Top8Semantics, FindIndex8GivesTheFirstOccurrence) {
  Tile data(DType::fp32, 3, 20);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 20; ++c) data.set(r, c, static_cast<float>((c * 7 + r) % 10));
  }
  Tile vals(DType::fp32, 3, 8);
  for (int64_t r = 0; r < 3; ++r) {
    for (int k = 0; k < 8; ++k) vals.set(r, k, static_cast<float>(9 - k));
  }
  Tile dst(DType::uint32, 3, 8);
  EXPECT_FALSE(exec_find_index8(dst.view(), data.view(), vals.view()));
  for (int64_t r = 0; r < 3; ++r) {
    for (int k = 0; k < 8; ++k) {
      int64_t first = -1;
      for (int64_t c = 0; c < 20 && first < 0; ++c) {
        if (data.get(r, c) == vals.get(r, k)) first = c;
      }
      EXPECT_EQ(dst.raw(r, k), static_cast<uint32_t>(first)) << r << " " << k;
    }
  }
}

TEST(Top8Semantics, FindIndex8OfAMissingValueWritesNothingAndSaysWhich) {
  Tile data = random_tile(2, 16, 3, 4);  // values in {-3, -2.75, -2.5, -2.25}
  Tile vals(DType::fp32, 2, 8);
  for (int64_t r = 0; r < 2; ++r) {
    for (int k = 0; k < 8; ++k) vals.set(r, k, data.get(r, k));
  }
  vals.set(1, 6, 42.0f);
  Tile dst(DType::uint32, 2, 8);
  const std::vector<uint8_t> before = dst.bytes;
  const std::optional<Top8Miss> miss = exec_find_index8(dst.view(), data.view(), vals.view());
  ASSERT_TRUE(miss.has_value());
  EXPECT_EQ(miss->row, 1);
  EXPECT_EQ(miss->k, 6);
  EXPECT_EQ(miss->value, 42.0f);
  EXPECT_EQ(dst.bytes, before);
}

// NKI 0.6 nc_find_index8 (successive): duplicate values take successive occurrences in
// ascending order, and a value with no (further) occurrence gives all ones of dst's dtype.
TEST(Top8Semantics, FindIndex8SuccessiveTakesLaterOccurrencesAndMarksMissesAllOnes) {
  const float row[11] = {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8};
  const float want_vals[8] = {3, 8, 8, 42, 8, 1, 1, 8};
  const uint32_t want[8] = {2, 4, 5, 0xffffffffu, 6, 0, 0xffffffffu, 7};
  for (DType t : {DType::uint32, DType::uint16}) {
    Tile data(DType::fp32, 2, 11);
    Tile vals(DType::fp32, 2, 8);
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 11; ++c) data.set(r, c, row[c]);
      for (int k = 0; k < 8; ++k) vals.set(r, k, want_vals[k]);
    }
    Tile dst(t, 2, 8);
    EXPECT_FALSE(exec_find_index8(dst.view(), data.view(), vals.view(), true));
    for (int64_t r = 0; r < 2; ++r) {
      for (int k = 0; k < 8; ++k) {
        const uint32_t w = t == DType::uint16 && want[k] == 0xffffffffu ? 0xffffu : want[k];
        EXPECT_EQ(dst.raw(r, k), w) << r << " " << k;
      }
    }
    // Without successive (ISA-OLD) the same values miss at the 42.
    EXPECT_TRUE(exec_find_index8(dst.view(), data.view(), vals.view()).has_value());
  }
}

// NKI 0.6 nc_match_replace8 (reverse): the page's example, vals processed 7..0.
TEST(Top8Semantics, MatchReplace8ReverseIsThePagesTieBreak) {
  const float row[11] = {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8};
  const float v[8] = {3, 8, 8, 8, 8, 8, 8, 8};
  const uint32_t want[8] = {2, 10, 9, 8, 7, 6, 5, 4};
  Tile data(DType::fp32, 1, 11);
  Tile vals(DType::fp32, 1, 8);
  for (int64_t c = 0; c < 11; ++c) data.set(0, c, row[c]);
  for (int k = 0; k < 8; ++k) vals.set(0, k, v[k]);
  Tile dst(DType::fp32, 1, 11);
  Tile idx(DType::uint32, 1, 8);
  const View i = idx.view();
  EXPECT_FALSE(exec_match_replace8(dst.view(), data.view(), vals.view(), -1.0f, &i, true));
  for (int k = 0; k < 8; ++k) EXPECT_EQ(idx.raw(0, k), want[k]) << k;
  for (int64_t c = 0; c < 11; ++c) EXPECT_EQ(dst.get(0, c), c < 2 || c == 3 ? row[c] : -1.0f);
  // Forward (ISA-OLD) pairs the duplicates in ascending order instead.
  EXPECT_FALSE(exec_match_replace8(dst.view(), data.view(), vals.view(), -1.0f, &i));
  for (int k = 1; k < 8; ++k) EXPECT_EQ(idx.raw(0, k), static_cast<uint32_t>(k + 3)) << k;
}

// The ISA page's NumPy equivalent of nc_match_replace8, for one row.
void numpy_match_replace(std::vector<float>& row, const std::vector<float>& vals, float imm,
                         std::vector<uint32_t>& idx) {
  idx.assign(vals.size(), 0);
  for (size_t j = 0; j < vals.size(); ++j) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (row[c] == vals[j]) {
        idx[j] = static_cast<uint32_t>(c);
        row[c] = imm;
        break;
      }
    }
  }
}

TEST(Top8Semantics, MatchReplace8FollowsTheIsaNumpyEquivalentInPlace) {
  // Duplicated values (so "first occurrence" and the replaced-so-far row matter), and an imm
  // equal to a later value: the page's loop finds the replaced element again.
  Tile data = random_tile(8, 40, 11, 6);
  Tile vals(DType::fp32, 8, 8);
  for (int64_t r = 0; r < 8; ++r) {
    for (int k = 0; k < 8; ++k) vals.set(r, k, data.get(r, (k * 5) % 40));
  }
  const float imm = data.get(0, 0);
  std::vector<std::vector<float>> want(8);
  std::vector<std::vector<uint32_t>> want_idx(8);
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 0; c < 40; ++c) want[static_cast<size_t>(r)].push_back(data.get(r, c));
    std::vector<float> v;
    for (int k = 0; k < 8; ++k) v.push_back(vals.get(r, k));
    numpy_match_replace(want[static_cast<size_t>(r)], v, imm, want_idx[static_cast<size_t>(r)]);
  }
  Tile idx(DType::uint32, 8, 8);
  const View d = data.view();
  const View i = idx.view();
  EXPECT_FALSE(exec_match_replace8(d, d, vals.view(), imm, &i));  // dst is data
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 0; c < 40; ++c) {
      EXPECT_EQ(data.get(r, c), want[static_cast<size_t>(r)][static_cast<size_t>(c)]) << r;
    }
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(idx.raw(r, k), want_idx[static_cast<size_t>(r)][static_cast<size_t>(k)]) << r;
    }
  }
}

TEST(RandomSemantics, RandIsUniformInUnitIntervalAndReproducible) {
  Tile a(DType::fp32, 128, 512), b(DType::fp32, 128, 512), c(DType::fp32, 128, 512);
  exec_rand(a.view(), 0, random_stream(0, 0));
  exec_rand(b.view(), 0, random_stream(0, 0));
  exec_rand(c.view(), 0, random_stream(0, 1));
  EXPECT_EQ(a.bytes, b.bytes);  // same seed and stream: same values
  EXPECT_NE(a.bytes, c.bytes);  // the next draw of the run: other values
  double sum = 0;
  int below_tenth = 0;
  for (int64_t r = 0; r < 128; ++r) {
    for (int64_t f = 0; f < 512; ++f) {
      const float x = a.get(r, f);
      ASSERT_GE(x, 0.0f);
      ASSERT_LT(x, 1.0f);
      sum += x;
      below_tenth += x < 0.1f;
    }
  }
  const double n = 128.0 * 512.0;
  EXPECT_NEAR(sum / n, 0.5, 0.01);  // 6 standard deviations: sqrt(1/12/n) = 0.0011
  EXPECT_NEAR(below_tenth / n, 0.1, 0.01);
  // Another seed, same stream: other values.
  Tile d(DType::fp32, 128, 512);
  exec_rand(d.view(), 1, random_stream(0, 0));
  EXPECT_NE(a.bytes, d.bytes);
}

TEST(RandomSemantics, DropoutDropsWithTheGivenProbabilityAndDoesNotRescale) {
  Tile data(DType::fp32, 4, 4096);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t f = 0; f < 4096; ++f) data.set(r, f, 1.0f + static_cast<float>(f));
  }
  Tile prob(DType::fp32, 4, 1);
  const float p[4] = {0.0f, 0.2f, 0.7f, 1.0f};
  for (int64_t r = 0; r < 4; ++r) prob.set(r, 0, p[r]);
  Tile out(DType::fp32, 4, 4096), draws(DType::fp32, 4, 4096);
  exec_dropout(out.view(), data.view(), prob.view(), 5, random_stream(0, 3));
  exec_rand(draws.view(), 5, random_stream(0, 3));
  for (int64_t r = 0; r < 4; ++r) {
    int dropped = 0;
    for (int64_t f = 0; f < 4096; ++f) {
      const bool drop = draws.get(r, f) < p[r];  // the same draw decides
      EXPECT_EQ(out.get(r, f), drop ? 0.0f : data.get(r, f)) << r << " " << f;
      dropped += out.get(r, f) == 0.0f;
    }
    EXPECT_NEAR(dropped / 4096.0, p[r], 0.03) << r;  // > 4 standard deviations
  }
  // A scalar probability: the same rule for every partition.
  Tile all(DType::fp32, 4, 4096);
  exec_dropout(all.view(), data.view(), 1.0f, 5, random_stream(0, 3));
  for (int64_t f = 0; f < 4096; ++f) EXPECT_EQ(all.get(2, f), 0.0f);
  exec_dropout(all.view(), data.view(), 0.0f, 5, random_stream(0, 3));
  EXPECT_EQ(all.bytes, data.bytes);
}

}  // namespace
}  // namespace ncv
