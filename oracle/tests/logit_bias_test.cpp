// The additive logits bias (AttentionSpec::bias, flash_fwd's logit_bias): the exact and fast
// oracles agree with it, it does what a bias must (a constant per row changes nothing, a large
// bias on one key selects that key's value, a masked key stays masked), the spec validates and
// reads it, and the bounds stay sound with it: contract_reference (the bias rounded to
// bias_dtype and added in fp32) within the a-priori and the case bound on every hard
// distribution, a reference that ignores the bias outside them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "oracle/bias_values.h"
#include "oracle/case_bound.h"
#include "oracle/comparison.h"
#include "oracle/contract_reference.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"
#include "oracle/spec_json.h"

namespace ncv::oracle {
namespace {

AttentionSpec spec_of(int64_t sq, int64_t skv, int64_t d, MaskKind mask, uint64_t seed) {
  AttentionSpec s;
  s.batch = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.seqlen_q = sq;
  s.seqlen_kv = skv;
  s.d_head = d;
  s.scale = 1.0 / std::sqrt(static_cast<double>(d));
  s.mask.kind = mask;
  s.bias = generate_bias(s, seed);
  return s;
}

TEST(LogitBias, ExactAndFastOraclesAgree) {
  for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const AttentionSpec s = spec_of(9, 37, 8, mask, seed);
      const AttentionInputs in = generate_inputs(s, Distribution::normal, seed);
      const OracleOutput ex = exact_attention(s, in);
      std::vector<double> bound, lse_bound;
      const OracleOutput fa = fast_attention_with_bound(s, in, bound, &lse_bound);
      for (size_t x = 0; x < ex.out.size(); ++x) {
        ASSERT_LE(std::fabs(fa.out[x] - ex.out[x]), bound[x]) << x;
        ASSERT_LT(bound[x], 1e-12) << x;
      }
      for (size_t r = 0; r < ex.lse.size(); ++r) {
        ASSERT_LE(std::fabs(fa.lse[r] - ex.lse[r]), lse_bound[r]) << r;
      }
      // The bias matters: without it the output differs by far more than the bound.
      AttentionSpec plain = s;
      plain.bias.clear();
      const OracleOutput ex0 = exact_attention(plain, in);
      double diff = 0;
      for (size_t x = 0; x < ex.out.size(); ++x)
        diff = std::fmax(diff, std::fabs(ex.out[x] - ex0.out[x]));
      EXPECT_GT(diff, 0.1);
    }
  }
}

TEST(LogitBias, ConstantBiasPerRowChangesNothing) {
  AttentionSpec s = spec_of(6, 20, 4, MaskKind::causal, 1);
  const AttentionInputs in = generate_inputs(s, Distribution::normal, 2);
  AttentionSpec plain = s;
  plain.bias.clear();
  for (int64_t i = 0; i < s.seqlen_q; ++i) {
    for (int64_t j = 0; j < s.seqlen_kv; ++j) {
      s.bias[static_cast<size_t>(i * s.seqlen_kv + j)] = 0.75 * static_cast<double>(i) - 3.0;
    }
  }
  const OracleOutput a = exact_attention(s, in), b = exact_attention(plain, in);
  for (size_t x = 0; x < a.out.size(); ++x) {
    EXPECT_NEAR(a.out[x], b.out[x], 1e-15 * (1 + std::fabs(b.out[x]))) << x;
  }
  // lse shifts by exactly the row's constant.
  for (int64_t r = 0; r < s.rows(); ++r) {
    const double c = 0.75 * static_cast<double>(r % s.seqlen_q) - 3.0;
    EXPECT_NEAR(a.lse[static_cast<size_t>(r)], b.lse[static_cast<size_t>(r)] + c, 1e-13) << r;
  }
}

