// The fp32 exp loop (fp32_exp.h), included inside an anonymous namespace by fp32_exp.cpp
// (portable) and fp32_exp_avx2.cpp (compiled for AVX2). Both run the same IEEE fp32 operations in
// the same order and nothing is contracted (-ffp-contract=off), so both give the same bits; only
// the vector width differs. No library templates or inline functions here: see matmul_fma.cpp on
// why an ISA-specific file must not instantiate shared ones.
//
// exp(x) = 2^k * exp(r): k = round(x / ln2) (any nearby integer would do), r = x - k * ln2 with ln2
// split into a 15-bit head (k * head and x - k * head are exact for |k| <= 150) and a tail;
// exp(r) = 1 + (r + r^2 * q(r)), q the Taylor polynomial 1/2 + r/6 + ... + r^5/5040 (truncation
// below 6e-9 relative for |r| <= 0.35). 2^k is applied as two exact powers of two, so a subnormal
// result is rounded once. Measured against long double expl by bench/exp_accuracy (the record is
// in bench/README.md): less than 1 ulp off, i.e. always one of the two floats around exp(x).

constexpr float kExpInvLn2 = 0x1.715476p+0f;
constexpr float kExpLn2Hi = 0x1.62e4p-1f;
constexpr float kExpLn2Lo = 0x1.7f7d1cp-20f;  // ln2 - head, to nearest float
constexpr float kExpRoundShift = 0x1.8p23f;   // x + shift - shift rounds |x| < 2^22 to an integer
// exp(-104) rounds to +0 and exp(89) to +Inf, as does everything beyond (Inf included); the clamp
// keeps k in [-150, 129]. NaN never reaches the loop (the caller passes it through).
constexpr float kExpLo = -104.0f, kExpHi = 89.0f;

// out[i] = exp(in[i]) for non-NaN in[i], in chunks: the clamp runs as its own loop, which keeps
// both loops free of control flow (vectorisable).
inline void exp_f32_loop(const float* in, float* out, long n) {
  constexpr long kChunk = 256;
  float t[kChunk];
  for (long i0 = 0; i0 < n; i0 += kChunk) {
    const long m = n - i0 < kChunk ? n - i0 : kChunk;
    for (long i = 0; i < m; ++i) {
      float x = in[i0 + i];
      x = x < kExpLo ? kExpLo : x;
      x = x > kExpHi ? kExpHi : x;
      t[i] = x;
    }
    for (long i = 0; i < m; ++i) {
      const float x = t[i];
      const float kd = (x * kExpInvLn2 + kExpRoundShift) - kExpRoundShift;
      const float r = (x - kd * kExpLn2Hi) - kd * kExpLn2Lo;
      float q = 1.0f / 5040;
      q = 1.0f / 720 + r * q;
      q = 1.0f / 120 + r * q;
      q = 1.0f / 24 + r * q;
      q = 1.0f / 6 + r * q;
      q = 0.5f + r * q;
      const float p = 1.0f + (r + (r * r) * q);
      const int k = static_cast<int>(kd);
      const int k1 = k / 2, k2 = k - k1;  // each in [-75, 65]: normal powers of two
      const float s1 = __builtin_bit_cast(float, static_cast<unsigned>(k1 + 127) << 23);
      const float s2 = __builtin_bit_cast(float, static_cast<unsigned>(k2 + 127) << 23);
      out[i0 + i] = (p * s1) * s2;
    }
  }
}
