// The Autocomp chain under equiv: each of sd_attention_step1..5 against its predecessor, for every
// option combination, gets the verdict the model's semantics imply
// (kernels/sd_attention/sd_attention.cpp's notes): bit-exact exactly where the two programs round
// alike, otherwise a refuted bit-exact claim with a replayed counterexample, a real-arithmetic
// proof and a numerics diff.
#include <gtest/gtest.h>

#include "equiv/equiv.h"
#include "kernels/registry.h"

namespace ncv::equiv {
namespace {

// Whether step s is bit-identical to step s - 1 under these options (the registry's notes).
bool expect_bit_exact(int step, const kernels::Options& o) {
  const bool fp32 = o.at("dtype") == "fp32", mp = o.at("mixed_precision") == "true";
  switch (step) {
    case 1:
      return fp32;  // row sum of fp32 exp vs of kd-rounded exp_res
    case 2:
      return true;  // preload loops fused, exact K copy
    case 3:
      return fp32 || mp;  // pe(kd(exp)) vs pe(exp): differs for bf16, fp32 P
    case 4:
      return fp32 != mp;  // scores in pe: same when pe == kd
    case 5:
      return fp32;  // fl(acc * r) vs fl(fl(acc) * r) in kd
  }
  return false;
}

// Step `step` against its predecessor at every option set that has the `pinned` options (all
// eight when none are pinned).
void check_link(int step, const kernels::Options& pinned = {}) {
  const std::string name = "sd_attention_step" + std::to_string(step);
  const kernels::Variant* v = kernels::find_variant(name);
  ASSERT_NE(v, nullptr);
  EquivRequest req;
  req.original = {v->rewrites, kernels::find_variant(v->rewrites), std::nullopt};
  req.rewrite = {name, v, std::nullopt};
  req.options = pinned;
  req.cases = 3;
  const EquivResult r = run_equiv(req);
  ASSERT_EQ(r.outcomes.size(), size_t{8} >> pinned.size());
  for (const OptionOutcome& o : r.outcomes) {
    SCOPED_TRACE(name + " " + o.to_json()["options"].dump());
    ASSERT_TRUE(o.interface_error.empty()) << o.interface_error;
    EXPECT_EQ(o.real, Verdict::proved) << o.real_detail;
    EXPECT_TRUE(o.overflow_ok);
    if (expect_bit_exact(step, o.options)) {
      EXPECT_EQ(o.bit_exact, Verdict::proved) << o.bit_detail;
      EXPECT_TRUE(o.numerics_diff.empty());
    } else {
      EXPECT_EQ(o.bit_exact, Verdict::refuted) << o.bit_detail;
      ASSERT_TRUE(o.bit_counterexample.has_value());
      EXPECT_NE(o.bit_counterexample->original_bits, o.bit_counterexample->rewrite_bits);
      EXPECT_FALSE(o.bit_counterexample->original_at.empty());
      EXPECT_FALSE(o.bit_counterexample->rewrite_at.empty());
      EXPECT_FALSE(o.numerics_diff.empty());
      EXPECT_TRUE(o.holds(Level::contract)) << o.numeric_detail;
    }
  }
  // The registry's claim decides the default level, and the chain meets it.
  EXPECT_EQ(r.required, v->same_numerics_as_predecessor ? Level::bit_exact : Level::contract);
  EXPECT_EQ(r.verdict, "holds");
  EXPECT_EQ(r.exit_code, 0);
}

// Default tier: each link at one option set, bf16 with mixed precision and the causal mask, where
// steps 2, 3 and 4 are bit-exact and steps 1 and 5 are not (both kinds of verdict, every step).
const kernels::Options kOneOptionSet = {
    {"dtype", "bf16"}, {"mixed_precision", "true"}, {"use_causal_mask", "true"}};

TEST(AutocompChain, Step1AtOneOptionSet) {
  check_link(1, kOneOptionSet);
}
TEST(AutocompChain, Step2AtOneOptionSet) {
  check_link(2, kOneOptionSet);
}
TEST(AutocompChain, Step3AtOneOptionSet) {
  check_link(3, kOneOptionSet);
}
TEST(AutocompChain, Step4AtOneOptionSet) {
  check_link(4, kOneOptionSet);
}
TEST(AutocompChain, Step5AtOneOptionSet) {
  check_link(5, kOneOptionSet);
}

// Deep tier: every option set of every link.
TEST(DeepAutocompChain, Step1) {
  check_link(1);
}
TEST(DeepAutocompChain, Step2) {
  check_link(2);
}
TEST(DeepAutocompChain, Step3) {
  check_link(3);
}
TEST(DeepAutocompChain, Step4) {
  check_link(4);
}
TEST(DeepAutocompChain, Step5) {
  check_link(5);
}

// The reverse direction of a bit-exact link is bit-exact too, and a pinned option restricts the
// outcomes to the combinations that have it.
TEST(AutocompChain, PinnedOptionsRestrictTheCombinations) {
  EquivRequest req;
  req.original = {"sd_attention_step2", kernels::find_variant("sd_attention_step2"), std::nullopt};
  req.rewrite = {"sd_attention_step1", kernels::find_variant("sd_attention_step1"), std::nullopt};
  req.options = {{"dtype", "bf16"}, {"use_causal_mask", "true"}};
  req.cases = 2;
  const EquivResult r = run_equiv(req);
  ASSERT_EQ(r.outcomes.size(), 2u);
  for (const OptionOutcome& o : r.outcomes) {
    EXPECT_EQ(o.options.at("dtype"), "bf16");
    EXPECT_EQ(o.bit_exact, Verdict::proved);
  }
}

// A rewrite must accept every point of the original's domain: one that does not offer an option
// value the original has fails at that option set (exit 1), it is not bad input.
TEST(AutocompChain, ARewriteWithoutAnOptionValueFails) {
  EquivRequest req;
  req.original = {"sd_attention", kernels::find_variant("sd_attention"), std::nullopt};
  req.rewrite = {"sd_attention_allocated", kernels::find_variant("sd_attention_allocated"),
                 std::nullopt};
  req.options = {{"use_causal_mask", "true"}, {"dtype", "fp32"}, {"mixed_precision", "true"}};
  const EquivResult r = run_equiv(req);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_NE(r.outcomes[0].interface_error.find("does not offer use_causal_mask=true"),
            std::string::npos);
  EXPECT_EQ(r.verdict, "refuted");
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace ncv::equiv
