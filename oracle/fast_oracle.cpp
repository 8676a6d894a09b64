// The fast oracle: the exact oracle's algorithm in double, with the two matrix products (Q K^T and
// P V) done by BLAS dgemm on blocks of query rows, the row sums compensated (Sum2), and the
// per-element bound on its distance to the exact oracle. The derivation is in oracle/README.md
// "Fast oracle bound"; the comments below name each term.
//
// The bound holds for any summation order and with or without fused multiply-adds (the γ_n
// bound of Higham §3.1), so it does not depend on which kernel the BLAS library picks for the
// CPU or how many threads it uses.
#include "oracle/fast_oracle.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/blas_threads.h"
#include "oracle/upper_gemm.h"

namespace ncv::oracle {

namespace {

constexpr double kU = 0x1p-53;  // unit roundoff of double
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTiny = 0x1p-1060;  // covers subnormal underflow of products and exp
// Inputs at or above this magnitude get an infinite bound (products of two could overflow).
constexpr double kMaxMagnitude = 0x1p500;
// Query rows per dgemm block: large enough for BLAS efficiency, small enough that a block of
// scores stays a few MiB.
constexpr int64_t kBlockElements = int64_t{1} << 20;

// gamma_n = n u / (1 - n u) for double (Higham §3.1).
double gamma(double n) {
  return n * kU / (1 - n * kU);
}

// C[m][n] = A[m][k] * B[n][k]^T (all row-major, B given by rows).
void gemm_abt(int64_t m, int64_t n, int64_t k, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0, A, static_cast<int>(k), B, static_cast<int>(k), 0.0, C,
              static_cast<int>(n));
}

// C[m][n] = A[m][k] * B[k][n] (all row-major).
void gemm_ab(int64_t m, int64_t n, int64_t k, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0, A, static_cast<int>(k), B, static_cast<int>(n), 0.0, C,
              static_cast<int>(n));
}

// Compensated sum (Sum2): the rounding error of each addition carried separately.
struct Sum2 {
  double s = 0, c = 0;
  void add(double x) {
    const double t = s + x;
    const double z = t - s;
    c += (s - (t - z)) + (x - z);
    s = t;
  }
  double value() const { return s + c; }
};

bool all_finite(const double* x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    if (!std::isfinite(x[c])) return false;
  }
  return true;
}

bool all_small(const double* x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    if (!(std::fabs(x[c]) < kMaxMagnitude)) return false;
  }
  return true;
}

// RoPE in double, with an elementwise bound on the distance to the exact rotation.
struct Rotator {
  std::vector<double> inv_freq, freq_err;  // freq_err[t]: relative error factor of the angle
  Rotator(const Rope& rope, int64_t d) {
    const double ln_theta = std::log(rope.theta);
    for (int64_t t = 0; t < d / 2; ++t) {
      const double e = -(2.0 * static_cast<double>(t)) / static_cast<double>(d);
      inv_freq.push_back(std::pow(rope.theta, e));
      // exponent rounding (|e ln theta| u), pow (<= 2u), pos * freq (u), margin (1u)
      freq_err.push_back((std::fabs(e * ln_theta) + 4.0) * kU);
    }
  }
  // out = rotation of x at pos; err = bound on |out - exact rotation|.
  void apply(const double* x, int64_t d, int64_t pos, double* out, double* err) const {
    const int64_t half = d / 2;
    for (int64_t t = 0; t < half; ++t) {
      const double angle = static_cast<double>(pos) * inv_freq[static_cast<size_t>(t)];
      const double c = std::cos(angle), s = std::sin(angle);
      const double a = x[t], b = x[t + half];
      out[t] = a * c - b * s;
      out[t + half] = a * s + b * c;
      // |cos/sin error| <= |angle error| + 2u (libm, < 1 ulp); rotation rounding 2u(|a|+|b|).
      const double dang = std::fabs(angle) * freq_err[static_cast<size_t>(t)] * 1.01;
      err[t] = err[t + half] = (std::fabs(a) + std::fabs(b)) * (dang + 4.0 * kU) * 1.01 + kTiny;
    }
  }
};

