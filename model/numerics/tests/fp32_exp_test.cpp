// The model's fp32 exp: faithful (one of the two floats around exp(x), by long double expl) on a
// sweep of the whole finite range, special values, and the vectorised array path giving the
// scalar path's bits.
#include "model/numerics/fp32_exp.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/numerics/tests/exp_reference.h"
#include "model/numerics/tests/float_bits.h"

namespace ncv {
namespace {

using numtest::from_bits;
using numtest::to_bits;

// Every 1021st bit pattern of the finite floats (both signs), plus every pattern near 0, 1, the
// overflow and underflow thresholds.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (uint64_t b = 0; b < 0x100000000ull; b += 1021) {
    const float x = from_bits(static_cast<uint32_t>(b));
    if (std::isfinite(x)) xs.push_back(x);
  }
  for (float c : {0.0f, 1.0f, -1.0f, 88.72283f, -87.33655f, -103.27893f, -103.97208f}) {
    float x = c;
    for (int i = 0; i < 3000; ++i) x = std::nextafter(x, std::numeric_limits<float>::infinity());
    for (int i = 0; i < 6000; ++i) {
      xs.push_back(x);
      x = std::nextafter(x, -std::numeric_limits<float>::infinity());
    }
  }
  return xs;
}

TEST(Fp32Exp, FaithfulOverTheWholeRange) {
  const std::vector<float> xs = sweep();
  double worst = 0;
  for (float x : xs) {
    const float y = exp_f32(x);
    ASSERT_TRUE(exptest::is_faithful_exp(x, y)) << "exp(" << std::hexfloat << x << ") = " << y;
    worst = std::max(worst, exptest::exp_ulp_error(x, y));
  }
  EXPECT_LT(worst, 1.0);
}

TEST(Fp32Exp, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(exp_f32(inf), inf);
  EXPECT_EQ(to_bits(exp_f32(-inf)), 0u) << "exp(-inf) is +0";
  EXPECT_EQ(exp_f32(89.0f), inf);
  EXPECT_EQ(exp_f32(1e30f), inf);
  EXPECT_EQ(to_bits(exp_f32(-104.0f)), 0u);
  EXPECT_EQ(to_bits(exp_f32(-1e30f)), 0u);
  EXPECT_GT(exp_f32(-100.0f), 0.0f) << "subnormal results are kept";
  EXPECT_LT(exp_f32(-100.0f), std::numeric_limits<float>::min());
  EXPECT_EQ(to_bits(exp_f32(from_bits(0x7f812345u))), 0x7fc12345u) << "a NaN comes out quieted";
  EXPECT_EQ(to_bits(exp_f32(from_bits(0xffc00001u))), 0xffc00001u);
}

TEST(Fp32Exp, ArrayGivesTheScalarBits) {
  std::vector<float> xs = sweep();
  xs.resize(std::min<size_t>(xs.size(), 1u << 20));
  std::vector<float> ys(xs.size());
  exp_f32_array(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(to_bits(ys[i]), to_bits(exp_f32(xs[i]))) << std::hexfloat << xs[i];
  }
  // Every build of the loop this CPU runs (AVX-512, AVX2, portable) gives the same bits.
  for (const auto& loop : detail::exp_f32_loops()) {
    std::vector<float> zs(xs.size());
    ASSERT_TRUE(loop.run(xs.data(), zs.data(), static_cast<int64_t>(xs.size())));
    for (size_t i = 0; i < xs.size(); ++i) {
      ASSERT_EQ(to_bits(zs[i]), to_bits(ys[i])) << loop.name << " " << std::hexfloat << xs[i];
    }
  }
  // A NaN anywhere: every element still gets its own value, in place.
  std::vector<float> mixed = {1.0f, from_bits(0x7f800001u), -2.0f, 100.0f};
  exp_f32_array(mixed.data(), mixed.data(), 4);
  EXPECT_EQ(to_bits(mixed[0]), to_bits(exp_f32(1.0f)));
  EXPECT_EQ(to_bits(mixed[1]), 0x7fc00001u);
  EXPECT_EQ(to_bits(mixed[2]), to_bits(exp_f32(-2.0f)));
  EXPECT_EQ(mixed[3], std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace ncv
