// Implements the analysis of oracle/ERROR_BOUNDS.md; the term names (dS, D, E1, Ev, EP, Eacc,
// Esum, Ediv, Eout, floor) follow that file.
#include "oracle/error_bound.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/blas_threads.h"

namespace ncv::oracle {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kU32 = std::ldexp(1.0, -24);
const double kEta32 = std::ldexp(1.0, -150);

// Rounding of a value of `from` into `to`: relative part and absolute (subnormal) part.
struct Rounding {
  double rel = 0, abs = 0;
};
Rounding rounding(DType from, DType to) {
  if (represents(to, from)) return {};
  return {unit_roundoff(to), subnormal_half_spacing(to)};
}

// A vector as fed to a matmul: ideal value x (double), magnitude bound, absolute error bound.
struct Operand {
  std::vector<double> x, mag, err;
};

Operand make_operand(const double* src, int64_t d, const std::vector<double>* inv_freq, int64_t pos,
                     DType input, DType fed) {
  Operand o;
  o.x.assign(src, src + d);
  o.mag.resize(static_cast<size_t>(d));
  o.err.assign(static_cast<size_t>(d), 0.0);
  for (int64_t c = 0; c < d; ++c) o.mag[c] = std::fabs(src[c]);
  Rounding r = rounding(input, fed);
  if (inv_freq != nullptr) {
    // Rotated in fp32 from double cos/sin rounded to fp32: |err| <= 4 u32 (|a| + |b|) per
    // component; the rotated value is then rounded to the fed dtype.
    const int64_t half = d / 2;
    r = {fed == DType::fp32 ? kU32 : unit_roundoff(fed), subnormal_half_spacing(fed)};
    for (int64_t t = 0; t < half; ++t) {
      const double ang = static_cast<double>(pos) * (*inv_freq)[static_cast<size_t>(t)];
      const double cs = std::cos(ang), sn = std::sin(ang);
      const double a = src[t], b = src[t + half];
      o.x[t] = a * cs - b * sn;
      o.x[t + half] = a * sn + b * cs;
      const double m = std::fabs(a) + std::fabs(b);
      o.mag[t] = o.mag[t + half] = m;
      o.err[t] = o.err[t + half] = 4 * kU32 * m + 2 * kEta32;
    }
  }
  for (int64_t c = 0; c < d; ++c) {
    if (r.rel > 0) o.err[c] += r.rel * (o.mag[c] + o.err[c]) + r.abs;
  }
  return o;
}

}  // namespace

double gamma_n(int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu >= 1 ? kInf : nu / (1 - nu);
}

// Operands as row-major [rows][d] matrices: values, error bounds, magnitudes, and magnitude +
// error bounds (the operand forms the score sums below multiply).
struct OperandMatrices {
  std::vector<double> x, err, mag, mag_err;
  bool any_err = false;  // some err > 0 (else the products with err are 0 and are skipped)
  void fill(const std::vector<Operand>& ops, int64_t d) {
    any_err = false;
    const size_t n = ops.size() * static_cast<size_t>(d);
    x.resize(n);
    err.resize(n);
    mag.resize(n);
    mag_err.resize(n);
    for (size_t r = 0; r < ops.size(); ++r) {
      for (int64_t c = 0; c < d; ++c) {
        const size_t at = r * static_cast<size_t>(d) + static_cast<size_t>(c);
        x[at] = ops[r].x[c];
        err[at] = ops[r].err[c];
        mag[at] = ops[r].mag[c];
        mag_err[at] = ops[r].mag[c] + ops[r].err[c];
        any_err = any_err || ops[r].err[c] != 0;
      }
    }
  }
};

