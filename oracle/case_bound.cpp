// Interval evaluation of a precision contract (oracle/ERROR_BOUNDS.md "The case bound"). The
// stages follow contract_reference.cpp one for one; each carries [lo, hi] (every value a kernel
// honouring the contract can hold there) and `ref` (one evaluation: each stage rounded once from
// its double-precision value).
#include "oracle/case_bound.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/numerics/fp32_exp.h"
#include "oracle/blas_threads.h"
#include "oracle/error_bound.h"

namespace ncv::oracle {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kU32 = std::ldexp(1.0, -24);
const double kEps64 = std::ldexp(1.0, -52);
// Absolute rounding error of an fp32 operation in the subnormal range (half the spacing).
const double kEta32 = std::ldexp(1.0, -150);

struct Iv {
  double lo = 0, hi = 0;
};

// Outward nudges for an endpoint computed in double from other endpoints: it may sit a few double
// ulps on the wrong side of the real endpoint. The nudge is far above that and far below any
// fp32 ulp, so a value that is representable in fp32 rounds back to itself.
double down(double x) {
  return x - std::fabs(x) * 0x1p-44 - 0x1p-1000;
}
double up(double x) {
  return x + std::fabs(x) * 0x1p-44 + 0x1p-1000;
}

// Rounding to nearest is monotone, and every value a kernel holds at a stage is an fp32 value or
// narrower: a value of dtype t that is >= x is >= quantize(t, fp32(x)), and one that is <= x is
// <= it. So rounding both ends of an interval keeps every possible value inside.
double round_to(DType t, double x) {
  return quantize(t, static_cast<float>(x));
}
Iv round_to(DType t, Iv v) {
  return {round_to(t, down(v.lo)), round_to(t, up(v.hi))};
}

Iv add(Iv a, Iv b) {
  return {a.lo + b.lo, a.hi + b.hi};
}
Iv scaled(Iv a, double s) {
  return s >= 0 ? Iv{a.lo * s, a.hi * s} : Iv{a.hi * s, a.lo * s};
}
// a * b for b > 0.
Iv times_positive(Iv a, Iv b) {
  return {std::min(a.lo * b.lo, a.lo * b.hi), std::max(a.hi * b.lo, a.hi * b.hi)};
}
// a / b for b > 0.
Iv divided_by_positive(Iv a, Iv b) {
  return {std::min(a.lo / b.lo, a.lo / b.hi), std::max(a.hi / b.lo, a.hi / b.hi)};
}
Iv hull(Iv a, Iv b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

// Unit roundoff of an accumulation in `acc` whose operands are fp32 products: one fp32 rounding
// of the product or sum, and one more into `acc` when it is narrower.
double accumulation_u(DType acc) {
  return acc == DType::fp32 ? kU32 : unit_roundoff(acc) + 2 * kU32;
}

// The fp32 exp of an argument in [x.lo, x.hi] (contract: within exp_ulps fp32 ulps, and
// exp_ulps half-spacings in the subnormal range), rounded to `t`.
Iv exp_interval(Iv x, double exp_ulps, DType t) {
  const double rel = exp_ulps * std::ldexp(1.0, -23), abs = exp_ulps * std::ldexp(1.0, -149);
  const double e_hi = std::exp(x.hi);
  // exp(lo) from exp(hi) when the interval is narrow: exp(-w) >= 1 - w.
  const double w = x.hi - x.lo;
  const double e_lo = w == 0 ? e_hi : w < 1e-3 ? e_hi * (1 - w) : std::exp(x.lo);
  return round_to(t, Iv{std::max(0.0, e_lo * (1 - rel) - abs), e_hi * (1 + rel) + abs});
}

// A q or k vector as fed to the QK^T matmul: centre and radius per component (radius 0 unless
// RoPE leaves the fp32 rotation open, or the folded scale may multiply q already rounded to the
// fed dtype: `round_first`, error_bound.h folded_scale_rounds_twice), following
// contract_reference's load_vec.
void fed_vector(const double* src, int64_t d, const std::vector<double>* inv_freq, int64_t pos,
                bool fold_scale, bool round_first, float scale, DType fed, double* centre,
                double* radius) {
  if (inv_freq == nullptr) {
    for (int64_t c = 0; c < d; ++c) {
      const float x = static_cast<float>(src[c]);
      centre[c] = quantize(fed, fold_scale ? scale * x : x);
      radius[c] = 0;
      if (fold_scale && round_first) {
        const double other = quantize(fed, scale * static_cast<float>(quantize(fed, x)));
        const double lo = std::min(centre[c], other), hi = std::max(centre[c], other);
        centre[c] = 0.5 * (lo + hi);
        radius[c] = up(0.5 * (hi - lo));
      }
    }
    return;
  }
  // The rotation in fp32 is within 4 u32 (|a| + |b|) of the exact one (error_bound.cpp).
  const int64_t half = d / 2;
  for (int64_t c = 0; c < d; ++c) {
    Iv v{src[c], src[c]};
    if (c < 2 * half) {
      const int64_t t = c % half;
      const double ang = static_cast<double>(pos) * (*inv_freq)[static_cast<size_t>(t)];
      const double a = src[t], b = src[t + half];
      const double x =
          c < half ? a * std::cos(ang) - b * std::sin(ang) : a * std::sin(ang) + b * std::cos(ang);
      const double r = 4 * kU32 * (std::fabs(a) + std::fabs(b)) + 2 * kEta32;
      v = round_to(DType::fp32, Iv{x - r, x + r});
    }
    if (fold_scale) {
      Iv once = round_to(DType::fp32, scaled(v, scale));
      if (round_first) once = hull(once, round_to(DType::fp32, scaled(round_to(fed, v), scale)));
      v = once;
    }
    v = round_to(fed, v);
    centre[c] = 0.5 * (v.lo + v.hi);
    radius[c] = up(0.5 * (v.hi - v.lo));
  }
}

// C[m][n] = A[m][k] . B[n][k]^T (row-major, leading dimensions lda / ldb).
void gemm_nt(int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + static_cast<size_t>(m) * static_cast<size_t>(n), 0.0);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
}
// C[m][n] = A[m][k] . B[k][n].
void gemm_nn(int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + static_cast<size_t>(m) * static_cast<size_t>(n), 0.0);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
}