// One (batch, kv head): the keys after RoPE and the values, as dense row-major [Skv][d] matrices
// for dgemm. A key whose k or v holds a NaN/Inf is zeroed here (rows that see it are NaN rows and
// never read the products; rows that do not see it multiply it by p = 0).
struct KeyBlock {
  int64_t n = 0, d = 0, dk = 0;  // keys, head dim, columns of the bound's |k| matrix
  std::vector<double> k, v;      // [n][d]
  std::vector<uint8_t> finite, small;
  // Bound only. ka [n][dk]: |k'| (and with RoPE |k'| + E_k, E_k) for the score error gemm;
  // vdev [n][d] = |v - mu|, vabs [n][d] = |v| (zero for keys that are not small).
  std::vector<double> kerr, ka, vdev, vabs, mu;
  double vmax = 0;
  // ka, vdev, vabs prepared for the bound's magnitude products (upper_gemm.h).
  UpperOperand ka_up, vdev_up, vabs_up;
};

void load_keys(const AttentionSpec& spec, const AttentionInputs& in, const Rotator* rot, int64_t b,
               int64_t g, bool with_bound, KeyBlock& kb) {
  const int64_t n = spec.seqlen_kv, d = spec.d_head;
  const size_t du = static_cast<size_t>(d);
  kb.n = n;
  kb.d = d;
  kb.dk = rot != nullptr ? 3 * d : d;
  kb.k.assign(static_cast<size_t>(n) * du, 0.0);
  kb.v.assign(kb.k.size(), 0.0);
  kb.kerr.assign(kb.k.size(), 0.0);
  kb.finite.assign(static_cast<size_t>(n), 0);
  kb.small.assign(static_cast<size_t>(n), 0);
  for (int64_t j = 0; j < n; ++j) {
    const size_t src = static_cast<size_t>(spec.kv_index(b, g, j, 0));
    const size_t row = static_cast<size_t>(j) * du;
    const double* kx = &in.k[src];
    const double* vx = &in.v[src];
    const bool finite = all_finite(kx, d) && all_finite(vx, d);
    kb.finite[static_cast<size_t>(j)] = finite;
    if (!finite) continue;
    if (rot != nullptr) {
      rot->apply(kx, d, spec.rope->pos_k[static_cast<size_t>(b * n + j)], &kb.k[row],
                 &kb.kerr[row]);
    } else {
      std::copy(kx, kx + d, &kb.k[row]);
    }
    std::copy(vx, vx + d, &kb.v[row]);
    kb.small[static_cast<size_t>(j)] = all_small(&kb.k[row], d) && all_small(vx, d);
  }
  if (!with_bound) return;

  const size_t dk = static_cast<size_t>(kb.dk);
  kb.ka.assign(static_cast<size_t>(n) * dk, 0.0);
  kb.vdev.assign(kb.k.size(), 0.0);
  kb.vabs.assign(kb.k.size(), 0.0);
  kb.mu.assign(du, 0.0);
  kb.vmax = 0;
  // mu: the mean of the (small) values, so |v - out| <= |v - mu| + |mu - out| is tight when the
  // values share a large offset.
  int64_t used = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (!kb.small[static_cast<size_t>(j)]) continue;
    ++used;
    for (size_t c = 0; c < du; ++c) kb.mu[c] += kb.v[static_cast<size_t>(j) * du + c];
  }
  for (double& m : kb.mu) m /= static_cast<double>(std::max<int64_t>(used, 1));
  for (int64_t j = 0; j < n; ++j) {
    if (!kb.small[static_cast<size_t>(j)]) continue;
    const size_t row = static_cast<size_t>(j) * du;
    double* ka = &kb.ka[static_cast<size_t>(j) * dk];
    for (size_t c = 0; c < du; ++c) {
      const double kabs = std::fabs(kb.k[row + c]), e = kb.kerr[row + c];
      ka[c] = kabs;
      if (rot != nullptr) {
        ka[du + c] = kabs + e;
        ka[2 * du + c] = e;
      }
      kb.vdev[row + c] = std::fabs(kb.v[row + c] - kb.mu[c]);
      kb.vabs[row + c] = std::fabs(kb.v[row + c]);
      kb.vmax = std::fmax(kb.vmax, kb.vabs[row + c]);
    }
  }
  kb.ka_up.prepare(kb.ka.data(), n, kb.dk, kb.dk, true);
  kb.vdev_up.prepare(kb.vdev.data(), n, d, d, false);
  kb.vabs_up.prepare(kb.vabs.data(), n, d, d, false);
}