// Per (query of a block, key) the three sums of the score bound, as matrix products (dgemm):
//   dot    = q.x . k.x
//   in_err = q.err . (k.mag + k.err) + q.mag . k.err   (propagated input errors)
//   mag    = (q.mag + q.err) . (k.mag + k.err)         (magnitude for the rounding terms)
// Why matrix products: as per-pair loops these were O(Sq Skv d) scalar code, most of the time
// of a check at seqlen >= 1024. dgemm sums in another order; `dot` then differs in the last
// double bits (~d 2^-53 relative), which is negligible next to the fp32-scale terms it feeds,
// and in_err / mag are bounds whose order does not matter beyond the same last bits.
struct BlockProducts {
  std::vector<double> dot, in_err, mag;
  OperandMatrices q;
  void compute(const std::vector<Operand>& qops, const OperandMatrices& k, int64_t d) {
    const int m = static_cast<int>(qops.size()), dd = static_cast<int>(d);
    const int n = static_cast<int>(k.x.size() / static_cast<size_t>(std::max<int64_t>(d, 1)));
    q.fill(qops, d);
    const size_t out = qops.size() * static_cast<size_t>(n);
    dot.assign(out, 0.0);
    in_err.assign(out, 0.0);
    mag.assign(out, 0.0);
    if (m == 0 || n == 0 || dd == 0) return;
    auto gemm = [&](const std::vector<double>& a, const std::vector<double>& bt, double beta,
                    std::vector<double>& c) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, dd, 1.0, a.data(), dd, bt.data(),
                  dd, beta, c.data(), n);
    };
    gemm(q.x, k.x, 0.0, dot);
    // An operand without rounding or RoPE errors (fp32 inputs fed as fp32, bf16 as bf16) has
    // err = 0: its product is exactly 0 and is not computed (a non-finite |k| would make it
    // NaN, but only rows that see that key read it, and those are non-finite rows).
    if (q.any_err) gemm(q.err, k.mag_err, 0.0, in_err);
    if (k.any_err) gemm(q.mag, k.err, q.any_err ? 1.0 : 0.0, in_err);
    gemm(q.mag_err, k.mag_err, 0.0, mag);
  }
};

// acc[c] += wx |v[c] - o[c]|: the innermost loop of error_bound at long rows. Cloned for AVX2
// (chosen at load time when the CPU has it; the baseline build is SSE2): 4 doubles per
// instruction instead of 2, and the same IEEE results (no contraction, -ffp-contract=off).
__attribute__((target_clones("avx2", "default"))) void add_spread(double wx, const double* v,
                                                                  const double* o, double* acc,
                                                                  size_t d) {
  for (size_t c = 0; c < d; ++c) acc[c] += wx * std::fabs(v[c] - o[c]);
}

// The scalars of one query row that the column sums and the final per-element loop need.
struct RowTerms {
  bool active = false;  // a finite row with visible keys (others keep bound 0)
  bool overflow = false;
  int64_t nk = 0;   // visible keys
  double amax = 0;  // max |s_j| + ΔS_j over the visible keys (online softmax terms)
  double dmax = 0;  // max D_j over the visible keys and the sink (the lse bound)
  double marg = 0;  // bound on |m^ - m|: the largest score error and the max's rounding
  double den = 0, l = 0, sink_wp = 0, sink_wx = 0;
};

// sv[rows][d] = wplus[rows][Skv] * vabs[Skv][d] and sabs = seen * vabs (seen: 1 for a visible
// key). A key with a non-finite v has vabs 0: a row that sees it is a non-finite row whose sums
// are not used, and 0 * inf would make NaN of the other rows' sums.
void column_sums(int64_t rows, int64_t skv, int64_t d, const std::vector<double>& wplus,
                 const std::vector<double>& seen, const std::vector<double>& vabs,
                 std::vector<double>& sv, std::vector<double>& sabs) {
  const size_t n = static_cast<size_t>(rows * d);
  sv.assign(n, 0.0);
  sabs.assign(n, 0.0);
  if (rows == 0 || skv == 0 || d == 0) return;
  const int m = static_cast<int>(rows), k = static_cast<int>(skv), nn = static_cast<int>(d);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nn, k, 1.0, wplus.data(), k,
              vabs.data(), nn, 0.0, sv.data(), nn);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nn, k, 1.0, seen.data(), k, vabs.data(),
              nn, 0.0, sabs.data(), nn);
}

