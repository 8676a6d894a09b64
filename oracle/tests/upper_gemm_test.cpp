// upper_gemm (oracle/upper_gemm.h): an upper bound of a product of non-negative matrices from
// float sgemm, checked against the product summed in long double from the double operands: over
// wide exponent ranges (tails left out of the float product and bounded apart, lines scaled
// apart), for both layouts of B, with zeros, and with the operands that must fall back to dgemm.
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

struct Product {
  std::vector<double> c;
  bool used_float = false;
};

Product upper(const std::vector<double>& a, const std::vector<double>& b, bool b_trans, int64_t m,
              int64_t k, int64_t n) {
  UpperOperand ao, bo;
  ao.prepare(a.data(), m, k, k, true);
  if (b_trans) {
    bo.prepare(b.data(), n, k, k, true);
  } else {
    bo.prepare(b.data(), k, n, n, false);
  }
  Product p;
  p.c.assign(static_cast<size_t>(m * n), -1.0);
  upper_gemm(ao, bo, b_trans, p.c.data(), n);
  p.used_float = ao.use_float && bo.use_float;
  return p;
}

TEST(UpperGemm, IsAnUpperBoundAndTight) {
  std::mt19937_64 g(7);
  // Exponent ranges: O(1) values, widely spread ones (far tails of each line), large or tiny
  // scales that fit only after scaling per line, and ranges beyond float's exponents.
  const int ranges[][4] = {{-2, 2, -2, 2},       {-200, 0, -100, 3},  {400, 450, 300, 350},
                           {-460, -430, -20, 0}, {-130, -100, 0, 2},  {0, 0, 200, 209},
                           {-90, 0, -90, 0},     {-1000, -990, 0, 2}, {0, 2, 890, 899}};
  for (const auto& r : ranges) {
    for (const bool b_trans : {false, true}) {
      const int64_t m = 7, k = 300, n = 5;
      const std::vector<double> a = random_matrix(g, m * k, r[0], r[1]);
      const std::vector<double> b = random_matrix(g, k * n, r[2], r[3]);
      const Product p = upper(a, b, b_trans, m, k, n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const long double ex = exact_entry(a, b, b_trans, i, j, k, n);
          const long double got = p.c[static_cast<size_t>(i * n + j)];
          EXPECT_GE(got, ex) << r[0] << " " << b_trans << " " << i << " " << j;
          // gamma_300(2^-24) is 1.8e-5, the left-out tails at most 300 * 2^-60 of the lines'
          // largest products: within 1e-4 of the exact sum whenever it is not itself far below
          // the lines' largest products.
          if (ex > std::ldexp(1.0L, r[1] + r[3] - 30)) {
            EXPECT_LE(got, ex * (1 + 1e-4L)) << r[0] << " " << i;
          }
        }
      }
    }
  }
}

// A softmax-like row (exp of scores spread over hundreds: most entries are far below float's
// normal range after scaling) times values of O(1): the float path is taken (the tail is bounded
// apart, no subnormal float reaches sgemm) and the bound stays tight.
TEST(UpperGemm, FarTailsStayOnTheFloatPathAndTight) {
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> s(-300, 0);
  std::uniform_real_distribution<double> v(0, 1);
  const int64_t m = 4, k = 512, n = 8;
  std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (double& x : a) x = std::exp(s(g));
  for (double& x : b) x = v(g);
  const Product p = upper(a, b, false, m, k, n);
  EXPECT_TRUE(p.used_float);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const long double ex = exact_entry(a, b, false, i, j, k, n);
      EXPECT_GE(p.c[static_cast<size_t>(i * n + j)], ex);
      EXPECT_LE(p.c[static_cast<size_t>(i * n + j)], ex * (1 + 1e-4L));
    }
  }
}

// The products left out of the float sgemm are what the whole sum is made of when a line's large
// entries meet zeros on the other side: A's tail (2^-70 of its row's largest) against B's only
// non-zero entries, and B's tail against A's. The left-out part is bounded by the number of tail
// entries times 2^-60 of the line's largest entry, times the other side's largest.
TEST(UpperGemm, LeftOutTailsAreBoundedApart) {
  const int64_t k = 64;
  std::vector<double> a(static_cast<size_t>(k), 0x1p-70), b(static_cast<size_t>(k), 1.0);
  a[0] = 1.0;
  b[0] = 0.0;
  Product p = upper(a, b, false, 1, k, 1);
  EXPECT_TRUE(p.used_float);
  const long double ex = exact_entry(a, b, false, 0, 0, k, 1);
  const long double tails = static_cast<long double>(k - 1) * 0x1p-60L;
  EXPECT_GE(p.c[0], ex);
  EXPECT_LE(p.c[0], tails * (1 + 1e-9L));
  p = upper(b, a, true, 1, k, 1);  // the same with B's tail (B given transposed)
  EXPECT_TRUE(p.used_float);
  EXPECT_GE(p.c[0], ex);
  EXPECT_LE(p.c[0], tails * (1 + 1e-9L));
}

TEST(UpperGemm, ZerosNonFiniteAndNegativeOperands) {
  const std::vector<double> z(12, 0.0), inf = {1, 2, INFINITY, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  const std::vector<double> neg = {1, 2, -3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  const std::vector<double> ones(12, 1.0);
  UpperOperand zo, io, no, oo;
  zo.prepare(z.data(), 3, 4, 4, true);
  io.prepare(inf.data(), 3, 4, 4, true);
  no.prepare(neg.data(), 3, 4, 4, true);
  oo.prepare(ones.data(), 4, 3, 3, false);
  EXPECT_TRUE(zo.zero);
  EXPECT_FALSE(io.use_float);
  EXPECT_FALSE(no.use_float);
  std::vector<double> c(9, -1.0);
  upper_gemm(zo, oo, false, c.data(), 3);
  for (double x : c) EXPECT_EQ(x, 0.0);
  upper_gemm(io, oo, false, c.data(), 3);  // dgemm fallback: +inf where the Inf enters
  EXPECT_TRUE(std::isinf(c[0]));
  EXPECT_GE(c[3], 4.0);
  upper_gemm(no, oo, false, c.data(), 3);  // dgemm fallback on the signed values
  EXPECT_GE(c[0], 4.0);
}

}  // namespace
}  // namespace ncv::oracle
