// interval_rows.h: every build of the loops this CPU runs (AVX-512, AVX2, portable) against the
// scalar definitions: the roundings bit for bit against the out-of-line quantize() (a compiler
// that drops a float round trip, as GCC 12's SLP vectoriser does on straight-line pairs, fails
// here), and the exp enclosure against long double expl.
#include "oracle/interval_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ncv::oracle {
namespace {

double nudge(double x, int dir) {
  if (dir < 0) return x - std::fabs(x) * 0x1p-44 - 0x1p-1000;
  if (dir > 0) return x + std::fabs(x) * 0x1p-44 + 0x1p-1000;
  return x;
}

// Values around every range a rounding meets: O(1), fp32/bf16 subnormals and below, near the
// overflow threshold, signed zeros, infinities, NaN, and exact fp32 / bf16 values (the nudges
// must move them by less than half an ulp).
std::vector<double> probe_values() {
  std::mt19937_64 g(42);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-160, 130);
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           0x1p-149,
                           0x1p-150,
                           0x1.8p-150,
                           -0x1p-126,
                           3.4028234663852886e38,
                           3.4028235677973366e38,
                           -3.5e38,
                           1e300,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  for (int n = 0; n < 20000; ++n) {
    const double x = std::ldexp(u(g), e(g));
    v.push_back(x);
    v.push_back(static_cast<float>(x));                         // an fp32 value
    v.push_back(quantize(DType::bf16, static_cast<float>(x)));  // a bf16 value
  }
  return v;
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

TEST(IntervalRows, EveryBuildRoundsLikeQuantize) {
  const std::vector<double> values = probe_values();
  const auto builds = detail::interval_loops();
  ASSERT_FALSE(builds.empty());
  EXPECT_EQ(std::string(builds.back().name), "portable");
  for (const auto& b : builds) {
    for (const DType t : {DType::fp32, DType::bf16}) {
      for (const int dir : {-1, 0, 1}) {
        // Lengths that leave every vector width a tail.
        for (const size_t len : {size_t{1}, size_t{3}, size_t{7}, size_t{13}, values.size()}) {
          std::vector<double> x(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(len));
          const auto f = t == DType::fp32 ? b.round_fp32 : b.round_bf16;
          ASSERT_TRUE(f(x.data(), static_cast<int64_t>(len), dir));
          for (size_t i = 0; i < len; ++i) {
            const double want = quantize(t, static_cast<float>(nudge(values[i], dir)));
            ASSERT_TRUE(same(x[i], want))
                << b.name << " " << dtype_name(t) << " dir " << dir << " at " << std::hexfloat
                << values[i] << ": " << x[i] << " want " << want;
          }
        }
      }
    }
  }
}

TEST(IntervalRows, OtherDtypesRoundOneByOneAndOutward) {
  const std::vector<double> values = probe_values();
  for (const DType t : {DType::fp16, DType::fp8_e4m3, DType::fp8_e5m2, DType::fp32, DType::bf16}) {
    std::vector<double> lo = values, hi = values, nearest = values;
    round_lo(t, lo.data(), static_cast<int64_t>(lo.size()));
    round_hi(t, hi.data(), static_cast<int64_t>(hi.size()));
    round_nearest(t, nearest.data(), static_cast<int64_t>(nearest.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      const double x = values[i];
      ASSERT_TRUE(same(lo[i], quantize(t, static_cast<float>(nudge(x, -1))))) << dtype_name(t);
      ASSERT_TRUE(same(hi[i], quantize(t, static_cast<float>(nudge(x, 1))))) << dtype_name(t);
      ASSERT_TRUE(same(nearest[i], quantize(t, static_cast<float>(x)))) << dtype_name(t);
      // Outward: what a kernel can hold at x (its rounding to t) is between the two ends.
      if (std::isfinite(x)) {
        EXPECT_LE(lo[i], nearest[i]) << dtype_name(t) << " " << x;
        EXPECT_GE(hi[i], nearest[i]) << dtype_name(t) << " " << x;
      }
    }
  }
}

TEST(IntervalRows, EveryBuildEnclosesExp) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-760, 760);
  std::uniform_real_distribution<double> near(-1, 1);
  std::vector<double> x = {0.0,
                           -0.0,
                           0x1p-60,
                           -0x1p-60,
                           0.34657359027997264,
                           -0.34657359027997264,
                           88.72283935546875,
                           -103.97208404541016,
                           700.0,
                           -700.0,
                           709.0,
                           -745.0};
  for (int n = 0; n < 200000; ++n) x.push_back(u(g));
  for (int n = 0; n < 50000; ++n) x.push_back(near(g));
  for (int n = 0; n < 50000; ++n) x.push_back(static_cast<float>(near(g) * 104));  // fp32 args
  const int64_t len = static_cast<int64_t>(x.size());
  for (const auto& b : detail::interval_loops()) {
    std::vector<double> lo(x.size()), hi(x.size());
    ASSERT_TRUE(b.exp_enclose(x.data(), x.data(), lo.data(), hi.data(), len));
    long double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double e = std::exp(static_cast<long double>(x[i]));
      ASSERT_LE(static_cast<long double>(lo[i]), e) << b.name << " " << std::hexfloat << x[i];
      ASSERT_GE(static_cast<long double>(hi[i]), e) << b.name << " " << std::hexfloat << x[i];
      if (std::fabs(x[i]) <= 700) {
        // The core itself (hi without its 2^-42 widening) is within 2^-46 of exp: the widening
        // has a margin of 16 and more.
        const long double core = static_cast<long double>(hi[i]) / (1 + 0x1p-42L);
        worst = std::max(worst, std::fabs(core / e - 1));
        // And tight: the enclosure is a few 2^-42 wide.
        EXPECT_LE(static_cast<long double>(hi[i]) / lo[i] - 1, 0x1p-40L) << x[i];
      }
    }
    EXPECT_LT(worst, 0x1p-46L) << b.name;
    std::printf("%s: exp core max relative error %.3Le (2^%.1f)\n", b.name, worst,
                static_cast<double>(std::log2(worst)));
  }
}

TEST(IntervalRows, ExpEnclosureOfNonFiniteArguments) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {-inf, inf, std::numeric_limits<double>::quiet_NaN(), -800.0,
                                 800.0};
  std::vector<double> lo(x.size()), hi(x.size());
  exp_enclose(x.data(), x.data(), lo.data(), hi.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(lo[0], 0.0);
  EXPECT_GE(hi[0], 0.0);
  EXPECT_LT(hi[0], 1e-300);
  EXPECT_EQ(hi[1], inf);
  EXPECT_GT(lo[1], 1e300);
  EXPECT_TRUE(std::isnan(lo[2]) && std::isnan(hi[2]));
  EXPECT_EQ(lo[3], 0.0);
  EXPECT_GT(hi[3], 0.0);
  EXPECT_EQ(hi[4], inf);
}

}  // namespace
}  // namespace ncv::oracle