TEST(LogitBias, LargeBiasOnOneKeyGivesThatKeysValue) {
  AttentionSpec s = spec_of(5, 16, 4, MaskKind::none, 1);
  const AttentionInputs in = generate_inputs(s, Distribution::normal, 3);
  std::fill(s.bias.begin(), s.bias.end(), 0.0);
  for (int64_t i = 0; i < s.seqlen_q; ++i)
    s.bias[static_cast<size_t>(i * s.seqlen_kv + 2 * i + 1)] = 80.0;
  const OracleOutput o = exact_attention(s, in);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        for (int64_t c = 0; c < s.d_head; ++c) {
          const double v = in.v[static_cast<size_t>(s.kv_index(b, s.kv_head_of(h), 2 * i + 1, c))];
          EXPECT_NEAR(o.out[static_cast<size_t>(s.q_index(b, h, i, c))], v,
                      1e-20 + 1e-12 * std::fabs(v));
        }
      }
    }
  }
}

TEST(LogitBias, MaskedKeyStaysMaskedWhateverItsBias) {
  AttentionSpec s = spec_of(8, 8, 4, MaskKind::causal, 1);
  const AttentionInputs in = generate_inputs(s, Distribution::normal, 4);
  const OracleOutput a = exact_attention(s, in);
  for (int64_t i = 0; i < s.seqlen_q; ++i) {
    for (int64_t j = i + 1; j < s.seqlen_kv; ++j)
      s.bias[static_cast<size_t>(i * s.seqlen_kv + j)] = 1e6;
  }
  const OracleOutput b = exact_attention(s, in);
  std::vector<double> bound;
  const OracleOutput f = fast_attention_with_bound(s, in, bound);
  EXPECT_EQ(a.out, b.out);
  for (size_t x = 0; x < a.out.size(); ++x) EXPECT_LE(std::fabs(f.out[x] - a.out[x]), bound[x]);
}

TEST(LogitBias, SpecValidatesItsSizeAndValues) {
  AttentionSpec s = spec_of(3, 4, 2, MaskKind::none, 1);
  EXPECT_NO_THROW(s.validate());
  s.bias.pop_back();
  try {
    s.validate();
    FAIL() << "a short bias validated";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path, "bias");
  }
  s.bias.push_back(std::nan(""));
  try {
    s.validate();
    FAIL() << "a NaN bias validated";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path, "bias[2][3]");
  }
}

TEST(LogitBias, SpecJsonReadsIt) {
  const std::string doc = R"({"batch": 1, "heads": 1, "kv_heads": 1, "seqlen_q": 2, "seqlen_kv": 3,
    "d_head": 1, "scale": 1.0, "bias": [[0.5, -1.0, 2.0], [0.0, 1e3, -0.25]],
    "q": [[[[1.0], [2.0]]]], "k": [[[[1.0], [0.0], [-1.0]]]], "v": [[[[1.0], [2.0], [3.0]]]]})";
  const SpecFile f = parse_spec_text(doc);
  EXPECT_EQ(f.spec.bias, (std::vector<double>{0.5, -1.0, 2.0, 0.0, 1e3, -0.25}));
  // Row 1 puts all its weight on key 1 (bias 1000).
  EXPECT_NEAR(exact_attention(f.spec, f.inputs).out[1], 2.0, 1e-12);
  auto error_path = [&](const std::string& from, const std::string& to) {
    std::string bad = doc;
    bad.replace(bad.find(from), from.size(), to);
    try {
      parse_spec_text(bad);
    } catch (const SpecError& e) {
      return e.path;
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_path("[0.0, 1e3, -0.25]", "[0.0, 1e3]"), "bias[1]");
  EXPECT_EQ(error_path("1e3", "\"big\""), "bias[1][1]");
  EXPECT_EQ(error_path("1e3", "\"nan\""), "bias[1][1]");
}

// The contracts the bound soundness runs over, with the bias in fp32 and in bf16 (flash_fwd's
// kernel_dtype under mixed precision).
std::vector<PrecisionContract> contracts() {
  std::vector<PrecisionContract> out;
  for (PrecisionContract c : PrecisionContract::named()) {
    out.push_back(c);
    c.bias_dtype = DType::bf16;
    c.name += "+bf16_bias";
    out.push_back(c);
  }
  return out;
}

