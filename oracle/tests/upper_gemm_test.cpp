// upper_gemm (oracle/upper_gemm.h): an upper bound of a product of non-negative matrices, from
// float sgemm. Checked against the product summed in long double from the double operands.
#include "oracle/upper_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace ncv::oracle {
namespace {

// Entries 2^e * u, u uniform in [0, 1), e uniform in [lo, hi]; about a tenth are exact zeros.
std::vector<double> random_matrix(std::mt19937_64& g, int64_t n, int lo, int hi) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> e(lo, hi);
  std::vector<double> x(static_cast<size_t>(n));
  for (double& v : x) v = u(g) < 0.1 ? 0.0 : std::ldexp(u(g), e(g));
  return x;
}

// Exact enough: long double sums of the double products (64-bit mantissa, k <= 300 terms).
long double exact_entry(const std::vector<double>& a, const std::vector<double>& b, bool b_trans,
                        int64_t i, int64_t j, int64_t k, int64_t n) {
  long double s = 0;
  for (int64_t t = 0; t < k; ++t) {
    const double bv =
        b_trans ? b[static_cast<size_t>(j * k + t)] : b[static_cast<size_t>(t * n + j)];
    s += static_cast<long double>(a[static_cast<size_t>(i * k + t)]) * bv;
  }
  return s;
}

TEST(UpperGemm, IsAnUpperBoundAndTight) {
  std::mt19937_64 g(7);
  // Exponent ranges: O(1) values, widely spread ones (float underflow of small entries), and
  // large or tiny scales that only fit float after scaling, or not at all (dgemm fallback).
  const int ranges[][4] = {{-2, 2, -2, 2},       {-200, 0, -100, 3},  {400, 450, 300, 350},
                           {-600, -550, -20, 0}, {-1000, -990, 0, 2}, {0, 0, 890, 899}};
  for (const auto& r : ranges) {
    for (const bool b_trans : {false, true}) {
      const int64_t m = 7, k = 300, n = 5;
      const std::vector<double> a = random_matrix(g, m * k, r[0], r[1]);
      const std::vector<double> b = random_matrix(g, k * n, r[2], r[3]);
      UpperOperand ao, bo;
      ao.prepare(a.data(), m, k, k);
      if (b_trans) {
        bo.prepare(b.data(), n, k, k);
      } else {
        bo.prepare(b.data(), k, n, n);
      }
      std::vector<double> c(static_cast<size_t>(m * n), -1.0);
      upper_gemm(ao, bo, b_trans, c.data(), n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const long double ex = exact_entry(a, b, b_trans, i, j, k, n);
          const double got = c[static_cast<size_t>(i * n + j)];
          EXPECT_GE(static_cast<long double>(got), ex) << r[0] << " " << i << " " << j;
          // gamma_300(2^-24) is 1.8e-5: the bound is within a few of those of the exact sum
          // unless the sum is far below the operands' scale (then the k 2^-149 floor shows).
          if (ex > std::ldexp(1.0L, r[1] + r[3] - 60)) {
            EXPECT_LE(static_cast<long double>(got), ex * (1 + 1e-4L)) << r[0] << " " << i;
          }
        }
      }
    }
  }
}

TEST(UpperGemm, ZerosAndNonFiniteOperands) {
  const std::vector<double> z(12, 0.0), inf = {1, 2, INFINITY, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  const std::vector<double> ones(12, 1.0);
  UpperOperand zo, io, oo;
  zo.prepare(z.data(), 3, 4, 4);
  io.prepare(inf.data(), 3, 4, 4);
  oo.prepare(ones.data(), 4, 3, 3);
  EXPECT_TRUE(zo.zero);
  EXPECT_FALSE(io.use_float);
  std::vector<double> c(9, -1.0);
  upper_gemm(zo, oo, false, c.data(), 3);
  for (double x : c) EXPECT_EQ(x, 0.0);
  upper_gemm(io, oo, false, c.data(), 3);  // dgemm fallback: +inf where the Inf enters
  EXPECT_TRUE(std::isinf(c[0]));
  EXPECT_GE(c[3], 4.0);
}

}  // namespace
}  // namespace ncv::oracle
