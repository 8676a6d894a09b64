#include "oracle/upper_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "oracle/blas_threads.h"

namespace ncv::oracle {

namespace {

// A line's exponent beyond this makes 2^(exp_a + exp_b) leave double's normal range.
constexpr int kMaxExp = 480;
// Entries below 2^kTailExp of their line's largest (scaled to [1, 2)) are the tail.
constexpr int kTailExp = -60;

bool g_force_double = false;

// gamma_k for unit roundoff u: k u / (1 - k u), +inf when k u >= 1.
double gamma_k(int64_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku >= 1 ? HUGE_VAL : ku / (1 - ku);
}

}  // namespace

void UpperOperand::prepare(const double* src, int64_t r, int64_t c, int64_t l, bool by_row) {
  x = src;
  rows = r;
  cols = c;
  ld = l;
  per_row = by_row;
  const int64_t lines = by_row ? r : c;
  std::vector<double> mx(static_cast<size_t>(lines), 0.0);
  uint32_t bad = 0;  // an integer OR, so that the scan has no early exit
  for (int64_t i = 0; i < r; ++i) {
    const double* row = src + i * l;
    if (by_row) {
      double m = 0;
      for (int64_t j = 0; j < c; ++j) {
        // NaN fails the comparison; a negative entry would break the upward conversion.
        bad |= static_cast<uint32_t>(!(row[j] >= 0));
        m = row[j] > m ? row[j] : m;
      }
      mx[static_cast<size_t>(i)] = m;
    } else {
      for (int64_t j = 0; j < c; ++j) {
        bad |= static_cast<uint32_t>(!(row[j] >= 0));
        double& m = mx[static_cast<size_t>(j)];
        m = row[j] > m ? row[j] : m;
      }
    }
  }
  double all = 0;
  for (double m : mx) all = std::max(all, m);
  zero = bad == 0 && all == 0;
  use_float = bad == 0 && !zero && std::isfinite(all);
  if (!use_float) return;
  exp.assign(static_cast<size_t>(lines), 0);
  max_line.assign(static_cast<size_t>(lines), 0.0);
  tail.assign(static_cast<size_t>(lines), 0.0);
  std::vector<double> down(static_cast<size_t>(lines), 1.0);
  for (size_t t = 0; t < mx.size(); ++t) {
    if (mx[t] == 0) continue;
    const int e = std::ilogb(mx[t]);
    if (e > kMaxExp || e < -kMaxExp) {
      use_float = false;
      return;
    }
    exp[t] = e;
    down[t] = std::ldexp(1.0, -e);
    max_line[t] = mx[t] * down[t];
  }
  const double tail_below = std::ldexp(1.0, kTailExp);
  f.resize(static_cast<size_t>(r * c));
  std::vector<int64_t> tails(static_cast<size_t>(lines), 0);
  for (int64_t i = 0; i < r; ++i) {
    const double* row = src + i * l;
    float* out = f.data() + i * c;
    const double row_down = by_row ? down[static_cast<size_t>(i)] : 1.0;
    int64_t row_tails = 0;
    for (int64_t j = 0; j < c; ++j) {
      // Scaling by a power of two is exact (every line's exponent is within +-480). A kept
      // entry's nearest float is moved one float up (a positive float's next value up is its
      // bit pattern plus one), so it is >= its scaled source without comparing a float with a
      // double: nothing here depends on the compiler keeping a float round trip
      // (interval_rows_kernel.h). A tail entry is counted and left out.
      const double s = row[j] * (by_row ? row_down : down[static_cast<size_t>(j)]);
      const bool left_out = s < tail_below;  // zeros too, but only non-zeros are counted
      const bool in_tail = left_out && s > 0;
      const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(s)) + 1u;
      out[j] = left_out ? 0.0f : std::bit_cast<float>(bits);
      if (by_row) {
        row_tails += in_tail;
      } else {
        tails[static_cast<size_t>(j)] += in_tail;
      }
    }
    if (by_row) tails[static_cast<size_t>(i)] = row_tails;
  }
  // Each tail entry is below 2^kTailExp: their sum is below their count times that (exact).
  for (size_t t = 0; t < tail.size(); ++t)
    tail[t] = std::ldexp(static_cast<double>(tails[t]), kTailExp);
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
  // A is scaled per row and B per output column (per row when given transposed).
  const bool lines_match = a.per_row && b.per_row == b_trans;
  // s / (1 - gamma) <= s (1 + 2 gamma) needs gamma <= 1/2; far below that at any k an attention
  // row has (k 2^-24 <= 2^-4 up to a million keys), the double path beyond.
  const bool short_sums = static_cast<double>(k) * 0x1p-24 <= 0x1p-4;
  if (a.use_float && b.use_float && lines_match && short_sums && !g_force_double) {
    // Kept scaled entries are in [2^-60, 2]: every product is a normal float in [2^-120, 4), the
    // sums of non-negative normals stay normal and below 4k, far from overflow. The float result
    // s of the kept products satisfies s >= S (1 - gamma_k) for their exact sum S, so
    //   S <= s / (1 - gamma_k) <= s (1 + 2 gamma_k).
    // The left-out products: those with a tail entry of A's row i are at most tail_a[i] times
    // B's column maximum, those with a tail entry of B's column j (and a kept A entry) at most
    // A's row maximum times tail_b[j]. The double evaluation of the sum (a few roundings) is
    // covered by (1 + 2^-50), an underflow of the final scaling by 2^-1070.
    // The float result (kept between calls: its size repeats, block after block).
    thread_local std::vector<float> cf;
    cf.resize(static_cast<size_t>(m * n));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, mi, ni, ki, 1.0f, a.f.data(), ki, b.f.data(),
                static_cast<int>(b.cols), 0.0f, cf.data(), ni);
    const double factor = 1 + 2 * gamma_k(k, 0x1p-24);
    // The lines' scales as doubles: (x 2^ea) 2^eb is exact while normal (|ea|, |eb| <= 480
    // and x in [2^-120, 2^40]); only the last product may be subnormal, covered by 2^-1070.
    thread_local std::vector<double> pb;
    pb.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
      pb[static_cast<size_t>(j)] = std::ldexp(1.0, b.exp[static_cast<size_t>(j)]);
    for (int64_t i = 0; i < m; ++i) {
      const float* src = cf.data() + i * n;
      double* dst = c + i * ldc;
      const size_t ia = static_cast<size_t>(i);
      const double pa = std::ldexp(1.0 + 0x1p-50, a.exp[ia]);
      const double ta = a.tail[ia], ma = a.max_line[ia];
      for (int64_t j = 0; j < n; ++j) {
        const size_t jb = static_cast<size_t>(j);
        const double kept = static_cast<double>(src[j]) * factor;
        const double left_out = ta * b.max_line[jb] + ma * b.tail[jb];
        dst[j] = (kept + left_out) * pa * pb[jb] + 0x1p-1070;
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

namespace detail {
void force_double_products_for_testing(bool on) {
  g_force_double = on;
}
}  // namespace detail

}  // namespace ncv::oracle