// Query rows per block: the [rows][Skv] score and P blocks stay small at any key length.
constexpr int64_t kRowBlock = 64;

struct KeySide {
  std::vector<double> kc, kr, kabs;  // [Skv][d] centre, radius, |centre| + radius
  std::vector<double> kabs_c;        // [Skv][d] |centre| (with RoPE only)
  std::vector<double> v, vabs;       // [Skv][d] V as fed to PV and |V|
  bool has_radius = false;
};

KeySide key_side(const PrecisionContract& ct, const AttentionSpec& spec, const AttentionInputs& in,
                 int64_t b, int64_t kvh, const std::vector<double>* inv_freq) {
  const int64_t S = spec.seqlen_kv, d = spec.d_head;
  const size_t n = static_cast<size_t>(S * d);
  KeySide ks;
  ks.kc.resize(n);
  ks.kr.resize(n);
  ks.kabs.resize(n);
  ks.v.resize(n);
  ks.vabs.resize(n);
  for (int64_t j = 0; j < S; ++j) {
    const size_t at = static_cast<size_t>(j * d);
    const int64_t src = spec.kv_index(b, kvh, j, 0);
    fed_vector(in.k.data() + src, d, inv_freq,
               inv_freq ? spec.rope->pos_k[static_cast<size_t>(b * S + j)] : 0, false, false, 1.0f,
               ct.k_dtype, &ks.kc[at], &ks.kr[at]);
    for (int64_t c = 0; c < d; ++c) {
      const size_t x = at + static_cast<size_t>(c);
      ks.kabs[x] = std::fabs(ks.kc[x]) + ks.kr[x];
      ks.has_radius = ks.has_radius || ks.kr[x] != 0;
      ks.v[x] = quantize(ct.v_dtype, static_cast<float>(in.v[static_cast<size_t>(src + c)]));
      ks.vabs[x] = std::fabs(ks.v[x]);
    }
  }
  if (ks.has_radius) {
    ks.kabs_c.resize(n);
    for (size_t x = 0; x < n; ++x) ks.kabs_c[x] = std::fabs(ks.kc[x]);
  }
  return ks;
}

// Per row block: the score sums as matrix products.
struct ScoreBlock {
  std::vector<double> qc, qr, qabs, qabs_c;  // [rows][d]
  std::vector<double> dot, mag, radius;      // [rows][Skv]
};