enum class RowKind : uint8_t { normal, nan, empty };

// The visible keys of one row: the range [lo, hi), or a list for an explicit mask.
struct RowKeys {
  int64_t lo = 0, hi = 0;
  bool listed = false;
  std::vector<int64_t> list;
  void load(const AttentionSpec& spec, int64_t b, int64_t i) {
    const auto range = spec.visible_range(b, i);
    listed = !range;
    if (listed) {
      spec.visible_keys(b, i, list);
    } else {
      lo = range->first;
      hi = range->second;
    }
  }
  size_t count() const { return listed ? list.size() : static_cast<size_t>(hi - lo); }
  // Zeroes row[j] for every key j that each() does not visit (the whole row for a list, which
  // each() then overwrites where visible).
  void zero_others(double* row, int64_t n) const {
    if (listed) {
      std::fill(row, row + n, 0.0);
    } else {
      std::fill(row, row + std::clamp<int64_t>(lo, 0, n), 0.0);
      std::fill(row + std::clamp<int64_t>(hi, 0, n), row + n, 0.0);
    }
  }
  template <class F>
  void each(F&& f) const {
    if (listed) {
      for (int64_t j : list) f(static_cast<size_t>(j));
    } else {
      for (int64_t j = lo; j < hi; ++j) f(static_cast<size_t>(j));
    }
  }
};

// Row i of the additive bias ([Sq][Skv], shared by batch and heads), or null without one.
const double* bias_row(const AttentionSpec& spec, int64_t i) {
  return spec.bias.empty() ? nullptr : &spec.bias[static_cast<size_t>(i * spec.seqlen_kv)];
}

// The score of key j: fl(fl(scale * q.k) + bias_j); the bias is not scaled.
double score(double scale, const double* qk, const double* bias, size_t j) {
  const double s = scale * qk[j];
  return bias ? s + bias[j] : s;
}

