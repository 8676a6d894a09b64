// The loops of interval_rows.h, included inside an anonymous namespace by interval_rows.cpp (the
// portable build) and by interval_rows_avx2.cpp / interval_rows_avx512.cpp (the same source built
// for those ISAs). Builtins only, no standard-library calls: an inline library function compiled
// here with AVX flags could otherwise be the copy the linker keeps for every caller.
//
// Every float conversion is in a loop over arrays, never in straight-line code on a pair of
// values: GCC 12.2's basic-block (SLP) vectoriser drops the round trip (double)(float)x when it
// packs two or four of them into one vector (oracle/README.md "Speed": that is what made the
// reverted wt-fast case bound unsound), while its loop vectoriser keeps it. The tests of
// interval_rows.h compare every build of these loops with the scalar out-of-line quantize().
//
// The includer includes <cstdint> and model/numerics/dtype_bf16.h (static inline, built with the
// includer's ISA) before opening its namespace.
#pragma once

// Outward nudges of a double endpoint (the same as case_bound.cpp's down/up): far above a few
// double ulps of evaluation error, far below any fp32 ulp.
inline double interval_nudge_down(double x) {
  return x - __builtin_fabs(x) * 0x1p-44 - 0x1p-1000;
}
inline double interval_nudge_up(double x) {
  return x + __builtin_fabs(x) * 0x1p-44 + 0x1p-1000;
}

inline uint32_t interval_float_bits(float f) {
  return __builtin_bit_cast(uint32_t, f);
}

// fp32 value f rounded to bf16 (nearest even) and read back, as quantize(bf16, f).
inline float interval_bf16_of(float f) {
  return __builtin_bit_cast(float,
                            ncv::bf16_decode_bits(ncv::bf16_encode_bits(interval_float_bits(f))));
}

// x[i] := quantize(fp32, float(v)) with v = x[i] nudged down (dir < 0), up (dir > 0) or as is.
inline void interval_round_fp32(double* x, long n, int dir) {
  if (dir < 0) {
    for (long i = 0; i < n; ++i) x[i] = static_cast<float>(interval_nudge_down(x[i]));
  } else if (dir > 0) {
    for (long i = 0; i < n; ++i) x[i] = static_cast<float>(interval_nudge_up(x[i]));
  } else {
    for (long i = 0; i < n; ++i) x[i] = static_cast<float>(x[i]);
  }
}

// x[i] := quantize(bf16, float(v)), v as above.
inline void interval_round_bf16(double* x, long n, int dir) {
  if (dir < 0) {
    for (long i = 0; i < n; ++i) {
      x[i] = interval_bf16_of(static_cast<float>(interval_nudge_down(x[i])));
    }
  } else if (dir > 0) {
    for (long i = 0; i < n; ++i) {
      x[i] = interval_bf16_of(static_cast<float>(interval_nudge_up(x[i])));
    }
  } else {
    for (long i = 0; i < n; ++i) x[i] = interval_bf16_of(static_cast<float>(x[i]));
  }
}

// exp(x) for x in [-700, 700], in double arithmetic that vectorises, relative error below
// 2^-47.4 (interval_rows.h states the analysis). x = k ln2 + r with k the nearest integer to
// x / ln2 (the 1.5 * 2^52 shift rounds it; its low bits are k), r = (x - k ln2_hi) - k ln2_lo
// (ln2_hi has 32 significant bits, so k ln2_hi is exact for |k| <= 1010 and so is the
// subtraction, by Sterbenz), e^r by its Taylor polynomial of degree 13 on |r| <= 0.3466, and 2^k
// from k's bits (a normal double for |k| <= 1010).
inline double interval_exp_core(double x) {
  const double shift = 0x1.8p52, log2e = 0x1.71547652b82fep0;
  const double ln2_hi = 0x1.62e42feep-1, ln2_lo = 0x1.a39ef35793c76p-33;
  double kd = x * log2e + shift;
  const uint64_t kbits = __builtin_bit_cast(uint64_t, kd);
  kd -= shift;
  const double r = (x - kd * ln2_hi) - kd * ln2_lo;
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
  // The low 12 bits of kbits are k mod 4096; k + 1023 in [13, 2033] is 2^k's biased exponent.
  return p * __builtin_bit_cast(double, (kbits + 1023u) << 52);
}

// e_lo[i] <= exp(lo[i]) and e_hi[i] >= exp(hi[i]) (NaN in: NaN out). Outside [-700, 700] the
// ends are 0 (lower, x < -700), exp(-700) enclosed (upper, x < -700: exp is increasing) and
// +inf (upper, x > 700); both are far outside fp32's range, where the caller's rounding sends
// them anyway.
inline void interval_exp_enclose(const double* lo, const double* hi, double* e_lo, double* e_hi,
                                 long n) {
  const double widen = 0x1p-42;  // the enclosure: about 40 times the core's error bound
  for (long i = 0; i < n; ++i) {
    const double x = lo[i];
    const double c = x > 700.0 ? 700.0 : x;  // NaN stays NaN (comparisons are false)
    const double e = interval_exp_core(c < -700.0 ? -700.0 : c) * (1.0 - widen);
    e_lo[i] = x < -700.0 ? 0.0 : e;
  }
  for (long i = 0; i < n; ++i) {
    const double x = hi[i];
    const double c = x < -700.0 ? -700.0 : x;
    const double e = interval_exp_core(c > 700.0 ? 700.0 : c) * (1.0 + widen);
    e_hi[i] = x > 700.0 ? __builtin_inf() : e;
  }
}
