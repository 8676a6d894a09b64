// The exact oracle on hand-computed cases, its invariances (GQA, paged cache, RoPE relative
// positions), the fully-masked-row and NaN/Inf semantics, and agreement with the fast oracle.
#include "oracle/exact_oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "oracle/fast_oracle.h"

namespace ncv::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

AttentionSpec small(int64_t sq, int64_t skv, int64_t d) {
  AttentionSpec s;
  s.seqlen_q = sq;
  s.seqlen_kv = skv;
  s.d_head = d;
  return s;
}

AttentionInputs random_inputs(const AttentionSpec& s, uint32_t seed, double spread = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  AttentionInputs in;
  // Multiples of 2^-10 so they are exact in every wide dtype.
  auto gen = [&] { return std::round(u(rng) * 1024) / 1024; };
  in.q.resize(static_cast<size_t>(s.q_elements()));
  in.k.resize(static_cast<size_t>(s.kv_elements()));
  in.v.resize(static_cast<size_t>(s.kv_elements()));
  for (auto& x : in.q) x = gen();
  for (auto& x : in.k) x = gen();
  for (auto& x : in.v) x = gen();
  return in;
}

TEST(ExactOracle, TwoKeysByHand) {
  AttentionSpec s = small(1, 2, 1);
  AttentionInputs in{{1.0}, {0.0, 1.0}, {0.0, 1.0}};
  OracleOutput o = exact_attention(s, in, true);
  const double e = std::exp(1.0);
  EXPECT_DOUBLE_EQ(o.out[0], e / (1 + e));
  EXPECT_DOUBLE_EQ(o.lse[0], std::log1p(e));
  EXPECT_DOUBLE_EQ(o.row_max[0], 1.0);
  EXPECT_DOUBLE_EQ(o.row_sum[0], 1 + 1 / e);
  // e / (1 + e) = 0.731058578630004879251159163...
  ASSERT_EQ(o.out_decimal.size(), 1u);
  EXPECT_EQ(o.out_decimal[0].substr(0, 30), "7.3105857863000487925115924182") << o.out_decimal[0];
  EXPECT_EQ(std::stod(o.out_decimal[0]), o.out[0]);
}

TEST(ExactOracle, UniformScoresAverageV) {
  AttentionSpec s = small(1, 4, 2);
  AttentionInputs in{{0.0, 0.0}, std::vector<double>(8, 3.0), {1, 10, 2, 20, 3, 30, 4, 40}};
  OracleOutput o = exact_attention(s, in);
  EXPECT_DOUBLE_EQ(o.out[0], 2.5);
  EXPECT_DOUBLE_EQ(o.out[1], 25.0);
  EXPECT_DOUBLE_EQ(o.lse[0], std::log(4.0));
}

TEST(ExactOracle, SinkOnlyInDenominator) {
  AttentionSpec s = small(1, 1, 1);
  s.sink = {0.0};
  AttentionInputs in{{0.0}, {0.0}, {1.0}};
  OracleOutput o = exact_attention(s, in);
  EXPECT_DOUBLE_EQ(o.out[0], 0.5);
  EXPECT_DOUBLE_EQ(o.lse[0], std::log(2.0));
}

TEST(ExactOracle, FullyMaskedRows) {
  AttentionSpec s = small(2, 3, 2);
  s.mask.kind = MaskKind::position_ids;
  s.mask.pos = {-1, 0};  // row 0 sees nothing, row 1 sees key 0
  AttentionInputs in = random_inputs(s, 1);
  OracleOutput o = exact_attention(s, in, true);
  EXPECT_EQ(o.out[0], 0.0);
  EXPECT_EQ(o.out[1], 0.0);
  EXPECT_EQ(o.out_decimal[0], "0");
  EXPECT_EQ(o.lse[0], -kInf);
  EXPECT_EQ(o.row_max[0], -kInf);
  EXPECT_EQ(o.row_sum[0], 0.0);
  EXPECT_EQ(o.out[2], in.v[0]);
  EXPECT_EQ(o.out[3], in.v[1]);
  s.sink = {1.5};
  o = exact_attention(s, in);
  EXPECT_EQ(o.out[0], 0.0);
  EXPECT_EQ(o.lse[0], 1.5);
  OracleOutput f = fast_attention(s, in);
  EXPECT_EQ(f.out[0], 0.0);
  EXPECT_EQ(f.lse[0], 1.5);
}

TEST(ExactOracle, NanAndInfPropagateToTheirRowsOnly) {
  AttentionSpec s = small(2, 3, 2);
  s.mask.kind = MaskKind::causal;  // row 0 sees keys 0, 1; row 1 sees 0, 1, 2
  AttentionInputs in = random_inputs(s, 2);
  in.v[5] = std::nan("");  // key 2: only row 1 sees it
  in.k[4] = kInf;
  for (const OracleOutput& o : {exact_attention(s, in, true), fast_attention(s, in)}) {
    EXPECT_TRUE(std::isfinite(o.out[0]) && std::isfinite(o.out[1]));
    EXPECT_TRUE(std::isfinite(o.lse[0]));
    EXPECT_TRUE(std::isnan(o.out[2]) && std::isnan(o.out[3]));
    EXPECT_TRUE(std::isnan(o.lse[1]));
  }
  EXPECT_EQ(exact_attention(s, in, true).out_decimal[2], "nan");
  in.q[0] = -kInf;
  EXPECT_TRUE(std::isnan(exact_attention(s, in).out[0]));
}

