// Interval evaluation of a precision contract (oracle/ERROR_BOUNDS.md "The case bound"). The
// stages follow contract_reference.cpp one for one; each carries [lo, hi] (every value a kernel
// honouring the contract can hold there) and, when asked, `ref` (one evaluation: each stage
// rounded once from its double-precision value).
//
// Speed (oracle/README.md "Speed"): a query row's stages run over arrays of its visible keys
// (interval_rows.h: the roundings and an exp enclosure, vectorised); the products that only need
// an upper bound (the magnitudes Σ|q'||k'| and Σ P_hi |v|) are float sgemms made upper bounds
// (upper_gemm.h); P's radius is non-zero only where an interval straddles a rounding boundary, so
// its product visits the non-zero entries only. Every float conversion of an interval end goes
// through interval_rows.h's loops or the out-of-line quantize(), never through inline
// straight-line code that the compiler's SLP vectoriser could miscompile (interval_rows_kernel.h).
#include "oracle/case_bound.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/numerics/fp32_exp.h"
#include "oracle/blas_threads.h"
#include "oracle/error_bound.h"
#include "oracle/interval_rows.h"
#include "oracle/upper_gemm.h"

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
// <= it. So rounding both ends of an interval keeps every possible value inside. (quantize is
// out of line: the float round trip cannot be folded away here.)
double round_to(DType t, double x) {
  return quantize(t, static_cast<float>(x));
}
Iv round_to(DType t, Iv v) {
  return {round_to(t, down(v.lo)), round_to(t, up(v.hi))};
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

// The fp32 exp of arguments in [lo[t], hi[t]] (contract: within exp_ulps fp32 ulps, and
// exp_ulps half-spacings in the subnormal range), rounded to `t`, in place: lo/hi become the
// exp interval's ends.
void exp_rows(double* lo, double* hi, int64_t n, double exp_ulps, DType t) {
  const double rel = exp_ulps * std::ldexp(1.0, -23), abs = exp_ulps * std::ldexp(1.0, -149);
  exp_enclose(lo, hi, lo, hi, n);
  for (int64_t k = 0; k < n; ++k) {
    const double l = lo[k] * (1 - rel) - abs;
    lo[k] = l > 0 ? l : 0.0;  // also NaN -> 0: P >= 0 is always a valid lower end
    hi[k] = hi[k] * (1 + rel) + abs;
  }
  round_lo(t, lo, n);
  round_hi(t, hi, n);
}
Iv exp_interval(Iv x, double exp_ulps, DType t) {
  exp_rows(&x.lo, &x.hi, 1, exp_ulps, t);
  return x;
}

// A q or k vector as fed to the QK^T matmul: centre and radius per component (radius 0 unless
// RoPE leaves the fp32 rotation open, or the folded scale may multiply q already rounded to the
// fed dtype: `round_first`, error_bound.h folded_scale_rounds_twice), following
// contract_reference's load_vec.
void fed_vector(const PrecisionContract& ct, const double* src, int64_t d,
                const std::vector<double>* inv_freq, int64_t pos, bool fold_scale, bool round_first,
                float scale, DType fed, double* centre, double* radius) {
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
  // The rotation in fp32 is within rope_rotation_rel (|a| + |b|) + rope_rotation_abs of the
  // exact one (precision_contract.h; 4 u32 (|a| + |b|) from exact cos/sin).
  const int64_t half = d / 2;
  for (int64_t c = 0; c < d; ++c) {
    Iv v{src[c], src[c]};
    if (c < 2 * half) {
      const int64_t t = c % half;
      const double ang = static_cast<double>(pos) * (*inv_freq)[static_cast<size_t>(t)];
      const double a = src[t], b = src[t + half];
      const double x =
          c < half ? a * std::cos(ang) - b * std::sin(ang) : a * std::sin(ang) + b * std::cos(ang);
      const double r =
          rope_rotation_rel(ct, ang) * (std::fabs(a) + std::fabs(b)) + rope_rotation_abs(ct);
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

// out[rows][d] = A[rows][k] . B[k][d] in double (A with leading dimension lda, B dense), visiting
// only A's non-zero entries when they are few (P's radius: non-zero only where a P interval
// straddles a rounding boundary), else one dgemm. Its rounding is covered like dgemm's: a sum of
// at most k products in any order.
void sparse_gemm(int rows, int64_t k, int64_t d, const double* a, int64_t lda, const double* b,
                 double* out) {
  std::fill(out, out + static_cast<size_t>(rows) * static_cast<size_t>(d), 0.0);
  int64_t nnz = 0;
  for (int r = 0; r < rows; ++r) {
    const double* ar = a + r * lda;
    for (int64_t j = 0; j < k; ++j) nnz += ar[j] != 0;
  }
  if (nnz == 0) return;
  if (nnz * 8 > static_cast<int64_t>(rows) * k) {
    gemm_nn(rows, static_cast<int>(d), static_cast<int>(k), a, static_cast<int>(lda), b,
            static_cast<int>(d), out);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    const double* ar = a + r * lda;
    double* o = out + static_cast<int64_t>(r) * d;
    for (int64_t j = 0; j < k; ++j) {
      if (ar[j] == 0) continue;
      const double x = ar[j];
      const double* bj = b + j * d;
      for (int64_t c = 0; c < d; ++c) o[c] += x * bj[c];
    }
  }
}

// Query rows per block: the [rows][Skv] score and P blocks stay small at any key length.
constexpr int64_t kRowBlock = 64;

struct KeySide {
  std::vector<double> kc, kr, kabs;  // [Skv][d] centre, radius, |centre| + radius
  std::vector<double> kabs_c;        // [Skv][d] |centre| (with RoPE only)
  std::vector<double> v, vabs;       // [Skv][d] V as fed to PV and |V|
  bool has_radius = false;
  UpperOperand kabs_up;               // kabs for the score magnitude (upper_gemm.h)
  std::vector<UpperOperand> vabs_up;  // |V| per PV tile of keys, for the PV magnitude
};

KeySide key_side(const PrecisionContract& ct, const AttentionSpec& spec, const AttentionInputs& in,
                 int64_t b, int64_t kvh, const std::vector<double>* inv_freq, int64_t pv_tile) {
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
    const bool rotated = inv_freq != nullptr && rope_rotates_key(spec, j);
    fed_vector(ct, in.k.data() + src, d, rotated ? inv_freq : nullptr,
               rotated ? spec.rope->pos_k[static_cast<size_t>(b * S + j)] : 0, false, false, 1.0f,
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
  } else {
    ks.kabs_up.prepare(ks.kabs.data(), S, d, d, true);
  }
  for (int64_t j0 = 0; j0 < S; j0 += pv_tile) {
    ks.vabs_up.emplace_back();
    ks.vabs_up.back().prepare(ks.vabs.data() + j0 * d, std::min(S, j0 + pv_tile) - j0, d, d, false);
  }
  return ks;
}

// Per row block: the score sums as matrix products.
struct ScoreBlock {
  std::vector<double> qc, qr, qabs, qabs_c;  // [rows][d]
  std::vector<double> dot, mag, radius;      // [rows][Skv]
  UpperOperand qabs_up;
};

// The PV products of one row block over keys [j0, j1) (PV tile `tile`): centre . V (dgemm),
// radius . |V| (sparse), an upper bound of (centre + radius) . |V| (the magnitude; float sgemm,
// upper_gemm.h) and, with the reference, reference . V; each [rows][d].
struct PvProducts {
  std::vector<double> cv, ra, mag, refv, weights;
  UpperOperand weights_up;  // kept between blocks: its buffers are reused
};

void pv_products(int rows, int64_t S, int64_t d, int64_t j0, int64_t j1, size_t tile,
                 const std::vector<double>& pc, const std::vector<double>& pr,
                 const std::vector<double>* pref, const KeySide& ks, PvProducts& p) {
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(d);
  p.cv.resize(n);
  p.ra.resize(n);
  p.mag.resize(n);
  const int k = static_cast<int>(j1 - j0), dd = static_cast<int>(d), lda = static_cast<int>(S);
  const size_t off = static_cast<size_t>(j0), voff = static_cast<size_t>(j0 * d);
  gemm_nn(rows, dd, k, pc.data() + off, lda, ks.v.data() + voff, dd, p.cv.data());
  sparse_gemm(rows, k, d, pr.data() + off, S, ks.vabs.data() + voff, p.ra.data());
  // centre + radius >= |P| (P >= 0), one double rounding up more: the magnitude's weights.
  const size_t rk = static_cast<size_t>(rows) * static_cast<size_t>(k);
  p.weights.resize(rk);
  for (int r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(r) * static_cast<size_t>(S) + off;
    double* dst = p.weights.data() + static_cast<size_t>(r) * static_cast<size_t>(k);
    for (int j = 0; j < k; ++j) dst[j] = (pc[row + j] + pr[row + j]) * (1 + 0x1p-50);
  }
  p.weights_up.prepare(p.weights.data(), rows, k, k, true);
  upper_gemm(p.weights_up, ks.vabs_up[tile], false, p.mag.data(), d);
  if (pref != nullptr) {
    p.refv.resize(n);
    gemm_nn(rows, dd, k, pref->data() + off, lda, ks.v.data() + voff, dd, p.refv.data());
  }
}

// The fp32 PSUM value of a sum of `terms` products with centre cv, radius ra and magnitude at
// most mag (plus the double evaluation's own error: the dgemm of cv and the sum of ra, each
// within gamma_terms(2^-53) of mag).
Iv psum_interval(double cv, double ra, double mag, int64_t terms) {
  const double w = ra + gamma_n(terms + 1, kU32) * mag +
                   static_cast<double>(terms + 2) * kEps64 * mag +
                   static_cast<double>(terms + 1) * 2 * kEta32;
  return round_to(DType::fp32, Iv{cv - w, cv + w});
}

// One query row's visible keys: a range [j0, j1) or, for an explicit mask, a list.
struct RowKeys {
  int64_t j0 = 0, j1 = 0;
  bool listed = false;
  std::vector<int64_t> list;
  int64_t count() const { return listed ? static_cast<int64_t>(list.size()) : j1 - j0; }
  void load(const AttentionSpec& spec, int64_t b, int64_t i) {
    const int64_t S = spec.seqlen_kv;
    if (const auto range = spec.visible_range(b, i)) {
      listed = false;
      j0 = std::max<int64_t>(0, range->first);
      j1 = std::max(j0, std::min(S, range->second));
    } else {
      listed = true;
      spec.visible_keys(b, i, list);
    }
  }
  // dst[t] = row[key t].
  void gather(const double* row, double* dst) const {
    if (!listed) {
      std::copy(row + j0, row + j1, dst);
    } else {
      for (size_t t = 0; t < list.size(); ++t) dst[t] = row[list[t]];
    }
  }
  // row[key t] = src[t].
  void scatter(const double* src, double* row) const {
    if (!listed) {
      std::copy(src, src + (j1 - j0), row + j0);
    } else {
      for (size_t t = 0; t < list.size(); ++t) row[list[t]] = src[t];
    }
  }
};

// One row's arrays over its visible keys (each of Skv elements, the first count() used).
struct RowArrays {
  std::vector<double> lo, hi, mag, rad, c, r;  // interval ends, products, centre and radius
  std::vector<double> ref, eref;               // the reference lane
  std::vector<float> aref, pref32;
  void resize(int64_t S) {
    const size_t n = static_cast<size_t>(S);
    for (auto* v : {&lo, &hi, &mag, &rad, &c, &r, &ref, &eref}) v->resize(n);
    aref.resize(n);
    pref32.resize(n);
  }
};

// Sums of x[0..n) in four interleaved partial sums (the double evaluation of the bound: any order
// is covered by its kEps64 term).
double sum4(const double* x, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t t = 0;
  for (; t + 4 <= n; t += 4) {
    s0 += x[t];
    s1 += x[t + 1];
    s2 += x[t + 2];
    s3 += x[t + 3];
  }
  for (; t < n; ++t) s0 += x[t];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

CaseBound case_error_bound(const PrecisionContract& ct, const AttentionSpec& spec,
                           const AttentionInputs& in, const std::vector<double>& exact,
                           bool with_reference) {
  spec.validate();
  ct.validate();
  validate_inputs(spec, in);
  use_one_blas_thread();
  const int64_t B = spec.batch, H = spec.heads, Sq = spec.seqlen_q, S = spec.seqlen_kv,
                d = spec.d_head;
  CaseBound res;
  res.bound.assign(static_cast<size_t>(spec.q_elements()), kInf);
  if (with_reference) res.reference.assign(static_cast<size_t>(spec.q_elements()), 0.0);
  const bool with_ref = with_reference;

  const std::vector<double> inv_freq = rope_inverse_frequencies(spec);
  const std::vector<double>* rf = spec.rope ? &inv_freq : nullptr;
  const float scale = static_cast<float>(spec.scale);
  const double u_qk = accumulation_u(ct.qk_accum), eta_qk = subnormal_half_spacing(ct.qk_accum);
  // The score's width per unit of magnitude: the fp32 (qk_accum) accumulation in any order
  // (gamma_d) and the dgemm's own error ((d + 4) double epsilons).
  const double w_mag = gamma_n(d, u_qk) + static_cast<double>(d + 4) * kEps64;
  const double w_abs = static_cast<double>(d) * 2 * eta_qk;
  const double u_sum = accumulation_u(ct.sum_dtype), eta_sum = subnormal_half_spacing(ct.sum_dtype);
  const bool deferred = ct.norm == Normalisation::deferred;
  const DType nd = ct.norm_dtype;
  // q as loaded: the input, or with RoPE the fp32 rotation (a value of no narrower dtype)
  const bool round_q_first =
      folded_scale_rounds_twice(ct, spec.rope ? DType::fp32 : spec.input_dtype, scale);
  // Online softmax (ct.online_tile): p of a tile is rounded at that tile's running max, not at
  // the row max, so the stored exp and P are no longer values of their dtypes at the row max's
  // scale: their roundings widen the interval by the unit roundoff instead of rounding its ends.
  const bool online = ct.online_tile > 0;
  const double u_exp_store = conversion_roundoff(DType::fp32, ct.exp_dtype);
  const double u_p_store = conversion_roundoff(ct.exp_dtype, ct.p_dtype);
  const double eta_exp = subnormal_half_spacing(ct.exp_dtype);
  const double eta_p = subnormal_half_spacing(ct.p_dtype);
  const double exp_rel = ct.exp_ulps * std::ldexp(1.0, -23);
  const double exp_abs = ct.exp_ulps * std::ldexp(1.0, -149);
  int64_t online_tiles = 0;
  const double u_part = online ? conversion_roundoff(DType::fp32, ct.online_partial_dtype) : 0.0;
  const double eta_part = u_part > 0 ? subnormal_half_spacing(ct.online_partial_dtype) : 0.0;
  const int64_t pv_tile = ct.pv_accum == DType::fp32 ? std::max<int64_t>(S, 1) : ct.kv_tile;

  ScoreBlock sb;
  std::vector<double> pc, pr, pref;  // [rows][Skv] P as fed to PV
  RowArrays ra;
  ra.resize(S);
  RowKeys keys;
  std::vector<Iv> l_row;
  std::vector<double> l_ref_row;
  std::vector<int64_t> n_row;   // visible keys (-1: normalised P not formed, see below)
  std::vector<uint8_t> ok_row;  // the row's bound is certified
  PvProducts pv;

  for (int64_t b = 0; b < B; ++b) {
    for (int64_t kvh = 0; kvh < spec.kv_heads; ++kvh) {
      const KeySide ks = key_side(ct, spec, in, b, kvh, rf, pv_tile);
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
            fed_vector(ct, in.q.data() + spec.q_index(b, h, i, 0), d, rf,
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
          const bool radius = q_radius || ks.has_radius;
          if (!radius) {
            // Only an upper bound of the magnitude is needed (it scales the accumulation's
            // gamma_d term): float sgemm with its rounding added (upper_gemm.h).
            sb.qabs_up.prepare(sb.qabs.data(), rows, d, d, true);
            upper_gemm(sb.qabs_up, ks.kabs_up, true, sb.mag.data(), n);
          } else {
            // The radius is a difference of two magnitudes, so both stay in dgemm (whose error
            // the width's kEps64 term covers).
            gemm_nt(rows, n, dd, sb.qabs.data(), dd, ks.kabs.data(), dd, sb.mag.data());
            // Radius of q'.k' over the boxes: (|qc| + qr).(|kc| + kr) - |qc|.|kc|.
            sb.qabs_c.resize(rd);
            for (size_t x = 0; x < rd; ++x) sb.qabs_c[x] = std::fabs(sb.qc[x]);
            sb.radius.resize(rs);
            const std::vector<double>& kabs_c = ks.has_radius ? ks.kabs_c : ks.kabs;
            gemm_nt(rows, n, dd, sb.qabs_c.data(), dd, kabs_c.data(), dd, sb.radius.data());
            for (size_t x = 0; x < rs; ++x) sb.radius[x] = sb.mag[x] - sb.radius[x];
          }

          // P's centre and radius (and reference): every entry is written below (0 where a key
          // is masked or the row uncertified).
          pc.resize(rs);
          pr.resize(rs);
          if (with_ref) pref.resize(rs);
          l_row.assign(static_cast<size_t>(rows), Iv{});
          l_ref_row.assign(static_cast<size_t>(rows), 0.0);
          n_row.assign(static_cast<size_t>(rows), 0);
          ok_row.assign(static_cast<size_t>(rows), 1);
          for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            keys.load(spec, b, i);
            const int64_t nvis = keys.count();
            n_row[static_cast<size_t>(r)] = nvis;
            const size_t row = static_cast<size_t>(r) * static_cast<size_t>(S);
            // P is 0 at masked keys: outside the range, or everywhere before a list is scattered.
            const auto zero_masked = [&](std::vector<double>& m) {
              double* x = &m[row];
              if (keys.listed) {
                std::fill(x, x + S, 0.0);
              } else {
                std::fill(x, x + keys.j0, 0.0);
                std::fill(x + keys.j1, x + S, 0.0);
              }
            };
            zero_masked(pc);
            zero_masked(pr);
            if (with_ref) zero_masked(pref);
            if (nvis == 0) continue;  // fully masked: the output is 0 (a point)
            // A range of keys is evaluated in place in the block matrices (the dot's slots hold
            // the lower ends, the magnitude's the upper ends, P's centre and radius go straight to
            // pc and pr); a list of keys is gathered into the row arrays and scattered back.
            const bool in_place = !keys.listed;
            const size_t at = row + static_cast<size_t>(in_place ? keys.j0 : 0);
            double* lo = in_place ? &sb.dot[at] : ra.lo.data();
            double* hi = in_place ? &sb.mag[at] : ra.hi.data();
            double* p_lo = in_place ? &pc[at] : ra.c.data();
            double* p_hi = in_place ? &pr[at] : ra.r.data();
            double* ref = with_ref ? (in_place ? &pref[at] : ra.ref.data()) : nullptr;
            const double* rad = nullptr;
            if (!in_place) {
              keys.gather(&sb.dot[row], lo);
              keys.gather(&sb.mag[row], hi);
              if (radius) keys.gather(&sb.radius[row], ra.rad.data());
              if (radius) rad = ra.rad.data();
            } else if (radius) {
              rad = &sb.radius[at];
            }

            // Scores: the exact dot of the fed vectors within the width; then the contract's
            // roundings, each applied to both ends of every key's interval at once.
            if (with_ref) std::copy(lo, lo + nvis, ref);
            for (int64_t t = 0; t < nvis; ++t) {
              const double w = (rad != nullptr ? rad[t] : 0.0) + w_mag * hi[t] + w_abs;
              const double dot = lo[t];
              lo[t] = dot - w;
              hi[t] = dot + w;
            }
            round_lo(ct.qk_accum, lo, nvis);
            round_hi(ct.qk_accum, hi, nvis);
            if (with_ref) round_nearest(ct.qk_accum, ref, nvis);
            if (!ct.scale_folded_into_q) {
              const double s = scale;
              for (int64_t t = 0; t < nvis; ++t) {
                const Iv a = scaled(Iv{lo[t], hi[t]}, s);
                lo[t] = a.lo;
                hi[t] = a.hi;
              }
              round_lo(DType::fp32, lo, nvis);
              round_hi(DType::fp32, hi, nvis);
              if (with_ref) {
                for (int64_t t = 0; t < nvis; ++t) ref[t] *= s;
                round_nearest(DType::fp32, ref, nvis);
              }
            }
            if (!spec.bias.empty()) {  // + the bias in bias_dtype, in fp32 (a rounding fixed)
              double* bh = ra.mag.data();
              keys.gather(&spec.bias[static_cast<size_t>(i * S)], bh);
              for (int64_t t = 0; t < nvis; ++t) bh[t] = contract_bias(ct.bias_dtype, bh[t]);
              for (int64_t t = 0; t < nvis; ++t) {
                lo[t] += bh[t];
                hi[t] += bh[t];
              }
              round_lo(DType::fp32, lo, nvis);
              round_hi(DType::fp32, hi, nvis);
              if (with_ref) {
                for (int64_t t = 0; t < nvis; ++t) ref[t] += bh[t];
                round_nearest(DType::fp32, ref, nvis);
              }
            }
            round_lo(ct.score_dtype, lo, nvis);
            round_hi(ct.score_dtype, hi, nvis);
            if (with_ref) round_nearest(ct.score_dtype, ref, nvis);

            // The row max. A NaN score (NaN or infinite inputs, an interval end at inf - inf)
            // leaves the row uncertified.
            uint32_t nan = 0;
            double m_lo = -kInf, m_hi = -kInf;
            for (int64_t t = 0; t < nvis; ++t) {
              nan |= static_cast<uint32_t>(std::isnan(lo[t]) || std::isnan(hi[t]));
              m_lo = lo[t] > m_lo ? lo[t] : m_lo;
              m_hi = hi[t] > m_hi ? hi[t] : m_hi;
            }
            Iv m{m_lo, m_hi};
            if (has_sink) m = {std::max(m.lo, sink), std::max(m.hi, sink)};
            m = round_to(ct.max_dtype, m);
            double m_ref = -kInf;
            if (with_ref) {
              for (int64_t t = 0; t < nvis; ++t) m_ref = std::max(m_ref, ref[t]);
              if (has_sink) m_ref = std::max(m_ref, sink);
              m_ref = round_to(ct.max_dtype, m_ref);
            }
            OnlineTerms ot;
            if (online) {
              double amax = 0;
              for (int64_t t = 0; t < nvis; ++t) {
                amax = std::max({amax, std::fabs(lo[t]), std::fabs(hi[t])});
              }
              ot = online_softmax_terms(ct, S, nvis, amax);
              online_tiles = ot.tiles;
            }

            // p = exp(s - m) (the subtraction in fp32); lo/hi become the exp outputs.
            for (int64_t t = 0; t < nvis; ++t) {
              const double s_lo = lo[t];
              lo[t] = s_lo - m.hi;
              hi[t] = hi[t] - m.lo;
            }
            if (online) {
              // exp(fl(s - m_t)) * exp(m_t - m): the argument's rounding is within
              // u32 |s - m_t| <= u32 |s - m| of the exact s - m (s <= m_t <= m).
              for (int64_t t = 0; t < nvis; ++t) {
                const double rr = kU32 * std::max(std::fabs(lo[t]), std::fabs(hi[t]));
                lo[t] -= rr;
                hi[t] += rr;
              }
              exp_enclose(lo, hi, lo, hi, nvis);
              for (int64_t t = 0; t < nvis; ++t) {
                lo[t] = std::max(
                    0.0, down(lo[t] * (1 - exp_rel) * (1 - u_exp_store) - exp_abs - eta_exp));
                hi[t] = up(hi[t] * (1 + exp_rel) * (1 + u_exp_store) + exp_abs + eta_exp);
              }
            } else {
              round_lo(DType::fp32, lo, nvis);
              round_hi(DType::fp32, hi, nvis);
              exp_rows(lo, hi, nvis, ct.exp_ulps, ct.exp_dtype);
            }
            // P as fed to PV: its lower end in p_lo, its upper end in p_hi for now.
            std::copy(lo, lo + nvis, p_lo);
            std::copy(hi, hi + nvis, p_hi);
            if (online) {
              // P rounded at the tile's scale, then rescaled (numerator only).
              for (int64_t t = 0; t < nvis; ++t) {
                p_lo[t] = std::max(0.0, down((p_lo[t] * (1 - u_p_store) - eta_p) / (1 + ot.numer)));
                p_hi[t] = up((p_hi[t] * (1 + u_p_store) + eta_p) * (1 + ot.numer));
              }
            } else {
              round_lo(ct.p_dtype, p_lo, nvis);
              round_hi(ct.p_dtype, p_hi, nvis);
            }
            double l_lo = ct.sum_of_rounded_p ? sum4(p_lo, nvis) : sum4(lo, nvis);
            double l_hi = ct.sum_of_rounded_p ? sum4(p_hi, nvis) : sum4(hi, nvis);

            // The reference lane: exp_f32 of the fp32 difference, the stored exp and P.
            double l_ref = 0;
            if (with_ref) {
              for (int64_t t = 0; t < nvis; ++t)
                ra.aref[static_cast<size_t>(t)] = static_cast<float>(ref[t] - m_ref);
              exp_f32_array(ra.aref.data(), ra.pref32.data(), nvis);
              double* e_ref = ra.eref.data();
              for (int64_t t = 0; t < nvis; ++t) e_ref[t] = ra.pref32[static_cast<size_t>(t)];
              round_nearest(ct.exp_dtype, e_ref, nvis);
              std::copy(e_ref, e_ref + nvis, ref);
              round_nearest(ct.p_dtype, ref, nvis);  // ref: P's reference
              const double* summed = ct.sum_of_rounded_p ? ref : e_ref;
              for (int64_t t = 0; t < nvis; ++t) l_ref += summed[t];
            }

            int64_t l_terms = nvis;
            if (has_sink) {
              const Iv arg = round_to(DType::fp32, Iv{sink - m.hi, sink - m.lo});
              // The sink's term: rounded like the keys' (exp_dtype, then p_dtype when l sums the
              // rounded P), or kept in fp32 (sink_term_fp32).
              const DType sink_dt = ct.sink_term_fp32 ? DType::fp32 : ct.exp_dtype;
              const bool sink_p = ct.sum_of_rounded_p && !ct.sink_term_fp32;
              const Iv e = exp_interval(arg, ct.exp_ulps, sink_dt);
              const Iv summand = sink_p ? round_to(ct.p_dtype, e) : e;
              l_lo += summand.lo;
              l_hi += summand.hi;
              if (with_ref) {
                const double e_ref = quantize(sink_dt, exp_f32(static_cast<float>(sink - m_ref)));
                l_ref += sink_p ? round_to(ct.p_dtype, e_ref) : e_ref;
              }
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
            if (with_ref) l_ref_row[static_cast<size_t>(r)] = round_to(ct.sum_dtype, l_ref);
            // Certified only with a positive, finite denominator interval (and no NaN score).
            const bool l_ok = nan == 0 && l.lo > 0 && l.hi < kInf;
            if (!l_ok) {
              ok_row[static_cast<size_t>(r)] = 0;
              // Without a denominator P = p / l is not formed (nor its reference).
              if (!deferred) n_row[static_cast<size_t>(r)] = -1;
            }

            if (!deferred && l_ok) {
              // P = p / l rounded to p_dtype before PV (an fp32 division); e >= 0, l > 0.
              for (int64_t t = 0; t < nvis; ++t) {
                p_lo[t] = lo[t] / l.hi;
                p_hi[t] = hi[t] / l.lo;
              }
              round_lo(DType::fp32, p_lo, nvis);
              round_hi(DType::fp32, p_hi, nvis);
              round_lo(ct.p_dtype, p_lo, nvis);
              round_hi(ct.p_dtype, p_hi, nvis);
              if (with_ref) {
                const double lr = l_ref_row[static_cast<size_t>(r)];
                const double* e_ref = ra.eref.data();
                for (int64_t t = 0; t < nvis; ++t) ref[t] = e_ref[t] / lr;
                round_nearest(DType::fp32, ref, nvis);
                round_nearest(ct.p_dtype, ref, nvis);
              }
            }
            // Centre and radius of P for the PV products (0 for a row left uncertified).
            for (int64_t t = 0; t < nvis; ++t) {
              const double plo = p_lo[t], phi = p_hi[t];
              p_lo[t] = l_ok ? 0.5 * (plo + phi) : 0.0;
              p_hi[t] = l_ok ? up(0.5 * (phi - plo)) : 0.0;
            }
            if (!in_place) {
              keys.scatter(p_lo, &pc[row]);
              keys.scatter(p_hi, &pr[row]);
              if (with_ref) keys.scatter(ref, &pref[row]);
            }
          }

          // PV: one fp32 accumulation over every key (any order), or fp32 partials per kv tile
          // accumulated tile by tile in pv_accum.
          const size_t out_n = rd;
          std::vector<Iv> acc(out_n, Iv{});
          std::vector<double> acc_ref(with_ref ? out_n : 0, 0.0);
          const std::vector<double>* pref_p = with_ref ? &pref : nullptr;
          if (ct.pv_accum == DType::fp32) {
            pv_products(rows, S, d, 0, S, 0, pc, pr, pref_p, ks, pv);
            for (int r = 0; r < rows; ++r) {
              const int64_t terms = n_row[static_cast<size_t>(r)];
              for (int64_t c = 0; c < d; ++c) {
                const size_t x =
                    static_cast<size_t>(r) * static_cast<size_t>(d) + static_cast<size_t>(c);
                // An online softmax adds a rescaling multiply and an add per tile.
                acc[x] = psum_interval(pv.cv[x], pv.ra[x], pv.mag[x],
                                       std::max<int64_t>(terms, 0) + 2 * online_tiles);
                if (u_part > 0) {
                  // The running output rounded to online_partial_dtype before each of the T - 1
                  // rescales: within u |partial| alpha + eta each, and |partial| alpha is at
                  // most the whole sum of |p| |v| (mag) with its accumulation error. Then the
                  // merged numerator rounds to it (an interval rounds at its ends).
                  const double rescales =
                      static_cast<double>(std::max<int64_t>(online_tiles - 1, 0));
                  const double w = rescales * (u_part * pv.mag[x] * (1 + 0x1p-20) + eta_part);
                  acc[x] = round_to(ct.online_partial_dtype,
                                    round_to(DType::fp32, Iv{acc[x].lo - w, acc[x].hi + w}));
                }
                if (with_ref) acc_ref[x] = round_to(DType::fp32, pv.refv[x]);
              }
            }
          } else {
            for (int64_t j0 = 0; j0 < S; j0 += ct.kv_tile) {
              const int64_t j1 = std::min(S, j0 + ct.kv_tile);
              pv_products(rows, S, d, j0, j1, static_cast<size_t>(j0 / ct.kv_tile), pc, pr, pref_p,
                          ks, pv);
              for (size_t x = 0; x < out_n; ++x) {
                const Iv part = psum_interval(pv.cv[x], pv.ra[x], pv.mag[x], j1 - j0);
                acc[x] =
                    round_to(ct.pv_accum,
                             round_to(DType::fp32, Iv{acc[x].lo + part.lo, acc[x].hi + part.hi}));
                if (with_ref) {
                  acc_ref[x] =
                      round_to(ct.pv_accum, acc_ref[x] + round_to(DType::fp32, pv.refv[x]));
                }
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
              const bool certified = ok_row[static_cast<size_t>(r)] != 0;
              if (state > 0) {
                o = acc[x];
                if (with_ref) o_ref = acc_ref[x];
                if (deferred) {
                  if (nd == DType::fp32) {
                    // acc / l, or acc * (1 / l): either, in fp32.
                    const Iv recip = round_to(DType::fp32, Iv{1 / l.hi, 1 / l.lo});
                    o = hull(round_to(DType::fp32, divided_by_positive(o, l)),
                             round_to(DType::fp32, times_positive(o, recip)));
                    if (with_ref) o_ref = round_to(DType::fp32, o_ref / l_ref);
                  } else {
                    const Iv ln = round_to(nd, l);
                    const Iv recip = round_to(nd, round_to(DType::fp32, Iv{1 / ln.hi, 1 / ln.lo}));
                    // The PV result is rounded to nd before the product (a copy out of PSUM)
                    // or multiplied straight out of PSUM (tensor_scalar on the fp32 value):
                    // the contract does not say which, so both.
                    o = hull(
                        round_to(nd, round_to(DType::fp32, times_positive(round_to(nd, o), recip))),
                        round_to(nd, round_to(DType::fp32, times_positive(o, recip))));
                    if (with_ref) {
                      const double rr = round_to(nd, 1 / round_to(nd, l_ref));
                      o_ref = round_to(nd, round_to(nd, o_ref) * rr);
                    }
                  }
                }
              }
              o = round_to(ct.out_dtype, o);
              if (with_ref) res.reference[at] = round_to(ct.out_dtype, o_ref);
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