// |kernel lse - exact lse| for one row (ERROR_BOUNDS.md §4 "The log-sum-exp output"). Every term
// of the denominator is within a factor e^{±D_j} of exp(s_j - m) (D_j holds the score error, the
// argument and exp roundings), so their sum is within e^{±max D_j}; the sum's accumulation and,
// with online_tile, the log-sum-exp chain are the relative g_sum (a factor within [1 - g, 1 + g]);
// subnormal p values add `floor` to a sum >= den; log within one ulp of ln l and the add m + log l
// round once each: 2 u32 |ln l| + u32 |lse| (already in g_sum's online terms; kept for the others).
double lse_bound(const RowTerms& rt, double g_sum, double floor, double lse, double m,
                 double safety) {
  if (!std::isfinite(lse)) return 0.0;  // compared by class
  if (rt.overflow || g_sum >= 0.5) return kInf;
  const double e = rt.dmax - std::log1p(-g_sum) + floor / rt.den +
                   kU32 * (2 * std::fabs(lse - m) + std::fabs(lse) + 1);
  return std::isfinite(e) ? safety * e : kInf;
}

// The cached softmax statistics (ERROR_BOUNDS.md §4 "The cached softmax statistics"): the
// kernel's row max m^ is the max of its computed scores and the sink, rounded to max_dtype: within
// rt.marg of m. Its l^ sums the exp outputs at m^, where (unlike the output and lse) the shift
// does not cancel: each term is within e^{+-(D_j + marg)} of exp(s_j - m); then the sum's
// accumulation (g_sum), an online kernel's rescales of the earlier partial sums (numer: the same
// alpha chain as the output's numerator), subnormal p values (floor / den) and the reciprocal
// (rcp_rel). Bounds on |m^ - m| and |1/l^ - 1/l|, with safety.
void stat_bounds(const RowTerms& rt, double g_sum, double numer, double floor, double rcp_rel,
                 double m, double l, double safety, double& row_max, double& recip) {
  if (!std::isfinite(m) || !(l > 0)) {
    row_max = recip = 0.0;  // compared by class
    return;
  }
  if (rt.overflow || g_sum >= 0.5) {
    row_max = recip = kInf;
    return;
  }
  const double grow = std::exp(rt.dmax + rt.marg) * (1 + numer) / (1 - g_sum) * (1 + rcp_rel);
  const double rel = grow - 1 + floor / rt.den;
  row_max = std::isfinite(rt.marg) ? safety * rt.marg : kInf;
  recip = std::isfinite(rel) ? safety * rel / l : kInf;
}

// Query rows per block of products: 64 rows keep the three [64, Skv] blocks small at any Skv.
constexpr int64_t kQueryBlock = 64;

