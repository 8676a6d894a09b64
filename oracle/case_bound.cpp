// Interval evaluation of a precision contract (oracle/ERROR_BOUNDS.md "The case bound"). The
// stages follow contract_reference.cpp one for one; each carries [lo, hi] (every value a kernel
// honouring the contract can hold there) and `ref` (one evaluation: each stage rounded once from
// its double-precision value).
#include "oracle/case_bound.h"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "model/numerics/dtype_bf16.h"
#include "model/numerics/fp32_exp.h"
#include "oracle/blas_threads.h"
#include "oracle/error_bound.h"
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

// quantize() with the two dtypes the contracts mostly use inline: it is called ~15 times per
// (query, key) pair, and the out-of-line encode/decode pair was ~16% of a check (perf). The same
// bits as quantize (the bf16 helpers are the model's own).
[[gnu::always_inline]] inline double quantize_fast(DType t, float x) {
  if (t == DType::fp32) return x;
  if (t == DType::bf16) {
    return std::bit_cast<float>(bf16_decode_bits(bf16_encode_bits(std::bit_cast<uint32_t>(x))));
  }
  return quantize(t, x);
}

// Rounding to nearest is monotone, and every value a kernel holds at a stage is an fp32 value or
// narrower: a value of dtype t that is >= x is >= quantize(t, fp32(x)), and one that is <= x is
// <= it. So rounding both ends of an interval keeps every possible value inside.
[[gnu::always_inline]] inline double round_to(DType t, double x) {
  return quantize_fast(t, static_cast<float>(x));
}
[[gnu::always_inline]] inline Iv round_to(DType t, Iv v) {
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

// Arguments of exp_near outside [-kExpArgMax, kExpArgMax] take libm's exp instead.
constexpr double kExpArgMax = 700;
// exp_near's relative error is below 2^-46.5 (range reduction ~2^-53, degree-13 Taylor remainder
// on |r| <= 0.35 ~2^-56, Horner's rounding gamma_28 e^|r| / e^-|r| ~2^-47); enclosures use 2^-44.
constexpr double kExpRel = 0x1p-44;

// exp(x) for |x| <= kExpArgMax in plain double arithmetic that vectorises (libm's scalar exp per
// (query, key) pair was ~10% of a check): x = k ln2 + r (Cody-Waite, ln2_hi with 21 trailing zero
// bits so k ln2_hi is exact), a Taylor polynomial in r, and 2^k built from k's bits (normal for
// |x| <= 700). Its error is covered by kExpRel where it is used.
[[gnu::always_inline]] inline double exp_near(double x) {
  constexpr double kShift = 0x1.8p52, kLog2e = 0x1.71547652b82fep0;
  constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;
  double kd = x * kLog2e + kShift;  // k = nearest integer to x / ln2, in the low bits
  const uint64_t kb = std::bit_cast<uint64_t>(kd);
  kd -= kShift;
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // kb's low 12 bits are k mod 4096; k + 1023 is in [1, 2046] here, the biased exponent of 2^k.
  return p * std::bit_cast<double>((kb + 1023) << 52);
}

// out[t] = exp_near(x[t]) for x[t] in [-kExpArgMax, kExpArgMax] (AVX2 clone when the CPU has it;
// the baseline is SSE2).
__attribute__((target_clones("avx2", "default"))) void exp_near_array(const double* x, double* out,
                                                                      int64_t n) {
  for (int64_t t = 0; t < n; ++t) out[t] = exp_near(x[t]);
}

// The argument exp_near_array is given for an exp interval's upper end: the end itself where
// exp_near is valid, 0 (unused) elsewhere.
double exp_near_arg(double x) {
  return x >= -kExpArgMax && x <= kExpArgMax ? x : 0.0;
}

// The fp32 exp of an argument in [x.lo, x.hi] (contract: within exp_ulps fp32 ulps, and
// exp_ulps half-spacings in the subnormal range), rounded to `t`. `near_hi` is
// exp_near(exp_near_arg(x.hi)).
Iv exp_interval(Iv x, double near_hi, double exp_ulps, DType t) {
  const double rel = exp_ulps * std::ldexp(1.0, -23), abs = exp_ulps * std::ldexp(1.0, -149);
  double e_hi = 0, e_hi_low = 0;  // exp(x.hi) lies in [e_hi_low, e_hi]
  if (x.hi >= -kExpArgMax && x.hi <= kExpArgMax) {
    e_hi = near_hi * (1 + kExpRel);
    e_hi_low = near_hi * (1 - kExpRel);
  } else if (x.hi < -kExpArgMax) {
    e_hi = 0x1p-1000;  // > exp(-700); far below any fp32 value, as is the exact value
  } else {
    e_hi = e_hi_low = std::exp(x.hi);  // beyond fp32: the end rounds to +inf (or is NaN)
  }
  // exp(lo) from exp(hi) when the interval is narrow: exp(-w) >= 1 - w.
  const double w = x.hi - x.lo;
  const double e_lo = w == 0     ? e_hi_low
                      : w < 1e-3 ? e_hi_low * (1 - w)
                                 : std::exp(x.lo) * (1 - 0x1p-50);
  return round_to(t, Iv{std::max(0.0, e_lo * (1 - rel) - abs), e_hi * (1 + rel) + abs});
}

// A q or k vector as fed to the QK^T matmul: centre and radius per component (radius 0 unless
// RoPE leaves the fp32 rotation open), following contract_reference's load_vec.
void fed_vector(const double* src, int64_t d, const std::vector<double>* inv_freq, int64_t pos,
                bool fold_scale, float scale, DType fed, double* centre, double* radius) {
  if (inv_freq == nullptr) {
    for (int64_t c = 0; c < d; ++c) {
      const float x = static_cast<float>(src[c]);
      centre[c] = quantize_fast(fed, fold_scale ? scale * x : x);
      radius[c] = 0;
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
    if (fold_scale) v = round_to(DType::fp32, scaled(v, scale));
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
  // kabs and |V| per PV tile of keys, prepared for the magnitude products (upper_gemm.h).
  UpperOperand kabs_up;
  std::vector<UpperOperand> vabs_up;
  void prepare(int64_t S, int64_t d, int64_t tile) {
    kabs_up.prepare(kabs.data(), S, d, d);
    vabs_up.clear();
    for (int64_t j0 = 0; j0 < S; j0 += tile) {
      vabs_up.emplace_back();
      vabs_up.back().prepare(vabs.data() + j0 * d, std::min(S, j0 + tile) - j0, d, d);
    }
  }
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
               inv_freq ? spec.rope->pos_k[static_cast<size_t>(b * S + j)] : 0, false, 1.0f,
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

// out[rows][d] += A[rows][k] . B[k][d] in double (A with leading dimension lda, B dense), visiting
// only A's non-zero entries when they are few. The P radius and the reference's difference from
// the centre are non-zero only where an interval straddles a rounding boundary: on real inputs a
// small fraction of the keys, so this is much cheaper than a dgemm. Otherwise it is one.
void sparse_gemm_add(int rows, int64_t k, int64_t d, const double* a, int64_t lda, const double* b,
                     double* out) {
  int64_t nnz = 0;
  for (int r = 0; r < rows; ++r) {
    const double* ar = a + r * lda;
    for (int64_t j = 0; j < k; ++j) nnz += ar[j] != 0;
  }
  if (nnz == 0) return;
  if (nnz * 8 > static_cast<int64_t>(rows) * k) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, static_cast<int>(d),
                static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(d), 1.0,
                out, static_cast<int>(d));
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

// The PV products of one row block over PV tile `tile` (keys [j0, j1)): centre . V (dgemm),
// an upper bound of (centre + radius) . |V| (the magnitude; float sgemm, upper_gemm.h),
// radius . |V| and reference . V = centre . V + (reference - centre) . V (sparse), each
// [rows][d].
struct PvProducts {
  std::vector<double> cv, mag, ra, refv;
};

void pv_products(int rows, int64_t S, int64_t d, int64_t j0, int64_t j1, size_t tile,
                 const std::vector<double>& pc, const std::vector<double>& pr,
                 const std::vector<double>& pref, const KeySide& ks, std::vector<double>& scratch,
                 PvProducts& p) {
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(d);
  p.cv.resize(n);
  p.mag.resize(n);
  p.ra.assign(n, 0.0);
  const int k = static_cast<int>(j1 - j0), dd = static_cast<int>(d), lda = static_cast<int>(S);
  const size_t off = static_cast<size_t>(j0), voff = static_cast<size_t>(j0 * d);
  gemm_nn(rows, dd, k, pc.data() + off, lda, ks.v.data() + voff, dd, p.cv.data());
  sparse_gemm_add(rows, k, d, pr.data() + off, S, ks.vabs.data() + voff, p.ra.data());
  // centre + radius, made an upper bound of the real sum by one double ulp more.
  const size_t rk = static_cast<size_t>(rows) * static_cast<size_t>(k);
  scratch.resize(rk);
  for (int r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(r) * static_cast<size_t>(S) + off;
    double* dst = scratch.data() + static_cast<size_t>(r) * static_cast<size_t>(k);
    for (int j = 0; j < k; ++j) dst[j] = (pc[row + j] + pr[row + j]) * (1 + 0x1p-50);
  }
  UpperOperand a;
  a.prepare(scratch.data(), rows, k, k);
  upper_gemm(a, ks.vabs_up[tile], false, p.mag.data(), d);
  // The reference: its difference from the centre, then the sparse product.
  for (int r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(r) * static_cast<size_t>(S) + off;
    double* dst = scratch.data() + static_cast<size_t>(r) * static_cast<size_t>(k);
    for (int j = 0; j < k; ++j) dst[j] = pref[row + j] - pc[row + j];
  }
  p.refv = p.cv;
  sparse_gemm_add(rows, k, d, scratch.data(), k, ks.v.data() + voff, p.refv.data());
}

// The fp32 PSUM value of a sum of `terms` products with centre cv, radius ra and magnitude at
// most mag (plus the double evaluation's own error), and its reference.
Iv psum_interval(double cv, double mag, double ra, int64_t terms) {
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

  ScoreBlock sb;
  std::vector<double> pc, pr, pref;                  // [rows][Skv] P as fed to PV
  std::vector<Iv> sc(static_cast<size_t>(S));        // one row's scores
  std::vector<double> sref(static_cast<size_t>(S));  // and their reference
  std::vector<Iv> ph(static_cast<size_t>(S));        // exp outputs
  std::vector<float> arg_ref(static_cast<size_t>(S)), ph_ref(static_cast<size_t>(S));
  std::vector<double> arg_hi(static_cast<size_t>(S)), exp_hi(static_cast<size_t>(S));
  std::vector<uint8_t> vis(static_cast<size_t>(S));
  std::vector<Iv> l_row;
  std::vector<double> l_ref_row;
  std::vector<int64_t> n_row;
  PvProducts pv;
  std::vector<double> pv_scratch;

  for (int64_t b = 0; b < B; ++b) {
    for (int64_t kvh = 0; kvh < spec.kv_heads; ++kvh) {
      KeySide ks = key_side(ct, spec, in, b, kvh, rf);
      ks.prepare(S, d, ct.pv_accum == DType::fp32 ? std::max<int64_t>(S, 1) : ct.kv_tile);
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
                       ct.scale_folded_into_q, scale, ct.q_dtype, &sb.qc[at], &sb.qr[at]);
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
            UpperOperand qa;
            qa.prepare(sb.qabs.data(), rows, d, d);
            upper_gemm(qa, ks.kabs_up, true, sb.mag.data(), n);
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

            // p = exp(s - m) (the subtraction in fp32), the sum l of p in sum_dtype in any order.
            // The exps of the upper ends are one vectorised pass (exp_near_array).
            double l_lo = 0, l_hi = 0, l_ref = 0;
            int64_t terms = 0;
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              const Iv s = sc[static_cast<size_t>(j)];
              const Iv arg = round_to(DType::fp32, Iv{s.lo - m.hi, s.hi - m.lo});
              ph[static_cast<size_t>(j)] = arg;
              arg_hi[static_cast<size_t>(terms)] = exp_near_arg(arg.hi);
              arg_ref[static_cast<size_t>(terms++)] =
                  static_cast<float>(sref[static_cast<size_t>(j)] - m_ref);
            }
            exp_near_array(arg_hi.data(), exp_hi.data(), terms);
            terms = 0;
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              ph[static_cast<size_t>(j)] =
                  exp_interval(ph[static_cast<size_t>(j)], exp_hi[static_cast<size_t>(terms++)],
                               ct.exp_ulps, ct.exp_dtype);
            }
            exp_f32_array(arg_ref.data(), ph_ref.data(), terms);
            int64_t t = 0;
            for (int64_t j = 0; j < S; ++j) {
              if (!vis[static_cast<size_t>(j)]) continue;
              const size_t x = row + static_cast<size_t>(j);
              const Iv e = ph[static_cast<size_t>(j)];
              const double e_ref = quantize_fast(ct.exp_dtype, ph_ref[static_cast<size_t>(t++)]);
              const Iv p = round_to(ct.p_dtype, e);
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
              const Iv e =
                  exp_interval(arg, exp_near(exp_near_arg(arg.hi)), ct.exp_ulps, ct.exp_dtype);
              const double e_ref =
                  quantize(ct.exp_dtype, exp_f32(static_cast<float>(sink - m_ref)));
              const Iv summand = ct.sum_of_rounded_p ? round_to(ct.p_dtype, e) : e;
              l_lo += summand.lo;
              l_hi += summand.hi;
              l_ref += ct.sum_of_rounded_p ? round_to(ct.p_dtype, e_ref) : e_ref;
              ++l_terms;
            }
            const double wl = gamma_n(l_terms, u_sum) * l_hi +
                              static_cast<double>(l_terms + 2) * kEps64 * l_hi +
                              static_cast<double>(l_terms) * 2 * eta_sum;
            const Iv l = round_to(ct.sum_dtype, Iv{l_lo - wl, l_hi + wl});
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
                const double e_ref = quantize_fast(ct.exp_dtype, ph_ref[static_cast<size_t>(t++)]);
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
            pv_products(rows, S, d, 0, S, 0, pc, pr, pref, ks, pv_scratch, pv);
            for (int r = 0; r < rows; ++r) {
              const int64_t terms = n_row[static_cast<size_t>(r)];
              for (int64_t c = 0; c < d; ++c) {
                const size_t x =
                    static_cast<size_t>(r) * static_cast<size_t>(d) + static_cast<size_t>(c);
                acc[x] = psum_interval(pv.cv[x], pv.mag[x], pv.ra[x], std::max<int64_t>(terms, 0));
                acc_ref[x] = round_to(DType::fp32, pv.refv[x]);
              }
            }
          } else {
            for (int64_t j0 = 0; j0 < S; j0 += ct.kv_tile) {
              const int64_t j1 = std::min(S, j0 + ct.kv_tile);
              pv_products(rows, S, d, j0, j1, static_cast<size_t>(j0 / ct.kv_tile), pc, pr, pref,
                          ks, pv_scratch, pv);
              for (size_t x = 0; x < out_n; ++x) {
                const Iv part = psum_interval(pv.cv[x], pv.mag[x], pv.ra[x], j1 - j0);
                acc[x] = round_to(ct.pv_accum, round_to(DType::fp32, add(acc[x], part)));
                acc_ref[x] = round_to(ct.pv_accum, acc_ref[x] + round_to(DType::fp32, pv.refv[x]));
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