// The PV products of one row block over keys [j0, j1): centre . V, centre . |V|, radius . |V|
// and reference . V, each [rows][d].
struct PvProducts {
  std::vector<double> cv, ca, ra, refv;
};

PvProducts pv_products(int rows, int64_t S, int64_t d, int64_t j0, int64_t j1,
                       const std::vector<double>& pc, const std::vector<double>& pr,
                       const std::vector<double>& pref, const KeySide& ks) {
  PvProducts p;
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(d);
  p.cv.resize(n);
  p.ca.resize(n);
  p.ra.resize(n);
  p.refv.resize(n);
  const int k = static_cast<int>(j1 - j0), dd = static_cast<int>(d), lda = static_cast<int>(S);
  const size_t off = static_cast<size_t>(j0), voff = static_cast<size_t>(j0 * d);
  gemm_nn(rows, dd, k, pc.data() + off, lda, ks.v.data() + voff, dd, p.cv.data());
  gemm_nn(rows, dd, k, pc.data() + off, lda, ks.vabs.data() + voff, dd, p.ca.data());
  gemm_nn(rows, dd, k, pr.data() + off, lda, ks.vabs.data() + voff, dd, p.ra.data());
  gemm_nn(rows, dd, k, pref.data() + off, lda, ks.v.data() + voff, dd, p.refv.data());
  return p;
}

// The fp32 PSUM value of a sum of `terms` products with centre cv, radius ra and magnitude ca+ra
// (plus the double evaluation's own error), and its reference.
Iv psum_interval(double cv, double ca, double ra, int64_t terms) {
  const double mag = ca + ra;
  const double w = ra + gamma_n(terms + 1, kU32) * mag +
                   static_cast<double>(terms + 2) * kEps64 * mag +
                   static_cast<double>(terms + 1) * 2 * kEta32;
  return round_to(DType::fp32, Iv{cv - w, cv + w});
}

}  // namespace