TEST(LogitBias, ContractReferenceWithinBothBoundsAndIgnoringTheBiasOutside) {
  int cases = 0, caught_apriori = 0, caught_case = 0;
  for (const PrecisionContract& ct : contracts()) {
    for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
      for (Distribution dist : gate_distributions()) {
        AttentionSpec s = spec_of(6, 150, 8, mask, static_cast<uint64_t>(dist) + 7);
        s.batch = 1;
        const AttentionInputs in = generate_inputs(s, dist, 11);
        const OracleOutput ex = exact_attention(s, in);
        const ErrorBound eb = error_bound(ct, s, in, ex);
        const CaseBound cb = case_error_bound(ct, s, in, ex.out);
        ErrorBound cbe;
        cbe.bound = cb.bound;
        const std::vector<double> got = contract_reference(ct, s, in);
        const Comparison a = compare(s, got, ex, eb, ct.out_dtype);
        const Comparison c = compare(s, got, ex, cbe, ct.out_dtype);
        SCOPED_TRACE(ct.name + " " + distribution_name(dist));
        EXPECT_TRUE(a.pass) << a.one_line();
        // The case bound may be uncertified where the a-priori one is not only on overflow.
        EXPECT_TRUE(c.pass || cb.uncertified > 0) << c.one_line();
        const std::vector<double> no_bias = contract_reference(ct, s, in, Perturbation::drop_bias);
        ++cases;
        caught_apriori += compare(s, no_bias, ex, eb, ct.out_dtype).pass ? 0 : 1;
        const bool missed = compare(s, no_bias, ex, cbe, ct.out_dtype).pass;
        caught_case += missed ? 0 : 1;
        // v_offset's values are 100 + N(0, 0.01): whatever the weights, the output moves by
        // less than a bf16 or fp16 ulp at 100 (0.5, 0.06), so only an fp32 output can show it.
        const bool visible = dist != Distribution::v_offset || ct.out_dtype == DType::fp32;
        EXPECT_TRUE(!missed || !visible) << "ignoring the bias passes the case bound";
      }
    }
  }
  std::printf("ignoring the bias: caught by the a-priori bound %d/%d, by the case bound %d/%d\n",
              caught_apriori, cases, caught_case, cases);
  EXPECT_GE(caught_apriori, cases * 9 / 10);
}

TEST(LogitBias, BiasDtypeInContractJsonAndValidation) {
  PrecisionContract c = PrecisionContract::all_fp32();
  EXPECT_EQ(c.to_json()["bias_dtype"], "fp32");
  c.bias_dtype = DType::bf16;
  EXPECT_EQ(c.to_json()["bias_dtype"], "bf16");
  c.bias_dtype = DType::int32;
  EXPECT_THROW(c.validate(), std::invalid_argument);
  EXPECT_EQ(bias_rounding_error(DType::bf16, 0.5), 0.0);
  EXPECT_GT(bias_rounding_error(DType::bf16, 0.1),
            std::fabs(contract_bias(DType::bf16, 0.1) - 0.1));
}

TEST(LogitBias, GeneratedBiasIsFp32AsymmetricWithDominantAndMaskingValues) {
  AttentionSpec s = spec_of(64, 64, 2, MaskKind::none, 1);
  const std::vector<double> b = generate_bias(s, 5);
  ASSERT_EQ(b, generate_bias(s, 5));
  EXPECT_NE(b, generate_bias(s, 6));
  int high = 0, low = 0, asym = 0;
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      const double x = b[static_cast<size_t>(i * 64 + j)];
      EXPECT_EQ(x, static_cast<double>(static_cast<float>(x)));
      high += x > 7 ? 1 : 0;
      low += x < -15 ? 1 : 0;
      asym += x != b[static_cast<size_t>(j * 64 + i)] ? 1 : 0;
    }
  }
  EXPECT_GT(high, 64);
  EXPECT_GT(low, 64);
  EXPECT_GT(asym, 4000);
}

}  // namespace
}  // namespace ncv::oracle
