// The exact oracle: every operation in IEEE binary128 (113 significant bits, Boost.Multiprecision's
// float128 over GCC's __float128 and libquadmath), on the inputs exactly as given. Its exponent
// range (2^±16383) holds every product and sum of doubles the algorithm forms (|q.k| <= d*2^2048),
// so nothing overflows before the final rounding to double. cpp_bin_float<113> computes the same
// correctly rounded +, -, *, / about 8x slower (bench/oracle_bench); exp, log, sin and cos differ
// only in their last bits, far below the double rounding of every result.
//
// Per row (b, h, i), with q' and k' the (optionally rotated) vectors:
//   s_j = scale * (q' . k'_j) + bias_ij for every visible key j (bias_ij = 0 without a bias)
//   m   = max(max_j s_j, sink_h)             (sink only when present)
//   p_j = exp(s_j - m),  l = sum_j p_j + exp(sink_h - m)
//   out = (sum_j p_j v_j) / l,  lse = m + log(l)
// Fully masked row: out = 0, lse = -inf (with a sink: out = 0, lse = sink_h).
// A row whose q vector, or the k or v vector of one of its visible keys, holds a NaN or an
// infinity yields NaN for out, lse, row_max and row_sum (oracle/README.md "NaN and Inf").
#include "oracle/exact_oracle.h"

#if NCV_EXACT_FLOAT128
#include <boost/multiprecision/float128.hpp>
#else
#include <boost/multiprecision/cpp_bin_float.hpp>
#endif
#include <cmath>
#include <ios>
#include <limits>