CaseBound case_error_bound(const PrecisionContract& ct, const AttentionSpec& spec,
                           const AttentionInputs& in, const std::vector<double>& exact) {
  spec.validate();
  ct.validate();
  validate_inputs(spec, in);
  use_one_blas_thread();
  const int64_t B = spec.batch, H = spec.heads, Sq = spec.seqlen_q, S = spec.seqlen_kv,
                d = spec.d_head;
  CaseBound res;
  res.bound.assign(static_cast<size_t>(spec.q_elements()), kInf);
  res.reference.assign(static_cast<size_t>(spec.q_elements()), 0.0);

  const std::vector<double> inv_freq = rope_inverse_frequencies(spec);
  const std::vector<double>* rf = spec.rope ? &inv_freq : nullptr;
  const float scale = static_cast<float>(spec.scale);
  const double u_qk = accumulation_u(ct.qk_accum), eta_qk = subnormal_half_spacing(ct.qk_accum);
  const double u_sum = accumulation_u(ct.sum_dtype), eta_sum = subnormal_half_spacing(ct.sum_dtype);
  const bool deferred = ct.norm == Normalisation::deferred;
  const DType nd = ct.norm_dtype;
  const bool round_q_first = folded_scale_rounds_twice(ct, spec.input_dtype, scale);
  // Online softmax (ct.online_tile): p of a tile is rounded at that tile's running max, not at
  // the row max, so the stored exp and P are no longer values of their dtypes at the row max's
  // scale: their roundings widen the interval by the unit roundoff instead of rounding its ends.
  const bool online = ct.online_tile > 0;
  const double u_exp_store = conversion_roundoff(DType::fp32, ct.exp_dtype);
  const double u_p_store = conversion_roundoff(ct.exp_dtype, ct.p_dtype);
  const double eta_exp = subnormal_half_spacing(ct.exp_dtype);
  const double eta_p = subnormal_half_spacing(ct.p_dtype);
  int64_t online_tiles = 0;
  const double u_part = online ? conversion_roundoff(DType::fp32, ct.online_partial_dtype) : 0.0;
  const double eta_part = u_part > 0 ? subnormal_half_spacing(ct.online_partial_dtype) : 0.0;

  ScoreBlock sb;
  std::vector<double> pc, pr, pref;                  // [rows][Skv] P as fed to PV
  std::vector<Iv> sc(static_cast<size_t>(S));        // one row's scores
  std::vector<double> sref(static_cast<size_t>(S));  // and their reference
  std::vector<Iv> ph(static_cast<size_t>(S));        // exp outputs
  std::vector<float> arg_ref(static_cast<size_t>(S)), ph_ref(static_cast<size_t>(S));
  std::vector<uint8_t> vis(static_cast<size_t>(S));
  std::vector<Iv> l_row;
  std::vector<double> l_ref_row;
  std::vector<int64_t> n_row;

  for (int64_t b = 0; b < B; ++b) {
    for (int64_t kvh = 0; kvh < spec.kv_heads; ++kvh) {
      const KeySide ks = key_side(ct, spec, in, b, kvh, rf);
      for (int64_t h = 0; h < H; ++h) {
        if (spec.kv_head_of(h) != kvh) continue;
        const bool has_sink = !spec.sink.empty();
        const double sink =
            has_sink
                ? quantize(ct.score_dtype, static_cast<float>(spec.sink[static_cast<size_t>(h)]))
                : 0.0;
        for (int64_t i0 = 0; i0 < Sq; i0 += kRowBlock) {
          const int rows = static_cast<int>(std::min(kRowBlock, Sq - i0));
          const size_t rd = static_cast<size_t>(rows) * static_cast<size_t>(d);
          const size_t rs = static_cast<size_t>(rows) * static_cast<size_t>(S);
          sb.qc.resize(rd);
          sb.qr.resize(rd);
          sb.qabs.resize(rd);
          bool q_radius = false;
          for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            const size_t at = static_cast<size_t>(r) * static_cast<size_t>(d);
            fed_vector(in.q.data() + spec.q_index(b, h, i, 0), d, rf,
                       rf ? spec.rope->pos_q[static_cast<size_t>(b * Sq + i)] : 0,
                       ct.scale_folded_into_q, round_q_first, scale, ct.q_dtype, &sb.qc[at],
                       &sb.qr[at]);
            for (int64_t c = 0; c < d; ++c) {
              const size_t x = at + static_cast<size_t>(c);
              sb.qabs[x] = std::fabs(sb.qc[x]) + sb.qr[x];
              q_radius = q_radius || sb.qr[x] != 0;
            }
          }
          const int n = static_cast<int>(S), dd = static_cast<int>(d);
          sb.dot.resize(rs);
          sb.mag.resize(rs);
          gemm_nt(rows, n, dd, sb.qc.data(), dd, ks.kc.data(), dd, sb.dot.data());
          gemm_nt(rows, n, dd, sb.qabs.data(), dd, ks.kabs.data(), dd, sb.mag.data());
          const bool radius = q_radius || ks.has_radius;
          if (radius) {
            // Radius of q'.k' over the boxes: (|qc| + qr).(|kc| + kr) - |qc|.|kc|.
            sb.qabs_c.resize(rd);
            for (size_t x = 0; x < rd; ++x) sb.qabs_c[x] = std::fabs(sb.qc[x]);
            sb.radius.resize(rs);
            const std::vector<double>& kabs_c = ks.has_radius ? ks.kabs_c : ks.kabs;
            gemm_nt(rows, n, dd, sb.qabs_c.data(), dd, kabs_c.data(), dd, sb.radius.data());
            for (size_t x = 0; x < rs; ++x) sb.radius[x] = sb.mag[x] - sb.radius[x];
          }

          pc.assign(rs, 0.0);
          pr.assign(rs, 0.0);
          pref.assign(rs, 0.0);
          l_row.assign(static_cast<size_t>(rows), Iv{});
          l_ref_row.assign(static_cast<size_t>(rows), 0.0);
          n_row.assign(static_cast<size_t>(rows), 0);
          for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            int64_t nvis = 0;
            if (const auto range = spec.visible_range(b, i)) {
              std::fill(vis.begin(), vis.end(), uint8_t{0});
              for (int64_t j = std::max<int64_t>(0, range->first); j < std::min(S, range->second);
                   ++j) {
                vis[static_cast<size_t>(j)] = 1;
              }
            } else {
              for (int64_t j = 0; j < S; ++j) vis[static_cast<size_t>(j)] = spec.visible(b, i, j);
            }
            for (int64_t j = 0; j < S; ++j) nvis += vis[static_cast<size_t>(j)];
            n_row[static_cast<size_t>(r)] = nvis;
            if (nvis == 0) continue;  // fully masked: the output is 0 (a point)

            // Scores: the exact dot of the fed vectors, the fp32 (qk_accum) accumulation in any
            // order within gamma_d, the dgemm's own error; then the contract's roundings.
            Iv m{-kInf, -kInf};
            double m_ref = -kInf;
            const size_t row = static_cast<size_t>(r) * static_cast<size_t>(S);
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              const size_t x = row + static_cast<size_t>(j);
              const double mag = sb.mag[x];
              const double w = (radius ? sb.radius[x] : 0) + gamma_n(d, u_qk) * mag +
                               static_cast<double>(d + 4) * kEps64 * mag +
                               static_cast<double>(d) * 2 * eta_qk;
              Iv a = round_to(ct.qk_accum, Iv{sb.dot[x] - w, sb.dot[x] + w});
              double a_ref = round_to(ct.qk_accum, sb.dot[x]);
              if (!ct.scale_folded_into_q) {
                a = round_to(DType::fp32, scaled(a, scale));
                a_ref = round_to(DType::fp32, a_ref * scale);
              }
              if (!spec.bias.empty()) {  // + the bias in bias_dtype, in fp32 (a rounding fixed)
                const double bh =
                    contract_bias(ct.bias_dtype, spec.bias[static_cast<size_t>(i * S + j)]);
                a = round_to(DType::fp32, add(a, Iv{bh, bh}));
                a_ref = round_to(DType::fp32, a_ref + bh);
              }
              const Iv s = round_to(ct.score_dtype, a);
              const double s_ref = round_to(ct.score_dtype, a_ref);
              sc[static_cast<size_t>(j)] = s;
              sref[static_cast<size_t>(j)] = s_ref;
              m = {std::max(m.lo, s.lo), std::max(m.hi, s.hi)};
              m_ref = std::max(m_ref, s_ref);
            }
            if (has_sink) {
              m = {std::max(m.lo, sink), std::max(m.hi, sink)};
              m_ref = std::max(m_ref, sink);
            }
            m = round_to(ct.max_dtype, m);
            m_ref = round_to(ct.max_dtype, m_ref);
            OnlineTerms ot;
            if (online) {
              double amax = 0;
              for (int64_t j = 0; j < S; ++j) {
                if (!vis[static_cast<size_t>(j)]) continue;
                const Iv s = sc[static_cast<size_t>(j)];
                amax = std::max({amax, std::fabs(s.lo), std::fabs(s.hi)});
              }
              ot = online_softmax_terms(ct, S, nvis, amax);
              online_tiles = ot.tiles;
            }

            // p = exp(s - m) (the subtraction in fp32), the sum l of p in sum_dtype in any order.
            double l_lo = 0, l_hi = 0, l_ref = 0;
            int64_t terms = 0;
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              const Iv s = sc[static_cast<size_t>(j)];
              if (online) {
                // exp(fl(s - m_t)) * exp(m_t - m): the argument's rounding is within
                // u32 |s - m_t| <= u32 |s - m| of the exact s - m (s <= m_t <= m).
                const Iv x{s.lo - m.hi, s.hi - m.lo};
                const double rr = kU32 * std::max(std::fabs(x.lo), std::fabs(x.hi));
                const double rel = ct.exp_ulps * std::ldexp(1.0, -23);
                const double abs = ct.exp_ulps * std::ldexp(1.0, -149);
                ph[static_cast<size_t>(j)] = {
                    std::max(0.0, down(std::exp(x.lo - rr) * (1 - rel) * (1 - u_exp_store) - abs -
                                       eta_exp)),
                    up(std::exp(x.hi + rr) * (1 + rel) * (1 + u_exp_store) + abs + eta_exp)};
              } else {
                const Iv arg = round_to(DType::fp32, Iv{s.lo - m.hi, s.hi - m.lo});
                ph[static_cast<size_t>(j)] = exp_interval(arg, ct.exp_ulps, ct.exp_dtype);
              }
              arg_ref[static_cast<size_t>(terms++)] =
                  static_cast<float>(sref[static_cast<size_t>(j)] - m_ref);
            }
            exp_f32_array(arg_ref.data(), ph_ref.data(), terms);
            int64_t t = 0;
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              const size_t x = row + static_cast<size_t>(j);
              const Iv e = ph[static_cast<size_t>(j)];
              const double e_ref = quantize(ct.exp_dtype, ph_ref[static_cast<size_t>(t++)]);
              Iv p = round_to(ct.p_dtype, e);
              if (online) {
                // P rounded at the tile's scale, then rescaled (numerator only).
                p = {std::max(0.0, down((e.lo * (1 - u_p_store) - eta_p) / (1 + ot.numer))),
                     up((e.hi * (1 + u_p_store) + eta_p) * (1 + ot.numer))};
              }
              const double p_ref = round_to(ct.p_dtype, e_ref);
              const Iv summand = ct.sum_of_rounded_p ? p : e;
              l_lo += summand.lo;
              l_hi += summand.hi;
              l_ref += ct.sum_of_rounded_p ? p_ref : e_ref;
              pc[x] = 0.5 * (p.lo + p.hi);
              pr[x] = up(0.5 * (p.hi - p.lo));
              pref[x] = p_ref;
            }
            int64_t l_terms = nvis;
            if (has_sink) {
              const Iv arg = round_to(DType::fp32, Iv{sink - m.hi, sink - m.lo});
              // The sink's term: rounded like the keys' (exp_dtype, then p_dtype when l sums the
              // rounded P), or kept in fp32 (sink_term_fp32).
              const DType sink_dt = ct.sink_term_fp32 ? DType::fp32 : ct.exp_dtype;
              const bool sink_p = ct.sum_of_rounded_p && !ct.sink_term_fp32;
              const Iv e = exp_interval(arg, ct.exp_ulps, sink_dt);
              const double e_ref = quantize(sink_dt, exp_f32(static_cast<float>(sink - m_ref)));
              const Iv summand = sink_p ? round_to(ct.p_dtype, e) : e;
              l_lo += summand.lo;
              l_hi += summand.hi;
              l_ref += sink_p ? round_to(ct.p_dtype, e_ref) : e_ref;
              ++l_terms;
            }
            const double wl = gamma_n(l_terms, u_sum) * l_hi +
                              static_cast<double>(l_terms + 2) * kEps64 * l_hi +
                              static_cast<double>(l_terms) * 2 * eta_sum;
            Iv l = round_to(ct.sum_dtype, Iv{l_lo - wl, l_hi + wl});
            if (online) {
              // The log-sum-exp chain: a common factor of the denominator (sum_dtype rounding
              // happens at the tiles' scales, so it widens instead of rounding the ends).
              const double us = unit_roundoff(ct.sum_dtype);
              l = {down((l_lo - wl) * (1 - us) / (1 + ot.denom)),
                   up((l_hi + wl) * (1 + us) * (1 + ot.denom))};
            }
            l_row[static_cast<size_t>(r)] = l;
            l_ref_row[static_cast<size_t>(r)] = round_to(ct.sum_dtype, l_ref);

            if (!deferred) {
              // P = p / l rounded to p_dtype before PV (an fp32 division).
              if (!(l.lo > 0)) {
                n_row[static_cast<size_t>(r)] = -1;  // not certified
                continue;
              }
              const double lr = l_ref_row[static_cast<size_t>(r)];
              for (int64_t j = 0; j < S; ++j) {
                if (!vis[static_cast<size_t>(j)]) continue;
                const size_t x = row + static_cast<size_t>(j);
                const Iv e = ph[static_cast<size_t>(j)];
                const Iv q = round_to(ct.p_dtype, round_to(DType::fp32, divided_by_positive(e, l)));
                pc[x] = 0.5 * (q.lo + q.hi);
                pr[x] = up(0.5 * (q.hi - q.lo));
              }
              t = 0;
              for (int64_t j = 0; j < S; ++j) {
                if (!vis[static_cast<size_t>(j)]) continue;
                const double e_ref = quantize(ct.exp_dtype, ph_ref[static_cast<size_t>(t++)]);
                pref[row + static_cast<size_t>(j)] =
                    round_to(ct.p_dtype, round_to(DType::fp32, e_ref / lr));
              }
            }
          }

          // PV: one fp32 accumulation over every key (any order), or fp32 partials per kv tile
          // accumulated tile by tile in pv_accum.
          const size_t out_n = rd;
          std::vector<Iv> acc(out_n, Iv{});
          std::vector<double> acc_ref(out_n, 0.0);
          if (ct.pv_accum == DType::fp32) {
            const PvProducts p = pv_products(rows, S, d, 0, S, pc, pr, pref, ks);
            for (int r = 0; r < rows; ++r) {
              const int64_t terms = n_row[static_cast<size_t>(r)];
              for (int64_t c = 0; c < d; ++c) {
                const size_t x =
                    static_cast<size_t>(r) * static_cast<size_t>(d) + static_cast<size_t>(c);
                // An online softmax adds a rescaling multiply and an add per tile.
                acc[x] = psum_interval(p.cv[x], p.ca[x], p.ra[x],
                                       std::max<int64_t>(terms, 0) + 2 * online_tiles);
                if (u_part > 0) {
                  // The running output rounded to online_partial_dtype before each of the T - 1
                  // rescales: within u |partial| alpha + eta each, and |partial| alpha is at
                  // most the whole sum of |p| |v| (ca + ra) with its accumulation error. Then
                  // the merged numerator rounds to it (an interval rounds at its ends).
                  const double rescales =
                      static_cast<double>(std::max<int64_t>(online_tiles - 1, 0));
                  const double w =
                      rescales * (u_part * (p.ca[x] + p.ra[x]) * (1 + 0x1p-20) + eta_part);
                  acc[x] = round_to(ct.online_partial_dtype,
                                    round_to(DType::fp32, Iv{acc[x].lo - w, acc[x].hi + w}));
                }
                acc_ref[x] = round_to(DType::fp32, p.refv[x]);
              }
            }
          } else {
            for (int64_t j0 = 0; j0 < S; j0 += ct.kv_tile) {
              const int64_t j1 = std::min(S, j0 + ct.kv_tile);
              const PvProducts p = pv_products(rows, S, d, j0, j1, pc, pr, pref, ks);
              for (size_t x = 0; x < out_n; ++x) {
                const Iv part = psum_interval(p.cv[x], p.ca[x], p.ra[x], j1 - j0);
                acc[x] = round_to(ct.pv_accum, round_to(DType::fp32, add(acc[x], part)));
                acc_ref[x] = round_to(ct.pv_accum, acc_ref[x] + round_to(DType::fp32, p.refv[x]));
              }
            }
          }

          // Normalisation, output store, and the bound against the exact value.
          for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            const int64_t state = n_row[static_cast<size_t>(r)];
            const Iv l = l_row[static_cast<size_t>(r)];
            const double l_ref = l_ref_row[static_cast<size_t>(r)];
            for (int64_t c = 0; c < d; ++c) {
              const size_t x =
                  static_cast<size_t>(r) * static_cast<size_t>(d) + static_cast<size_t>(c);
              const size_t at = static_cast<size_t>(spec.q_index(b, h, i, c));
              Iv o{0, 0};
              double o_ref = 0;
              bool certified = state >= 0;
              if (state > 0) {
                o = acc[x];
                o_ref = acc_ref[x];
                if (deferred) {
                  certified = l.lo > 0;
                  if (nd == DType::fp32) {
                    // acc / l, or acc * (1 / l): either, in fp32.
                    const Iv recip = round_to(DType::fp32, Iv{1 / l.hi, 1 / l.lo});
                    o = hull(round_to(DType::fp32, divided_by_positive(o, l)),
                             round_to(DType::fp32, times_positive(o, recip)));
                    o_ref = round_to(DType::fp32, o_ref / l_ref);
                  } else {
                    const Iv ln = round_to(nd, l);
                    const Iv recip = round_to(nd, round_to(DType::fp32, Iv{1 / ln.hi, 1 / ln.lo}));
                    // The PV result is rounded to nd before the product (a copy out of PSUM)
                    // or multiplied straight out of PSUM (tensor_scalar on the fp32 value):
                    // the contract does not say which, so both.
                    o = hull(
                        round_to(nd, round_to(DType::fp32, times_positive(round_to(nd, o), recip))),
                        round_to(nd, round_to(DType::fp32, times_positive(o, recip))));
                    const double rr = round_to(nd, 1 / round_to(nd, l_ref));
                    o_ref = round_to(nd, round_to(nd, o_ref) * rr);
                  }
                }
              }
              o = round_to(ct.out_dtype, o);
              res.reference[at] = round_to(ct.out_dtype, o_ref);
              const double ex = exact[at];
              const double bnd = up(std::max(o.hi - ex, ex - o.lo)) + std::fabs(ex) * 0x1p-50;
              if (certified && std::isfinite(ex) && std::isfinite(bnd)) {
                res.bound[at] = std::max(bnd, 0.0);
              }
            }
          }
        }
      }
    }
  }
  for (double x : res.bound) res.uncertified += std::isinf(x) ? 1 : 0;
  return res;
}

}  // namespace ncv::oracle