ErrorBound error_bound(const PrecisionContract& ct, const AttentionSpec& spec,
                       const AttentionInputs& in, const OracleOutput& exact, double safety) {
  spec.validate();
  ct.validate();
  use_one_blas_thread();
  const int64_t B = spec.batch, H = spec.heads, Sq = spec.seqlen_q, Skv = spec.seqlen_kv,
                d = spec.d_head;
  ErrorBound eb;
  eb.bound.assign(static_cast<size_t>(spec.q_elements()), 0.0);
  eb.lse.assign(static_cast<size_t>(spec.rows()), 0.0);
  eb.row_max.assign(eb.lse.size(), 0.0);
  eb.recip_sum.assign(eb.lse.size(), 0.0);

  const std::vector<double> inv_freq = rope_inverse_frequencies(spec);
  const bool folded = ct.scale_folded_into_q;
  const double scale = spec.scale;
  const double gd = gamma_n(d, unit_roundoff(ct.qk_accum));
  const double eta_acc = subnormal_half_spacing(ct.qk_accum);
  const Rounding r_s = rounding(DType::fp32, ct.score_dtype);
  const Rounding r_max = rounding(ct.score_dtype, ct.max_dtype);
  const Rounding r_e = rounding(DType::fp32, ct.exp_dtype);
  const Rounding r_p = rounding(ct.exp_dtype, ct.p_dtype);
  const Rounding r_pn = rounding(DType::fp32, ct.p_dtype);  // before_pv: p / l rounded to P
  const Rounding r_v = rounding(spec.input_dtype, ct.v_dtype);
  const Rounding r_o = rounding(DType::fp32, ct.out_dtype);
  const bool deferred = ct.norm == Normalisation::deferred;
  // Relative error of the exp stage, as a bound on |log(p_hat / exp(arg))|.
  double rexp = 2 * ct.exp_ulps * kU32 + r_e.rel;
  if (ct.sum_of_rounded_p && deferred) rexp += r_p.rel;
  const double lexp = rexp / (1 - rexp) + 2 * kU32;
  // Absolute error of one p value in the subnormal range (expf, exp and P roundings).
  // (before_pv: the rounding of p / l to P is absolute in normalised units, added per c below.)
  const double p_floor = 2 * kEta32 + r_e.abs + r_p.abs;
  const double eta_pv = subnormal_half_spacing(ct.pv_accum);
  const double score_max = dtype_max_finite(ct.score_dtype);
  const double acc_max = dtype_max_finite(ct.pv_accum);
  const double out_max = dtype_max_finite(ct.out_dtype);
  const bool narrow_norm = deferred && ct.norm_dtype != DType::fp32;
  const double u_norm = unit_roundoff(ct.norm_dtype);
  const double div_rel = narrow_norm ? 4.01 * u_norm + 2 * kU32 : 2 * kU32;
  const double eta_norm = narrow_norm ? subnormal_half_spacing(ct.norm_dtype) : 0.0;
  // Online softmax whose earlier tiles' partial output is rounded (online_partial_dtype) before
  // the rescale: relative to that partial, which is at most the whole sum of p |v| (§4).
  const Rounding r_part =
      ct.online_tile > 0 ? rounding(DType::fp32, ct.online_partial_dtype) : Rounding{};
  const double norm_max = dtype_max_finite(ct.norm_dtype);
  const double part_max = dtype_max_finite(ct.online_partial_dtype);

  std::vector<int64_t> keys;
  std::vector<double> s, ds, wplus, wexpm1, seen, s1, sv, sabs;
  std::vector<RowTerms> rs;
  const bool has_sink = !spec.sink.empty();
  // The keys as fed to QK^T, built once per (batch, kv head) and shared by its query heads.
  std::vector<Operand> kops, qops;
  OperandMatrices kmat;
  BlockProducts products;
  std::vector<double> vrows;  // the values [Skv][d] of the same (batch, kv head)
  std::vector<double> vabs;   // |vrows|, non-finite entries 0 (only rows that skip them see them)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kvh = spec.kv_head_of(h);
      if (h == 0 || kvh != spec.kv_head_of(h - 1)) {
        kops.clear();
        vrows.resize(static_cast<size_t>(Skv * d));
        for (int64_t j = 0; j < Skv; ++j) {
          const int64_t kpos = spec.rope ? spec.rope->pos_k[static_cast<size_t>(b * Skv + j)] : 0;
          const int64_t at = spec.kv_index(b, kvh, j, 0);
          kops.push_back(make_operand(in.k.data() + at, d, spec.rope ? &inv_freq : nullptr, kpos,
                                      spec.input_dtype, ct.k_dtype));
          std::copy(in.v.data() + at, in.v.data() + at + d, vrows.data() + j * d);
        }
        kmat.fill(kops, d);
        vabs.resize(vrows.size());
        for (size_t x = 0; x < vrows.size(); ++x) {
          vabs[x] = std::isfinite(vrows[x]) ? std::fabs(vrows[x]) : 0.0;
        }
      }
      for (int64_t i0 = 0; i0 < Sq; i0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, Sq - i0);
        qops.clear();
        for (int64_t i = i0; i < i0 + rows; ++i) {
          const int64_t qpos = spec.rope ? spec.rope->pos_q[static_cast<size_t>(b * Sq + i)] : 0;
          Operand q = make_operand(in.q.data() + spec.q_index(b, h, i, 0), d,
                                   spec.rope ? &inv_freq : nullptr, qpos, spec.input_dtype,
                                   folded ? DType::fp32 : ct.q_dtype);
          if (folded) {
            // q' = round_q(fp32(fp32(scale) * q)): error relative to scale * q. A load into
            // q_dtype before the multiply rounds once more (a scale that is not a power of two).
            const Rounding rq = rounding(DType::fp32, ct.q_dtype);
            if (folded_scale_rounds_twice(ct, spec.input_dtype, static_cast<float>(scale))) {
              for (int64_t c = 0; c < d; ++c) q.err[c] += rq.rel * (q.mag[c] + q.err[c]) + rq.abs;
            }
            for (int64_t c = 0; c < d; ++c) {
              q.x[c] *= scale;
              q.mag[c] *= std::fabs(scale);
              q.err[c] = q.err[c] * std::fabs(scale) + 2 * kU32 * (q.mag[c] + q.err[c]) + kEta32;
              q.err[c] += rq.rel * (q.mag[c] + q.err[c]) + rq.abs;
            }
          }
          qops.push_back(std::move(q));
        }
        products.compute(qops, kmat, d);
        const size_t du = static_cast<size_t>(d), sk = static_cast<size_t>(Skv);
        // Per row of the block: the key weights as [rows][Skv] matrices (0 for keys the row does
        // not see) and the row's scalars, so that the column sums over keys below run once per
        // block (V read once per block, not once per row).
        rs.assign(static_cast<size_t>(rows), RowTerms{});
        wplus.assign(static_cast<size_t>(rows) * sk, 0.0);
        wexpm1.assign(wplus.size(), 0.0);
        seen.assign(wplus.size(), 0.0);
        for (int64_t i = i0; i < i0 + rows; ++i) {
          const int64_t r = (b * H + h) * Sq + i;
          const size_t qrow = static_cast<size_t>(i - i0);
          const int64_t base = spec.q_index(b, h, i, 0);
          const double* o = exact.out.data() + base;
          bool finite = std::isfinite(exact.row_max[static_cast<size_t>(r)]) ||
                        exact.row_max[static_cast<size_t>(r)] == -kInf;
          for (int64_t c = 0; c < d; ++c) finite = finite && std::isfinite(o[c]);
          if (!finite) {
            for (int64_t c = 0; c < d; ++c) eb.nonfinite += std::isfinite(o[c]) ? 0 : 1;
            continue;  // bounds stay 0; compare() checks these elements by class
          }
          spec.visible_keys(b, i, keys);
          if (keys.empty()) continue;  // documented result 0, bound 0

          // fp32(scale) and the fp32 multiply acc * scale, unless the scale is folded into q.
          const double dot_factor = folded ? 1.0 : std::fabs(scale);
          const double post_mul = folded ? 0.0 : 2 * kU32;
          const size_t n = keys.size();
          const double* bias = spec.bias.empty() ? nullptr : spec.bias.data() + i * Skv;
          s.assign(n, 0);
          ds.assign(n, 0);
          bool overflow = false;
          for (size_t t = 0; t < n; ++t) {
            const size_t at = qrow * sk + static_cast<size_t>(keys[t]);
            const double dot = products.dot[at], in_err = products.in_err[at],
                         mag = products.mag[at];
            double sj = folded ? dot : scale * dot;
            double e = dot_factor * (in_err + gd * mag + static_cast<double>(d) * eta_acc);
            e += post_mul * (std::fabs(sj) + e) + (post_mul > 0 ? kEta32 : 0);
            if (bias != nullptr) {
              // The bias: its rounding to bias_dtype, then the fp32 add of the sum.
              const double bj = bias[keys[t]];
              sj += bj;
              e += bias_rounding_error(ct.bias_dtype, bj);
              e += kU32 * (std::fabs(sj) + e) + kEta32;
            }
            e += r_s.rel * (std::fabs(sj) + e) + r_s.abs;
            s[t] = sj;
            ds[t] = e;
            if (std::fabs(sj) + e > score_max || !std::isfinite(e)) overflow = true;
          }
          const double sink = has_sink ? spec.sink[static_cast<size_t>(h)] : 0.0;
          const double dsink =
              has_sink ? kU32 * std::fabs(sink) + r_s.rel * std::fabs(sink) * (1 + kU32) + r_s.abs
                       : 0.0;
          const double m = exact.row_max[static_cast<size_t>(r)];
          double dmax = has_sink ? dsink : 0.0;
          for (double e : ds) dmax = std::max(dmax, e);
          const double marg = dmax + r_max.rel * std::fabs(m) + r_max.abs;
          // Per-key D_j (log-relative error of p_j), weights p_j e^{-D_j}, p_j e^{D_j},
          // p_j expm1(D_j). One expm1 gives all three (e^D = 1 + expm1 D, e^-D = 1 / e^D):
          // two libm calls per key instead of four, the same values up to the last bits.
          RowTerms& rt = rs[qrow];
          auto key_terms = [&](double sj, double dsj, double& wp, double& wx) {
            const double pj = std::exp(sj - m);
            const double D = dsj + kU32 * (std::fabs(sj - m) + dsj + marg) + lexp;
            const double em = std::expm1(D);
            rt.dmax = std::max(rt.dmax, D);
            rt.den += pj / (1 + em);
            rt.l += pj;
            wp = pj * (1 + em);
            wx = pj * em;
          };
          double* wp_row = wplus.data() + qrow * sk;
          double* wx_row = wexpm1.data() + qrow * sk;
          double* seen_row = seen.data() + qrow * sk;
          for (size_t t = 0; t < n; ++t) {
            const size_t j = static_cast<size_t>(keys[t]);
            key_terms(s[t], ds[t], wp_row[j], wx_row[j]);
            seen_row[j] = 1.0;
          }
          if (has_sink) key_terms(sink, dsink, rt.sink_wp, rt.sink_wx);
          rt.den = std::max(rt.den, std::numeric_limits<double>::min());
          rt.active = true;
          rt.overflow = overflow;
          rt.marg = marg;
          rt.nk = static_cast<int64_t>(n);
          for (size_t t = 0; t < n; ++t) rt.amax = std::max(rt.amax, std::fabs(s[t]) + ds[t]);
        }
        // Column sums over the visible keys. S1 = sum_j p_j expm1(D_j) |v_j - o| depends on the
        // row's o, so it stays a loop; keys outermost (each V row read once per block), and each
        // (row, column) sum adds its terms in key order as the per-row loop did: same values.
        s1.assign(static_cast<size_t>(rows) * du, 0.0);
        for (int64_t t = 0; t < rows; ++t) {
          const size_t ts = static_cast<size_t>(t);
          if (!rs[ts].active) continue;
          const double* o = exact.out.data() + spec.q_index(b, h, i0 + t, 0);
          for (size_t c = 0; c < du; ++c) s1[ts * du + c] = rs[ts].sink_wx * std::fabs(o[c]);
        }
        for (size_t j = 0; j < sk; ++j) {
          const double* vrow = vrows.data() + j * du;
          for (int64_t t = 0; t < rows; ++t) {
            const size_t ts = static_cast<size_t>(t);
            if (seen[ts * sk + j] == 0) continue;  // not visible (its v may be non-finite)
            const double wx = wexpm1[ts * sk + j];
            add_spread(wx, vrow, exact.out.data() + spec.q_index(b, h, i0 + t, 0),
                       s1.data() + ts * du, du);
          }
        }
        // Sv = sum_j p_j e^{D_j} |v_j| and Sabs = sum_j |v_j| (visible keys) are products with
        // |V|: dgemm (another summation order: the last bits only, inside the safety factor).
        column_sums(rows, Skv, d, wplus, seen, vabs, sv, sabs);
        for (int64_t i = i0; i < i0 + rows; ++i) {
          const size_t qrow = static_cast<size_t>(i - i0);
          const RowTerms& rt = rs[qrow];
          if (!rt.active) continue;
          const int64_t base = spec.q_index(b, h, i, 0);
          double* bnd = eb.bound.data() + base;
          const double* o = exact.out.data() + base;
          const double den = rt.den, l = rt.l, sink_wp = rt.sink_wp;
          const int64_t nk = rt.nk;
          // Online softmax: the rescaling of p (numerator only) and the log-sum-exp chain (a
          // common factor of the denominator); each online tile adds a multiply and an add to
          // the accumulator, within the 2T rescaling terms below.
          const OnlineTerms ot = online_softmax_terms(ct, Skv, nk, rt.amax);
          const int64_t tiles =
              std::max((Skv + ct.kv_tile - 1) / ct.kv_tile, ot.tiles);  // key-index tiles
          const double g_tile = gamma_n(std::min(nk, ct.kv_tile) + 2 * tiles, kU32);
          double g_pv = g_tile;
          if (ct.pv_accum != DType::fp32) {
            const double ga = gamma_n(tiles + 1, unit_roundoff(ct.pv_accum));
            g_pv = (1 + g_tile) * (1 + ga) - 1;
          }
          double g_sum = gamma_n(nk + 1 + 2 * tiles, unit_roundoff(ct.sum_dtype));
          if (ot.denom > 0) g_sum = (1 + g_sum) * (1 + ot.denom) - 1;
          const double g_sum_rel = g_sum / (1 - std::min(g_sum, 0.5));
          double p_nc = 0;  // non-consistent relative perturbation of P in the numerator only
          if (deferred) {
            p_nc = ct.sum_of_rounded_p ? 0 : r_p.rel;
            if (ot.numer > 0) p_nc = (1 + p_nc) * (1 + ot.numer) - 1;
          } else {
            p_nc = kU32 + r_pn.rel + (ct.sum_of_rounded_p ? r_p.rel : 0);
          }
          // Sf = sum over visible keys and the sink of |v_j| + |o| (the sink's v is 0).
          const double n_f = static_cast<double>(nk + (has_sink ? 1 : 0));
          const size_t row = static_cast<size_t>((b * H + h) * Sq + i);
          eb.lse[row] =
              lse_bound(rt, g_sum, n_f * p_floor, exact.lse[row], exact.row_max[row], safety);
          // The reciprocal of l: in fp32 (one rounding, charged as two like the division), or l
          // and 1 / l each rounded to a narrower norm_dtype besides.
          stat_bounds(rt, g_sum, ot.numer, n_f * p_floor,
                      narrow_norm ? 2.01 * u_norm + 2 * kU32 : 2 * kU32, exact.row_max[row],
                      exact.row_sum[row], safety, eb.row_max[row], eb.recip_sum[row]);
          for (int64_t c = 0; c < d; ++c) {
            const double oc = o[c];
            const size_t at = qrow * du + static_cast<size_t>(c);
            const double s1c = s1[at], svc = sv[at], sabsc = sabs[at];
            const double sf = sabsc + n_f * std::fabs(oc);
            const double E1 = s1c / den;
            const double Mv = svc / den;
            const double Ev = r_v.rel * Mv + (r_v.rel > 0 ? r_v.abs * (l + sink_wp) / den : 0);
            const double EP = p_nc * (1 + r_v.rel) * Mv;
            const double Eacc = g_pv * (1 + p_nc) * (1 + r_v.rel) * Mv;
            // The running output rounded to online_partial_dtype before each of the T - 1
            // rescales (numerator only): |partial| * alpha <= sum over the earlier keys of
            // p^ |v^| (1 + gamma_pv) <= that over all keys.
            const double Epart = static_cast<double>(std::max<int64_t>(ot.tiles - 1, 0)) *
                                 r_part.rel * (1 + p_nc) * (1 + r_v.rel) * (1 + g_pv) * Mv;
            const double A = std::fabs(oc) + E1 + Ev + EP + Eacc + Epart;
            const double Esum = g_sum_rel * A;
            // Deferred division: fp32 divide or reciprocal-multiply (2 u32); in a narrower
            // norm_dtype four roundings (numerator, l, reciprocal, product) plus the fp32 ones.
            const double Ediv = deferred ? div_rel * (A + Esum) : 0.0;
            // The merged numerator rounded to online_partial_dtype before the division.
            const double Emerge = r_part.rel * (1 + div_rel) * (A + Esum);
            const double V = A + Esum + Ediv + Emerge;
            const double Eout = r_o.rel * V;
            // Underflow: p values (absolute p_floor each, relative to l), fp32 products and
            // partial sums of PV and the division (eta32 each), P = p / l in p_dtype (before_pv),
            // and the output rounding.
            // The PV accumulator's own subnormal rounding (pv_accum) per tile add as well.
            double floor_abs = sf * p_floor / den +
                               (static_cast<double>(2 * (nk + tiles) + 4) * kEta32 +
                                static_cast<double>(tiles + 2) * eta_pv) *
                                   std::max(1.0, 1 / den) +
                               r_o.abs + 2 * kEta32;
            if (!deferred) floor_abs += (r_pn.abs + kEta32) * (1 + r_v.rel) * sabsc;
            // Narrow normalisation: subnormal roundings of the numerator and the product (each
            // <= eta), and of the reciprocal (times |acc| <= sum |v|, as every p <= 1).
            if (narrow_norm) floor_abs += eta_norm * (2 + sabsc);
            // The partials' and the merged numerator's subnormal roundings (alpha <= 1), in
            // accumulator units.
            floor_abs += static_cast<double>(std::max<int64_t>(ot.tiles, 1)) * r_part.abs *
                         std::max(1.0, 1 / den);
            double bc = safety * (V - std::fabs(oc) + Eout) + floor_abs;
            // A partial output rounded to online_partial_dtype holds sum_j exp(s_j - m_t) v_j at
            // a running max m_t >= every earlier s_j: at most sum |v_j| (fp16 partials can
            // overflow where bf16 ones cannot).
            const bool part_overflow =
                ot.tiles > 1 && r_part.rel > 0 && sabsc * (1 + g_pv) * 1.01 > part_max;
            if (rt.overflow || part_overflow || !std::isfinite(bc) || V * (1 + r_o.rel) > out_max ||
                svc * (1 + p_nc) * (1 + g_pv) > acc_max ||
                (narrow_norm &&
                 (sabsc * 1.01 > norm_max || static_cast<double>(nk + 1) > norm_max))) {
              bc = kInf;
              ++eb.uncertified;
            }
            bnd[c] = bc;
          }
        }
      }
    }
  }
  return eb;
}

