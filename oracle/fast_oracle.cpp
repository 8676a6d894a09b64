// The fast oracle: the exact oracle's algorithm in double, with compensated dot products and
// sums (Ogita-Rump-Oishi Dot2/Sum2: Dekker TwoProduct with Veltkamp splits, TwoSum), and the
// per-element bound on its distance to the exact oracle. The derivation is in oracle/README.md
// "Fast oracle bound"; the comments below name each term.
#include "oracle/fast_oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncv::oracle {

namespace {

constexpr double kU = 0x1p-53;  // unit roundoff of double
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTiny = 0x1p-1060;  // covers subnormal underflow of products and exp

// Compensated sum (Sum2): the rounding error of each addition carried separately.
struct Dot2 {
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
  // out = rotation of x at pos; err (optional) = bound on |out - exact rotation|.
  void apply(const double* x, int64_t d, int64_t pos, double* out, double* err) const {
    const int64_t half = d / 2;
    for (int64_t t = 0; t < half; ++t) {
      const double angle = static_cast<double>(pos) * inv_freq[static_cast<size_t>(t)];
      const double c = std::cos(angle), s = std::sin(angle);
      const double a = x[t], b = x[t + half];
      out[t] = a * c - b * s;
      out[t + half] = a * s + b * c;
      if (err != nullptr) {
        // |cos/sin error| <= |angle error| + 2u (libm, < 1 ulp); rotation rounding 2u(|a|+|b|).
        const double dang = std::fabs(angle) * freq_err[static_cast<size_t>(t)] * 1.01;
        const double e = (std::fabs(a) + std::fabs(b)) * (dang + 4.0 * kU) * 1.01 + kTiny;
        err[t] = err[t + half] = e;
      }
    }
  }
};

// Veltkamp split: a = hi + lo exactly, each half with at most 26 significant bits, so every
// product of halves is exact in double (needs |a| < 2^996; larger values make the bound inf).
inline void split(double a, double& hi, double& lo) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  hi = t - (t - a);
  lo = a - hi;
}

// One compensated multiply-add step (Dekker TwoProduct + Knuth TwoSum, Ogita-Rump-Oishi Dot2):
// S + C accumulates sum a*b with S the running float sum and C the collected rounding errors.
inline void dot2_step(double a, double ah, double al, double b, double bh, double bl, double& S,
                      double& C) {
  const double p = a * b;
  const double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  const double t = S + p;
  const double z = t - S;
  C += ((S - (t - z)) + (p - z)) + e;
  S = t;
}

constexpr double kMaxMagnitude = 0x1p995;

// The two hot loops, compiled for AVX2 too (picked at load time); the arithmetic is the same
// (no FMA contraction: the build uses -ffp-contract=off), only the vector width changes.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NCV_HOT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NCV_HOT_CLONES
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// The same steps with the product's error from one fused multiply-add: fma(a, b, -p) is exactly
// a*b - p, the value Dekker's formula gives except where the product underflows (there the fma is
// the more accurate of the two); the stated bound covers both. Chosen at run time on CPUs with
// AVX2 and FMA.
__attribute__((target("avx2,fma"))) inline void dot2_step_fma(double a, double b, double& S,
                                                              double& C) {
  const double p = a * b;
  const double e = __builtin_fma(a, b, -p);
  const double t = S + p;
  const double z = t - S;
  C += ((S - (t - z)) + (p - z)) + e;
  S = t;
}
__attribute__((target("avx2,fma"))) void dot2_axpy_fma(double a, const double* x, size_t n,
                                                       double* S, double* C) {
  for (size_t j = 0; j < n; ++j) dot2_step_fma(a, x[j], S[j], C[j]);
}
bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#else
void dot2_axpy_fma(double, const double*, size_t, double*, double*) {}
bool cpu_has_fma() {
  return false;
}
#endif

// S[j] + C[j] += a * x[j] for all j: the scores of one query against all keys (a = q[c]) and
// the output accumulation over dims (a = p_j); xh/xl are x's Veltkamp halves.
NCV_HOT_CLONES void dot2_axpy_split(double a, const double* x, const double* xh, const double* xl,
                                    size_t n, double* S, double* C) {
  double ah, al;
  split(a, ah, al);
  for (size_t j = 0; j < n; ++j) dot2_step(a, ah, al, x[j], xh[j], xl[j], S[j], C[j]);
}
void dot2_axpy(double a, const double* x, const double* xh, const double* xl, size_t n, double* S,
               double* C) {
  if (cpu_has_fma()) return dot2_axpy_fma(a, x, n, S, C);
  dot2_axpy_split(a, x, xh, xl, n, S, C);
}