// Runs the fast oracle; with `bound` non-null also fills the per-element bound.
OracleOutput run(const AttentionSpec& spec, const AttentionInputs& in, std::vector<double>* bound,
                 std::vector<double>* lse_bound = nullptr, FastStatBounds* stats = nullptr) {
  validate_inputs(spec, in);
  use_one_blas_thread();
  const int64_t H = spec.heads, Sq = spec.seqlen_q, Skv = spec.seqlen_kv, d = spec.d_head;
  const bool with_bound = bound != nullptr;
  std::optional<Rotator> rot;
  if (spec.rope) rot.emplace(*spec.rope, d);
  const bool has_sink = !spec.sink.empty();

  OracleOutput o;
  o.out.assign(static_cast<size_t>(spec.q_elements()), 0.0);
  o.lse.assign(static_cast<size_t>(spec.rows()), -kInf);
  o.row_max.assign(o.lse.size(), -kInf);
  o.row_sum.assign(o.lse.size(), 0.0);
  if (with_bound) bound->assign(o.out.size(), 0.0);
  if (lse_bound != nullptr) lse_bound->assign(o.lse.size(), 0.0);
  if (stats != nullptr) {
    stats->row_max.assign(o.lse.size(), 0.0);
    stats->recip_sum.assign(o.lse.size(), 0.0);
  }

  const int64_t R = std::clamp<int64_t>(kBlockElements / Skv, 1, 256);  // rows per block
  const size_t du = static_cast<size_t>(d), sk = static_cast<size_t>(Skv);
  KeyBlock kb;
  std::vector<double> Q(static_cast<size_t>(R) * du), qerr(Q.size()), Qa, T;
  std::vector<double> scores(static_cast<size_t>(R) * sk), P(scores.size()), O(Q.size());
  std::vector<double> A, W, spread, mag, eps;
  UpperOperand qa_up, a_up, w_up;  // the bound's magnitude operands (buffers reused per block)
  std::vector<double> emax(static_cast<size_t>(R), 0.0);   // max_j eps_j per row (the lse bound)
  std::vector<double> dsmax(static_cast<size_t>(R), 0.0);  // max_j of the score errors per row
  std::vector<RowKeys> vis(static_cast<size_t>(R));
  std::vector<RowKind> kind(static_cast<size_t>(R));
  std::vector<uint8_t> row_small(static_cast<size_t>(R));
  std::vector<double> m(static_cast<size_t>(R)), l(static_cast<size_t>(R)),
      p_sink(static_cast<size_t>(R));
  if (with_bound) {
    Qa.assign(static_cast<size_t>(R) * du * (rot ? 3 : 1), 0.0);
    T.assign(scores.size(), 0.0);
    A.assign(scores.size(), 0.0);
    W.assign(scores.size(), 0.0);
    spread.assign(Q.size(), 0.0);
    mag.assign(Q.size(), 0.0);
  }
  const double gd = gamma(static_cast<double>(d));

  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t g = 0; g < spec.kv_heads; ++g) {
      load_keys(spec, in, rot ? &*rot : nullptr, b, g, with_bound, kb);
      const size_t dk = static_cast<size_t>(kb.dk);
      for (int64_t h = g * spec.group_size(); h < (g + 1) * spec.group_size(); ++h) {
        const double sink = has_sink ? spec.sink[static_cast<size_t>(h)] : -kInf;
        for (int64_t i0 = 0; i0 < Sq; i0 += R) {
          const int64_t rows = std::min(R, Sq - i0);
          // 1. Classify the rows and load q' (zero rows for NaN and fully masked rows).
          std::fill(Q.begin(), Q.end(), 0.0);
          if (with_bound) std::fill(Qa.begin(), Qa.end(), 0.0);
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            const int64_t i = i0 + t;
            const double* qx = &in.q[static_cast<size_t>(spec.q_index(b, h, i, 0))];
            vis[ts].load(spec, b, i);
            bool finite = all_finite(qx, d), small = all_small(qx, d);
            vis[ts].each([&](size_t j) {
              finite = finite && kb.finite[j];
              small = small && kb.small[j];
            });
            kind[ts] = !finite                ? RowKind::nan
                       : vis[ts].count() == 0 ? RowKind::empty
                                              : RowKind::normal;
            row_small[ts] = small;
            if (kind[ts] != RowKind::normal) continue;
            double* q = &Q[ts * du];
            double* qe = &qerr[ts * du];
            if (rot) {
              rot->apply(qx, d, spec.rope->pos_q[static_cast<size_t>(b * Sq + i)], q, qe);
            } else {
              std::copy(qx, qx + d, q);
            }
            if (with_bound && small) {
              // Qa row: [gamma_d |q'|, 1.01 E_q, 1.01 |q'|] against ka's [|k'|, |k'| + E_k, E_k].
              double* qa = &Qa[ts * dk];
              for (size_t c = 0; c < du; ++c) {
                qa[c] = gd * std::fabs(q[c]);
                if (rot) {
                  qa[du + c] = 1.01 * qe[c];
                  qa[2 * du + c] = 1.01 * std::fabs(q[c]);
                }
              }
            }
          }
          // 2. Scores of the block against every key: scores[t][j] = q'_t . k'_j.
          gemm_abt(rows, Skv, d, Q.data(), kb.k.data(), scores.data());
          // 3. Weights p_j = exp(s_j - m) of the visible keys (0 elsewhere) and their sum.
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            if (kind[ts] != RowKind::normal) {
              std::fill(&P[ts * sk], &P[ts * sk] + sk, 0.0);
              continue;
            }
            vis[ts].zero_others(&P[ts * sk], Skv);
            const double* sc = &scores[ts * sk];
            const double* bias = bias_row(spec, i0 + t);
            double* p = &P[ts * sk];
            double mx = sink;
            vis[ts].each([&](size_t j) { mx = std::max(mx, score(spec.scale, sc, bias, j)); });
            Sum2 sum;
            p_sink[ts] = has_sink ? std::exp(sink - mx) : 0.0;
            if (has_sink) sum.add(p_sink[ts]);
            vis[ts].each([&](size_t j) {
              p[j] = std::exp(score(spec.scale, sc, bias, j) - mx);
              sum.add(p[j]);
            });
            m[ts] = mx;
            l[ts] = sum.value();
          }
          // 4. Numerators O = P V, then the rows.
          gemm_ab(rows, d, Skv, P.data(), kb.v.data(), O.data());
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            const int64_t i = i0 + t;
            const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
            double* out = &o.out[static_cast<size_t>(spec.q_index(b, h, i, 0))];
            switch (kind[ts]) {
              case RowKind::nan:
                std::fill(out, out + d, kNaN);
                o.lse[r] = o.row_max[r] = o.row_sum[r] = kNaN;
                break;
              case RowKind::empty:  // out = 0 exactly (bound 0); the sink alone if present
                if (has_sink) {
                  o.lse[r] = o.row_max[r] = sink;
                  o.row_sum[r] = 1.0;
                }
                break;
              case RowKind::normal:
                for (size_t c = 0; c < du; ++c) out[c] = O[ts * du + c] / l[ts];
                o.row_max[r] = m[ts];
                o.row_sum[r] = l[ts];
                o.lse[r] = m[ts] + std::log(l[ts]);
                break;
            }
          }
          if (!with_bound) continue;

          // 5. Bound. T[t][j] >= |scale|-free score error terms: gamma_d sum|q'k'| + RoPE term.
          // The magnitude products are upper bounds by construction (float sgemm with its
          // rounding added, upper_gemm.h); f_dk and f_n below, which covered dgemm's rounding
          // when they were dgemms, are kept as a margin.
          qa_up.prepare(Qa.data(), rows, static_cast<int64_t>(dk), static_cast<int64_t>(dk), true);
          upper_gemm(qa_up, kb.ka_up, true, T.data(), Skv);
          const double f_dk = 1 + 2 * gamma(static_cast<double>(dk));
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            emax[ts] = dsmax[ts] = 0;
            if (kind[ts] != RowKind::normal || !row_small[ts]) {
              std::fill(&A[ts * sk], &A[ts * sk] + sk, 0.0);
              std::fill(&W[ts * sk], &W[ts * sk] + sk, 0.0);
              continue;
            }
            vis[ts].zero_others(&A[ts * sk], Skv);
            vis[ts].zero_others(&W[ts * sk], Skv);
            const double* sc = &scores[ts * sk];
            const double* bias = bias_row(spec, i0 + t);
            vis[ts].each([&](size_t j) {
              const double s = score(spec.scale, sc, bias, j);
              // Score error: dgemm (gamma_d sum|q'k'|), RoPE, the scale product (u|scale q.k|),
              // the bias add (u|s|; the bias itself is exact) and underflow; then eps_j =
              // log-relative error of p_j (subtraction, exp).
              const double ds =
                  2.0 * kU * std::fabs(spec.scale * sc[j]) + (bias ? kU * std::fabs(s) : 0.0) +
                  std::fabs(spec.scale) * (T[ts * sk + j] * f_dk + static_cast<double>(d) * kTiny);
              const double e = ds + kU * std::fabs(s - m[ts]) + 2.0 * kU;
              emax[ts] = std::max(emax[ts], e);
              dsmax[ts] = std::max(dsmax[ts], ds);
              const double w = P[ts * sk + j] / l[ts];
              W[ts * sk + j] = w;
              // e^e <= 1 + 2e for 0 <= e <= 1.25 (libm's exp per pair was ~5% of a check); the
              // extra factor covers the rounding of 1 + 2e.
              const double ee = e <= 1 ? (1 + 2 * e) * (1 + 0x1p-50) : std::exp(e);
              A[ts * sk + j] = w * e * ee;
            });
          }
          a_up.prepare(A.data(), rows, Skv, Skv, true);
          w_up.prepare(W.data(), rows, Skv, Skv, true);
          upper_gemm(a_up, kb.vdev_up, false, spread.data(), d);
          upper_gemm(w_up, kb.vabs_up, false, mag.data(), d);
          const double f_n = 1 + 2 * gamma(static_cast<double>(Skv + 2));
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            const int64_t i = i0 + t;
            const size_t base = static_cast<size_t>(spec.q_index(b, h, i, 0));
            double* bnd = &(*bound)[base];
            if (kind[ts] == RowKind::empty) continue;  // bound 0
            if (kind[ts] == RowKind::nan || !row_small[ts] || !std::isfinite(l[ts])) {
              std::fill(bnd, bnd + d, kInf);
              const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
              if (lse_bound != nullptr && kind[ts] != RowKind::nan) (*lse_bound)[r] = kInf;
              if (stats != nullptr && kind[ts] != RowKind::nan) {
                stats->row_max[r] = stats->recip_sum[r] = kInf;
              }
              continue;
            }
            double a_sum = 0;  // sum_j w_j eps_j e^eps_j, for the |mu - out| part of the spread
            vis[ts].each([&](size_t j) { a_sum += A[ts * sk + j]; });
            const double n_keys = static_cast<double>(vis[ts].count() + 1);
            const double gn = gamma(n_keys);
            // Final roundings: dgemm of P V (gamma_Skv sum p|v|), Sum2 for l, the division.
            const double rnd_out = 4.0 * kU + 2.0 * gn * gn;
            const double rnd_num = gamma(static_cast<double>(Skv)) + rnd_out;
            const double eps_sink = has_sink ? kU * std::fabs(sink - m[ts]) + 2.0 * kU : 0.0;
            const double w_sink = p_sink[ts] / l[ts];
            if (lse_bound != nullptr) {
              // lse = m + log(l): each p_j within e^{±eps_j} (the sink's too), Sum2's l within
              // 4u + 2 gamma_n^2 relative, log within one ulp, the add: doubled like B.
              const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
              const double lse = o.lse[r];
              const double e = std::max(emax[ts], eps_sink) + rnd_out +
                               2.0 * kU * std::fabs(lse - m[ts]) + kU * std::fabs(lse) +
                               n_keys * kTiny / l[ts];
              (*lse_bound)[r] = std::isfinite(e) ? 2.0 * e : kInf;
            }
            if (stats != nullptr) {
              // The max of the scores is exact in double: m is off by at most the largest score
              // error (the sink is exact). l = sum_j exp(s^_j - m^) is, against the exact sum at
              // the exact max, within e^{+-(max eps_j + |m^ - m|)} (eps_j: score, subtraction
              // and exp) and Sum2's 4u + 2 gamma_n^2; 1 / l rounds once more. Doubled like B.
              const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
              const double em = dsmax[ts];
              const double rel = std::expm1(std::max(emax[ts], eps_sink) + em) + rnd_out + kU +
                                 n_keys * kTiny / l[ts];
              stats->row_max[r] = std::isfinite(em) ? 2.0 * em : kInf;
              stats->recip_sum[r] = std::isfinite(rel) ? 2.0 * rel / l[ts] : kInf;
            }
            for (size_t c = 0; c < du; ++c) {
              const double oc = o.out[base + c];
              const double sp = (spread[ts * du + c] + std::fabs(kb.mu[c] - oc) * a_sum) * f_n +
                                w_sink * eps_sink * std::exp(eps_sink) * std::fabs(oc);
              const double mg = mag[ts * du + c] * f_n;
              double e = 2.0 * (sp + rnd_num * mg + rnd_out * std::fabs(oc)) +
                         n_keys * kTiny * (kb.vmax + 1.0);
              if (!std::isfinite(e) || !std::isfinite(oc)) e = kInf;
              bnd[c] = e;
            }
          }
        }
      }
    }
  }
  return o;
}

}  // namespace

OracleOutput fast_attention(const AttentionSpec& spec, const AttentionInputs& in) {
  return run(spec, in, nullptr);
}

OracleOutput fast_attention_with_bound(const AttentionSpec& spec, const AttentionInputs& in,
                                       std::vector<double>& bound, std::vector<double>* lse_bound,
                                       FastStatBounds* stats) {
  return run(spec, in, &bound, lse_bound, stats);
}

std::vector<double> fast_oracle_bound(const AttentionSpec& spec, const AttentionInputs& in,
                                      const OracleOutput& fast) {
  std::vector<double> bound;
  run(spec, in, &bound);
  if (fast.out.size() != bound.size()) {
    throw SpecError("out", "fast output has " + std::to_string(fast.out.size()) +
                               " values, expected " + std::to_string(bound.size()));
  }
  return bound;
}

}  // namespace ncv::oracle