OnlineTerms online_softmax_terms(const PrecisionContract& ct, int64_t skv, int64_t visible,
                                 double max_abs_score) {
  OnlineTerms t;
  if (ct.online_tile <= 0) return t;
  const double u = std::ldexp(1.0, -24);
  const double exp_rel = ct.exp_ulps * std::ldexp(1.0, -23);
  const double tiles = static_cast<double>((skv + ct.online_tile - 1) / ct.online_tile);
  const double a = max_abs_score;
  // Numerator: per later tile alpha = exp(fl(m_prev - m)): the argument's rounding
  // (|m_prev - m| <= 2a), the exp, the fp32 product o * alpha.
  const double numer = tiles * (2 * a * u + exp_rel + u);
  // Denominator: per tile the lse update fl(m + log(fl(exp(fl(lse - m)) + sum))) moves lse by
  // at most u (log n + 1) (the difference, weighted by exp of it) + exp_rel + u (the add) +
  // 2u log n (log within one ulp) + u (|m| + log n) (the add to m); once more for the final
  // exp(fl(m - lse)). With lam = log(n + 1) + 1 >= log n + 1:
  const double lam = std::log(static_cast<double>(visible) + 1) + 1;
  const double denom = (tiles + 1) * (u * (4 * lam + a + 3) + 2 * exp_rel);
  t.numer = std::expm1(kBoundSafety * numer);
  t.denom = std::expm1(kBoundSafety * denom);
  t.tiles = static_cast<int64_t>(tiles);
  return t;
}

bool folded_scale_rounds_twice(const PrecisionContract& ct, DType input, float scale) {
  if (!ct.scale_folded_into_q || !ct.q_rounded_before_scale || represents(ct.q_dtype, input)) {
    return false;
  }
  int e = 0;
  return std::frexp(std::fabs(static_cast<double>(scale)), &e) != 0.5;
}

}  // namespace ncv::oracle