namespace ncv::oracle {

namespace {

namespace mp = boost::multiprecision;
#if NCV_EXACT_FLOAT128
using Real = mp::float128;
#else
// Compilers without __float128 and libquadmath (clang with libc++, as OSS-Fuzz builds): the same
// 113-bit significand and correctly rounded + - * / in software, about 3x slower.
using Real = mp::number<mp::cpp_bin_float<113, mp::digit_base_2>, mp::et_off>;
#endif

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Rotated (rope) or plain copies of vectors of d values, plus a per-vector "all finite" flag.
struct Vectors {
  std::vector<Real> data;
  std::vector<uint8_t> finite;
};

// Rotate-half RoPE of x (d values) at position pos with inverse frequencies inv_freq[t].
void rotate(const double* x, int64_t d, int64_t pos, const std::vector<Real>& inv_freq,
            Real* outv) {
  const int64_t half = d / 2;
  for (int64_t t = 0; t < half; ++t) {
    const Real angle = Real(pos) * inv_freq[static_cast<size_t>(t)];
    const Real c = cos(angle), s = sin(angle);
    const Real a = x[t], b = x[t + half];
    outv[t] = a * c - b * s;
    outv[t + half] = a * s + b * c;
  }
}

bool all_finite(const double* x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    if (!std::isfinite(x[c])) return false;
  }
  return true;
}

std::string decimal(const Real& x) {
  if (isnan(x)) return "nan";
  if (isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return signbit(x) ? "-0" : "0";
  return x.str(35, std::ios_base::scientific);  // 36 significant digits
}

}  // namespace

OracleOutput exact_attention(const AttentionSpec& spec, const AttentionInputs& in,
                             bool with_decimal) {
  validate_inputs(spec, in);
  const int64_t B = spec.batch, H = spec.heads, KVH = spec.kv_heads, Sq = spec.seqlen_q,
                Skv = spec.seqlen_kv, d = spec.d_head;

  std::vector<Real> inv_freq;
  if (spec.rope && !spec.rope->inv_freq.empty()) {
    // the given angles per position, exact (double values)
    for (double f : spec.rope->inv_freq) inv_freq.push_back(Real(f));
  } else if (spec.rope) {
    // theta^(-2t/d) = exp(-(2t/d) log theta), 2t/d exact as a quotient of small integers.
    const Real log_theta = log(Real(spec.rope->theta));
    for (int64_t t = 0; t < d / 2; ++t) {
      inv_freq.push_back(exp(-(Real(2 * t) / Real(d)) * log_theta));
    }
  }

  // Logical k and v in [b][kvh][j][c] order, k rotated when rope is on.
  Vectors K, V;
  K.data.resize(static_cast<size_t>(B * KVH * Skv * d));
  V.data.resize(K.data.size());
  K.finite.resize(static_cast<size_t>(B * KVH * Skv));
  V.finite.resize(K.finite.size());
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t j = 0; j < Skv; ++j) {
        const size_t row = static_cast<size_t>((b * KVH + g) * Skv + j);
        const double* kx = &in.k[static_cast<size_t>(spec.kv_index(b, g, j, 0))];
        const double* vx = &in.v[static_cast<size_t>(spec.kv_index(b, g, j, 0))];
        Real* kd = &K.data[row * static_cast<size_t>(d)];
        Real* vd = &V.data[row * static_cast<size_t>(d)];
        K.finite[row] = all_finite(kx, d);
        V.finite[row] = all_finite(vx, d);
        if (rope_rotates_key(spec, j) && K.finite[row]) {
          rotate(kx, d, spec.rope->pos_k[static_cast<size_t>(b * Skv + j)], inv_freq, kd);
        } else {
          for (int64_t c = 0; c < d; ++c) kd[c] = kx[c];
        }
        for (int64_t c = 0; c < d; ++c) vd[c] = vx[c];
      }
    }
  }

  OracleOutput o;
  o.out.assign(static_cast<size_t>(spec.q_elements()), 0.0);
  o.lse.assign(static_cast<size_t>(spec.rows()), -kInf);
  o.row_max.assign(o.lse.size(), -kInf);
  o.row_sum.assign(o.lse.size(), 0.0);
  if (with_decimal) o.out_decimal.assign(o.out.size(), "0");

  const Real scale(spec.scale);
  std::vector<Real> q(static_cast<size_t>(d)), s(static_cast<size_t>(Skv)),
      acc(static_cast<size_t>(d));
  std::vector<int64_t> vis;
  vis.reserve(static_cast<size_t>(Skv));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = spec.kv_head_of(h);
      for (int64_t i = 0; i < Sq; ++i) {
        const size_t r = static_cast<size_t>((b * H + h) * Sq + i);
        const size_t o0 = static_cast<size_t>(spec.q_index(b, h, i, 0));
        const double* qx = &in.q[o0];
        spec.visible_keys(b, i, vis);
        bool finite = all_finite(qx, d);
        for (int64_t j : vis) {
          const size_t kr = static_cast<size_t>((b * KVH + g) * Skv + j);
          finite = finite && K.finite[kr] && V.finite[kr];
        }
        if (!finite) {
          for (int64_t c = 0; c < d; ++c) {
            o.out[o0 + static_cast<size_t>(c)] = kNaN;
            if (with_decimal) o.out_decimal[o0 + static_cast<size_t>(c)] = "nan";
          }
          o.lse[r] = o.row_max[r] = o.row_sum[r] = kNaN;
          continue;
        }
        const bool has_sink = !spec.sink.empty();
        if (vis.empty()) {
          // Fully masked: out stays 0; the sink alone (if any) makes the denominator.
          if (has_sink) {
            o.lse[r] = o.row_max[r] = spec.sink[static_cast<size_t>(h)];
            o.row_sum[r] = 1.0;
          }
          continue;
        }
        if (spec.rope) {
          rotate(qx, d, spec.rope->pos_q[static_cast<size_t>(b * Sq + i)], inv_freq, q.data());
        } else {
          for (int64_t c = 0; c < d; ++c) q[static_cast<size_t>(c)] = qx[c];
        }
        Real m = has_sink ? Real(spec.sink[static_cast<size_t>(h)]) : Real(-kInf);
        for (int64_t j : vis) {
          const Real* kd = &K.data[static_cast<size_t>(((b * KVH + g) * Skv + j) * d)];
          Real dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += q[static_cast<size_t>(c)] * kd[c];
          Real& sj = s[static_cast<size_t>(j)];
          sj = scale * dot;
          // The additive bias is not scaled (flash_fwd folds the scale into q, then adds it).
          if (!spec.bias.empty()) sj += Real(spec.bias[static_cast<size_t>(i * Skv + j)]);
          if (sj > m) m = sj;
        }
        Real l = has_sink ? exp(Real(spec.sink[static_cast<size_t>(h)]) - m) : Real(0);
        for (auto& a : acc) a = 0;
        for (int64_t j : vis) {
          const Real p = exp(s[static_cast<size_t>(j)] - m);
          l += p;
          const Real* vd = &V.data[static_cast<size_t>(((b * KVH + g) * Skv + j) * d)];
          for (int64_t c = 0; c < d; ++c) acc[static_cast<size_t>(c)] += p * vd[c];
        }
        for (int64_t c = 0; c < d; ++c) {
          const Real x = acc[static_cast<size_t>(c)] / l;
          o.out[o0 + static_cast<size_t>(c)] = static_cast<double>(x);
          if (with_decimal) o.out_decimal[o0 + static_cast<size_t>(c)] = decimal(x);
        }
        o.row_max[r] = static_cast<double>(m);
        o.row_sum[r] = static_cast<double>(l);
        o.lse[r] = static_cast<double>(m + log(l));
      }
    }
  }
  return o;
}

}  // namespace ncv::oracle