// Runs the fast oracle; with `bound` non-null also fills the per-element bound.
OracleOutput run(const AttentionSpec& spec, const AttentionInputs& in, std::vector<double>* bound) {
  validate_inputs(spec, in);
  const int64_t H = spec.heads, Sq = spec.seqlen_q, Skv = spec.seqlen_kv, d = spec.d_head;
  const bool with_bound = bound != nullptr;
  std::optional<Rotator> rot;
  if (spec.rope) rot.emplace(*spec.rope, d);

  OracleOutput o;
  o.out.assign(static_cast<size_t>(spec.q_elements()), 0.0);
  o.lse.assign(static_cast<size_t>(spec.rows()), -kInf);
  o.row_max.assign(o.lse.size(), -kInf);
  o.row_sum.assign(o.lse.size(), 0.0);
  if (with_bound) bound->assign(o.out.size(), 0.0);

  const size_t du = static_cast<size_t>(d), sk = static_cast<size_t>(Skv);
  // Per (batch, kv head): keys (rotated) [j][c] and transposed [c][j] with their splits, values
  // [j][c] with splits, and whether key j's k and v are all finite and not too large.
  std::vector<double> kbuf(sk * du), kerr(sk * du, 0.0), kT(sk * du), khT(sk * du), klT(sk * du);
  std::vector<double> vbuf(sk * du), vh(sk * du), vl(sk * du);
  std::vector<uint8_t> key_finite(sk), key_small(sk);
  std::vector<double> q(du), qerr(du, 0.0), S(sk), C(sk), s, ds, p, accS(du), accC(du);
  std::vector<int64_t> vis;
  int64_t cached_b = -1, cached_g = -1;
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = spec.kv_head_of(h);
      if (b != cached_b || g != cached_g) {
        for (int64_t j = 0; j < Skv; ++j) {
          const size_t src = static_cast<size_t>(spec.kv_index(b, g, j, 0));
          const size_t row = static_cast<size_t>(j) * du;
          const double* kx = &in.k[src];
          const double* vx = &in.v[src];
          key_finite[static_cast<size_t>(j)] = all_finite(kx, d) && all_finite(vx, d);
          if (rot) {
            rot->apply(kx, d, spec.rope->pos_k[static_cast<size_t>(b * Skv + j)], &kbuf[row],
                       with_bound ? &kerr[row] : nullptr);
          } else {
            for (size_t c = 0; c < du; ++c) kbuf[row + c] = kx[c];
          }
          bool small = true;
          for (size_t c = 0; c < du; ++c) {
            const double kv = kbuf[row + c];
            const size_t t = c * sk + static_cast<size_t>(j);
            kT[t] = kv;
            split(kv, khT[t], klT[t]);
            vbuf[row + c] = vx[c];
            split(vx[c], vh[row + c], vl[row + c]);
            small = small && std::fabs(kv) < kMaxMagnitude && std::fabs(vx[c]) < kMaxMagnitude;
          }
          key_small[static_cast<size_t>(j)] = small;
        }
        cached_b = b;
        cached_g = g;
      }
      for (int64_t i = 0; i < Sq; ++i) {
        const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
        const size_t o0 = static_cast<size_t>(spec.q_index(b, h, i, 0));
        const double* qx = &in.q[o0];
        spec.visible_keys(b, i, vis);
        bool finite = all_finite(qx, d);
        bool small = true;
        for (int64_t j : vis) {
          finite = finite && key_finite[static_cast<size_t>(j)];
          small = small && key_small[static_cast<size_t>(j)];
        }
        if (!finite) {
          for (size_t c = 0; c < du; ++c) o.out[o0 + c] = kNaN;
          o.lse[r] = o.row_max[r] = o.row_sum[r] = kNaN;
          if (with_bound) {
            for (size_t c = 0; c < du; ++c) (*bound)[o0 + c] = kInf;
          }
          continue;
        }
        const bool has_sink = !spec.sink.empty();
        const double sink = has_sink ? spec.sink[static_cast<size_t>(h)] : -kInf;
        if (vis.empty()) {
          if (has_sink) {
            o.lse[r] = o.row_max[r] = sink;
            o.row_sum[r] = 1.0;
          }
          continue;  // out = 0 exactly, bound 0
        }
        if (rot) {
          rot->apply(qx, d, spec.rope->pos_q[static_cast<size_t>(b * Sq + i)], q.data(),
                     with_bound ? qerr.data() : nullptr);
        } else {
          for (size_t c = 0; c < du; ++c) q[c] = qx[c];
        }
        // All Skv scores at once, key-parallel (vectorizes): S[j] + C[j] = Dot2(q, k_j).
        std::fill(S.begin(), S.end(), 0.0);
        std::fill(C.begin(), C.end(), 0.0);
        for (size_t c = 0; c < du; ++c) {
          small = small && std::fabs(q[c]) < kMaxMagnitude;
          dot2_axpy(q[c], &kT[c * sk], &khT[c * sk], &klT[c * sk], sk, S.data(), C.data());
        }
        s.assign(vis.size(), 0.0);
        double m = sink;
        for (size_t n = 0; n < vis.size(); ++n) {
          const auto j = static_cast<size_t>(vis[n]);
          s[n] = spec.scale * (S[j] + C[j]);
          if (s[n] > m) m = s[n];
        }
        p.assign(vis.size(), 0.0);
        Dot2 l;
        double p_sink = 0;
        if (has_sink) {
          p_sink = std::exp(sink - m);
          l.add(p_sink);
        }
        for (size_t n = 0; n < vis.size(); ++n) {
          p[n] = std::exp(s[n] - m);
          l.add(p[n]);
        }
        // PV, dimension-parallel (vectorizes): accS[c] + accC[c] = Dot2(p, v[.][c]).
        std::fill(accS.begin(), accS.end(), 0.0);
        std::fill(accC.begin(), accC.end(), 0.0);
        for (size_t n = 0; n < vis.size(); ++n) {
          const size_t row = static_cast<size_t>(vis[n]) * du;
          dot2_axpy(p[n], &vbuf[row], &vh[row], &vl[row], du, accS.data(), accC.data());
        }
        const double lv = l.value();
        for (size_t c = 0; c < du; ++c) o.out[o0 + c] = (accS[c] + accC[c]) / lv;
        o.row_max[r] = m;
        o.row_sum[r] = lv;
        o.lse[r] = m + std::log(lv);
        if (!with_bound) continue;

        // Score error: Dot2 (u|dot| + gamma_d^2 sum|q k|), the scale product (u|s|), and the
        // RoPE errors of q and k propagated through the dot product.
        ds.assign(vis.size(), 0.0);
        const double gd = static_cast<double>(d) * kU;
        for (size_t n = 0; n < vis.size(); ++n) {
          const size_t row = static_cast<size_t>(vis[n]) * du;
          double abs_dot = 0, rope_term = 0;
          for (size_t c = 0; c < du; ++c) {
            abs_dot += std::fabs(q[c] * kbuf[row + c]);
            if (rot) {
              rope_term += qerr[c] * (std::fabs(kbuf[row + c]) + kerr[row + c]) +
                           std::fabs(q[c]) * kerr[row + c];
            }
          }
          ds[n] = 2.0 * kU * std::fabs(s[n]) +
                  std::fabs(spec.scale) *
                      (2.0 * gd * gd * abs_dot + rope_term * 1.01 + static_cast<double>(d) * kTiny);
        }
        // Output bound (README "Fast oracle bound"): with w_j = p_j / l and the log-relative
        // error of each p_j eps_j = ds_j + u|s_j - m| + 2u (subtraction, exp),
        //   |out - exact| <= 2 [ sum_j w_j eps_j e^eps_j |v_j - out| + w_sink eps_sink |out|
        //                        + (4u + 2 gamma_n^2)(|out| + sum_j w_j |v_j|) ] + tiny.
        const double n_keys = static_cast<double>(vis.size() + 1);
        const double gn = n_keys * kU;
        const double rnd = 4.0 * kU + 2.0 * gn * gn;
        const double eps_sink = has_sink ? kU * std::fabs(sink - m) + 2.0 * kU : 0.0;
        const double w_sink = p_sink / lv;
        for (size_t c = 0; c < du; ++c) {
          const double oc = o.out[o0 + c];
          double spread = 0, mag = 0, vmax = 0;
          for (size_t n = 0; n < vis.size(); ++n) {
            const double vc = vbuf[static_cast<size_t>(vis[n]) * du + c];
            const double w = p[n] / lv;
            const double eps = ds[n] + kU * std::fabs(s[n] - m) + 2.0 * kU;
            spread += w * eps * std::exp(eps) * std::fabs(vc - oc);
            mag += w * std::fabs(vc);
            vmax = std::fmax(vmax, std::fabs(vc));
          }
          spread += w_sink * eps_sink * std::exp(eps_sink) * std::fabs(oc);
          double bnd = 2.0 * (spread + rnd * (std::fabs(oc) + mag)) + n_keys * kTiny * (vmax + 1.0);
          if (!small || !std::isfinite(bnd) || !std::isfinite(oc) || !std::isfinite(lv)) bnd = kInf;
          (*bound)[o0 + c] = bnd;
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