TEST(ExactOracle, HugeFiniteLogitsDoNotOverflow) {
  AttentionSpec s = small(1, 2, 1);
  AttentionInputs in{{1e200}, {1e200, -1e200}, {3.0, 4.0}};
  OracleOutput o = exact_attention(s, in);
  EXPECT_EQ(o.out[0], 3.0);
  EXPECT_EQ(o.lse[0], kInf);  // 1e400 rounded to double
}

TEST(ExactOracle, GqaMatchesPerHead) {
  AttentionSpec s = small(3, 4, 2);
  s.heads = 4;
  s.kv_heads = 2;
  AttentionInputs in = random_inputs(s, 3);
  OracleOutput all = exact_attention(s, in);
  for (int64_t h = 0; h < 4; ++h) {
    AttentionSpec one = small(3, 4, 2);
    AttentionInputs oi;
    oi.q.assign(in.q.begin() + h * 6, in.q.begin() + (h + 1) * 6);
    const int64_t g = h / 2;
    oi.k.assign(in.k.begin() + g * 8, in.k.begin() + (g + 1) * 8);
    oi.v.assign(in.v.begin() + g * 8, in.v.begin() + (g + 1) * 8);
    OracleOutput o = exact_attention(one, oi);
    for (int64_t x = 0; x < 6; ++x)
      EXPECT_EQ(o.out[static_cast<size_t>(x)], all.out[static_cast<size_t>(h * 6 + x)]);
  }
}

TEST(ExactOracle, PagedCacheMatchesContiguous) {
  AttentionSpec s = small(2, 6, 2);
  s.batch = 2;
  s.mask.kind = MaskKind::causal;
  AttentionInputs in = random_inputs(s, 4);
  OracleOutput ref = exact_attention(s, in);
  // 4 physical blocks of 3 rows; batch 0 uses blocks (2, 0), batch 1 uses (3, 1).
  AttentionSpec p = s;
  p.block_kv = BlockKv{3, 4, {2, 0, 3, 1}};
  AttentionInputs pin = in;
  pin.k.assign(static_cast<size_t>(p.kv_elements()), 0.0);
  pin.v = pin.k;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t j = 0; j < 6; ++j) {
      for (int64_t c = 0; c < 2; ++c) {
        pin.k[static_cast<size_t>(p.kv_index(b, 0, j, c))] =
            in.k[static_cast<size_t>(s.kv_index(b, 0, j, c))];
        pin.v[static_cast<size_t>(p.kv_index(b, 0, j, c))] =
            in.v[static_cast<size_t>(s.kv_index(b, 0, j, c))];
      }
    }
  }
  EXPECT_EQ(exact_attention(p, pin).out, ref.out);
}

TEST(ExactOracle, RopeDependsOnRelativePositionOnly) {
  AttentionSpec s = small(2, 3, 4);
  s.rope = Rope{10000.0, {3, 4}, {0, 1, 2}};
  AttentionInputs in = random_inputs(s, 5);
  OracleOutput a = exact_attention(s, in);
  s.rope = Rope{10000.0, {103, 104}, {100, 101, 102}};
  OracleOutput b = exact_attention(s, in);
  for (size_t x = 0; x < a.out.size(); ++x) EXPECT_NEAR(a.out[x], b.out[x], 1e-15);
  // Position 0 everywhere is the identity rotation.
  s.rope = Rope{10000.0, {0, 0}, {0, 0, 0}};
  AttentionSpec plain = small(2, 3, 4);
  EXPECT_EQ(exact_attention(s, in).out, exact_attention(plain, in).out);
  // And a rotation that is not the identity changes the result.
  s.rope = Rope{10000.0, {5, 0}, {0, 0, 0}};
  EXPECT_NE(exact_attention(s, in).out, exact_attention(plain, in).out);
}

TEST(ExactOracle, RejectsWrongInputSizes) {
  AttentionSpec s = small(2, 3, 4);
  AttentionInputs in = random_inputs(s, 6);
  in.k.pop_back();
  try {
    exact_attention(s, in);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path, "k");
  }
}

TEST(ExactOracle, FastAgreesOnRandomCases) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    AttentionSpec s = small(4, 33, 8);
    s.heads = 2;
    s.mask.kind = seed % 2 ? MaskKind::causal : MaskKind::none;
    AttentionInputs in = random_inputs(s, seed, 4.0);
    OracleOutput e = exact_attention(s, in);
    OracleOutput f = fast_attention(s, in);
    std::vector<double> bound = fast_oracle_bound(s, in, f);
    for (size_t x = 0; x < e.out.size(); ++x) {
      EXPECT_LE(std::fabs(e.out[x] - f.out[x]), bound[x]);
      // Far below any kernel's tolerance: values are O(1), fp32's unit roundoff is 6e-8.
      EXPECT_LT(bound[x], 1e-11);
    }
  }
}

}  // namespace
}  // namespace ncv::oracle
