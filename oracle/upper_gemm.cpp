#include "oracle/upper_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "oracle/blas_threads.h"

namespace ncv::oracle {

namespace {

// Scales beyond this make 2^(exp_a + exp_b) leave the normal double range (the fallback is exact).
constexpr int kMaxExp = 900;

// gamma_k for unit roundoff u: k u / (1 - k u), +inf when k u >= 1.
double gamma_k(int64_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku >= 1 ? HUGE_VAL : ku / (1 - ku);
}

}  // namespace

void UpperOperand::prepare(const double* src, int64_t r, int64_t c, int64_t l) {
  x = src;
  rows = r;
  cols = c;
  ld = l;
  double mx = 0;
  bool ok = true;
  for (int64_t i = 0; i < r; ++i) {
    const double* row = src + i * l;
    for (int64_t j = 0; j < c; ++j) {
      // NaN fails both comparisons; a negative entry would break the upward conversion.
      ok = ok && row[j] >= 0 && row[j] <= HUGE_VAL;
      mx = std::max(mx, row[j]);
    }
  }
  zero = ok && mx == 0;
  use_float = ok && !zero && std::isfinite(mx);
  if (!use_float) return;
  exp = std::ilogb(mx);
  if (exp > kMaxExp || exp < -kMaxExp) {
    use_float = false;
    return;
  }
  f.resize(static_cast<size_t>(r * c));
  const double down = std::ldexp(1.0, -exp);
  for (int64_t i = 0; i < r; ++i) {
    const double* row = src + i * l;
    float* out = f.data() + i * c;
    for (int64_t j = 0; j < c; ++j) {
      // Scaling by a power of two is exact unless the result leaves double's normal range (then
      // it is below float's range anyway: it becomes the smallest float, 2^-149).
      const double s = row[j] * down;
      float v = static_cast<float>(s);
      // Round upward: a non-negative float's next value up is its bit pattern plus one.
      if (static_cast<double>(v) < s || (v == 0 && row[j] > 0)) {
        v = std::bit_cast<float>(std::bit_cast<uint32_t>(v) + 1u);
      }
      out[j] = v;
    }
  }
}

void upper_gemm(const UpperOperand& a, const UpperOperand& b, bool b_trans, double* c,
                int64_t ldc) {
  const int64_t m = a.rows, k = a.cols, n = b_trans ? b.rows : b.cols;
  if (m == 0 || n == 0) return;
  if (k == 0 || a.zero || b.zero) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0);
    return;
  }
  use_one_blas_thread();
  const CBLAS_TRANSPOSE tb = b_trans ? CblasTrans : CblasNoTrans;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const bool use_float = a.use_float && b.use_float && std::abs(a.exp + b.exp) <= kMaxExp;
  if (use_float) {
    // Entries of the scaled operands are in [0, 2): every product is < 4 and the sums < 4k, far
    // from float overflow. The float result s satisfies s >= S (1 - gamma_k) - k 2^-150 for the
    // exact sum S of the (rounded-up) float operands' products, so
    //   S <= (s + k 2^-149) / (1 - gamma_k) <= (s + k 2^-149) (1 + 2 gamma_k),
    // and the double evaluation of that (three roundings) is covered by 4 more double ulps.
    std::vector<float> cf(static_cast<size_t>(m * n));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, mi, ni, ki, 1.0f, a.f.data(), ki, b.f.data(),
                static_cast<int>(b.cols), 0.0f, cf.data(), ni);
    const double g = gamma_k(k, 0x1p-24);
    const double factor = (1 + 2 * g) * (1 + 0x1p-50);
    const double floor_ = static_cast<double>(k) * 0x1p-149;
    const double scale = std::ldexp(1.0, a.exp + b.exp);
    for (int64_t i = 0; i < m; ++i) {
      const float* src = cf.data() + i * n;
      double* dst = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) {
        dst[j] = (static_cast<double>(src[j]) + floor_) * factor * scale;
      }
    }
    return;
  }
  // dgemm on the double sources: s >= S (1 - gamma_k) - k 2^-1074 (subnormal products).
  cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, mi, ni, ki, 1.0, a.x, static_cast<int>(a.ld), b.x,
              static_cast<int>(b.ld), 0.0, c, static_cast<int>(ldc));
  const double factor = (1 + 2 * gamma_k(k, 0x1p-53)) * (1 + 0x1p-50);
  const double floor_ = static_cast<double>(k) * 0x1p-1073;
  for (int64_t i = 0; i < m; ++i) {
    double* dst = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) dst[j] = (dst[j] + floor_) * factor;
  }
}

}  // namespace ncv::oracle
