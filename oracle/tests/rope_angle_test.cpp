// RoPE as nki-library's attention_tkg computes cos and sin (RopeAngle::fp32_reduced,
// ERROR_BOUNDS.md §4 "RoPE"): the pipeline emulated step by step in fp32 over random and
// adversarial angles stays within rope_angle_error, which a bound of the first rounding alone
// does not (so the emulation finds what a missing term would let through); and the spec's RoPE
// with explicit frequencies and keys left unrotated (Rope::inv_freq, rotated_from).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "oracle/exact_oracle.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle {
namespace {

// The Sin argument the kernel forms for angle pos * f shifted by `shift` (pi: sin, 1.5 pi: cos),
// each step an fp32 operation (the build has -ffp-contract=off), the int32 conversion rounding to
// nearest even (model/semantics/internal.h float_to_int). nullopt-like: returns NaN when the
// argument leaves Sin's range [-fp32(pi), fp32(pi)] (the model's NaN).
double kernel_sin_argument(int64_t pos, float f, double shift) {
  const float emb = static_cast<float>(pos) * f;
  const float x = emb + static_cast<float>(shift);
  const float kf = x * static_cast<float>(1.0 / (2.0 * M_PI)) + -0.5f;
  const float k = std::nearbyint(kf);
  const float ky = k * static_cast<float>(2.0 * M_PI);
  const float res = x - ky;
  const float a = res + static_cast<float>(-M_PI);
  if (!(std::fabs(a) <= static_cast<float>(M_PI))) return NAN;
  return a;
}

struct Worst {
  double ratio = 0;  // max |error| / rope_angle_error
  double naive = 0;  // max |error| / (u E): the first rounding alone
  int64_t out_of_range = 0;
};

void sample(int64_t pos, float f, Worst& w) {
  const double theta = static_cast<double>(pos) * static_cast<double>(f);  // exact in double
  for (const double shift : {M_PI, 1.5 * M_PI}) {
    const double a = kernel_sin_argument(pos, f, shift);
    if (std::isnan(a)) {
      ++w.out_of_range;
      continue;
    }
    const double want = shift == M_PI ? std::sin(theta) : std::cos(theta);
    const double err = std::fabs(std::sin(a) - want);
    w.ratio = std::max(w.ratio, err / rope_angle_error(theta));
    if (theta > 0) w.naive = std::max(w.naive, err / (std::ldexp(1.0, -24) * theta));
  }
}

TEST(RopeAngle, TheKernelsFp32AngleStaysWithinTheBound) {
  Worst w;
  std::mt19937_64 rng(45);
  std::uniform_int_distribution<int64_t> pos(0, 1 << 17);  // attention_tkg: s_prior <= 2^17
  for (int n = 0; n < 200000; ++n) {
    // U[0, 1) frequencies as nki-library's test draws them, and a model's 10000^(-2t/d)
    const float f = n % 2 == 0 ? static_cast<float>(std::ldexp(double(rng() >> 40), -24))
                               : static_cast<float>(std::pow(10000.0, -double(rng() % 64) / 64));
    sample(pos(rng), f, w);
  }
  // adversarial: angles next to multiples of pi / 2 at large positions
  for (int64_t p = (1 << 17) - 2000; p <= (1 << 17); ++p) {
    for (int m = 1; m < 4; ++m) sample(p, static_cast<float>(m * M_PI / 2 / 1000.0), w);
  }
  EXPECT_LE(w.ratio, 1.0);
  // the bound is not vacuous, and the first rounding alone does not cover what the kernel does
  EXPECT_GT(w.ratio, 0.05);
  EXPECT_GT(w.naive, 1.0);
  // arguments a hair outside Sin's range (x next to a multiple of fp32(2 pi)) are possible
  // but rare; the model gives NaN there (reported, not part of the bound)
  EXPECT_LT(w.out_of_range, 200) << w.out_of_range;
}

TEST(RopeAngle, TheRotationBoundGrowsWithTheAngleAndTheProductStore) {
  PrecisionContract ct;
  const double u = std::ldexp(1.0, -24);
  EXPECT_EQ(rope_rotation_rel(ct, 1e4), 4 * u);  // exact cos/sin: the earlier 4 u32
  ct.rope_angle = RopeAngle::fp32_reduced;
  const double small = rope_rotation_rel(ct, 1.0), large = rope_rotation_rel(ct, 24576.0);
  EXPECT_GT(large, 3 * u * 24576.0);
  EXPECT_LT(large, 4 * u * 24576.0);
  EXPECT_LT(small, large);
  ct.rope_product_dtype = DType::bf16;
  EXPECT_GT(rope_rotation_rel(ct, 1.0) - small, unit_roundoff(DType::bf16));
}

// The spec's RoPE: keys before rotated_from are taken as stored, q is still turned.
TEST(RopeAngle, KeysBeforeRotatedFromAreNotTurned) {
  AttentionSpec s;
  s.seqlen_q = 2;
  s.seqlen_kv = 3;
  s.d_head = 4;
  AttentionInputs in;
  in.q = {0.5, -1.0, 0.25, 2.0, 1.5, 0.75, -0.5, 0.125};
  in.k = {1.0, 0.5, -0.25, 0.75, -1.0, 2.0, 0.5, 0.25, 0.125, -0.5, 1.0, 1.5};
  in.v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const OracleOutput plain = exact_attention(s, in);
  // q at position 0 and no key turned: the problem without RoPE, exactly
  s.rope = Rope{10000.0, {0, 0}, {7, 8, 9}, {0.5, 0.25}, 3};
  EXPECT_EQ(exact_attention(s, in).out, plain.out);
  // q turned, keys as stored: another result
  s.rope->pos_q = {5, 6};
  EXPECT_NE(exact_attention(s, in).out, plain.out);
  // inv_freq of the wrong length, rotated_from past the keys: spec errors
  s.rope->inv_freq = {0.5};
  EXPECT_THROW(s.validate(), SpecError);
  s.rope->inv_freq = {0.5, 0.25};
  s.rope->rotated_from = 4;
  EXPECT_THROW(s.validate(), SpecError);
}

}  // namespace
}  // namespace ncv::oracle
