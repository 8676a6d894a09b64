// The FlashAttention tutorial's links that change numerics, at the shapes people run: v3 -> v4
// (the row sums and max taken in other instructions), v4 -> v5 (the normalisation deferred past
// PV: the output is reduced in another order) and v6 -> v7 (P and V^T narrowed to bf16: a
// precision change). Each is refuted bit-exact with a counterexample from the interpreter at
// the shape asked for and proved in real arithmetic, with the exp overflow obligation
// discharged. At seqlen 1024 (deep tier) the whole real forms are past the term budget: the
// proof stands on the terms both sides share read as atoms; the default tier runs one link at
// 512, the same code path at a quarter of the terms.
#include <gtest/gtest.h>

#include "equiv/equiv.h"
#include "kernels/registry.h"

namespace ncv::equiv {
namespace {

void expect_refuted_bit_exact_and_proved_real(const std::string& from, const std::string& to,
                                              int64_t seqlen) {
  SCOPED_TRACE(from + " -> " + to + " at seqlen " + std::to_string(seqlen));
  EquivRequest req;
  req.original = {from, kernels::find_variant(from), std::nullopt};
  req.rewrite = {to, kernels::find_variant(to), std::nullopt};
  ASSERT_NE(req.original.variant, nullptr);
  ASSERT_NE(req.rewrite.variant, nullptr);
  req.options = {{"dtype", "fp32"}};
  req.params = {{"seqlen", seqlen}};
  req.cases = 2;
  const EquivResult r = run_equiv(req);
  ASSERT_EQ(r.outcomes.size(), 1u);
  const OptionOutcome& o = r.outcomes[0];
  ASSERT_TRUE(o.interface_error.empty()) << o.interface_error;
  EXPECT_EQ(o.bit_exact, Verdict::refuted) << o.bit_detail;
  ASSERT_TRUE(o.bit_counterexample.has_value());
  EXPECT_EQ(o.bit_counterexample->params.at("seqlen"), seqlen);
  EXPECT_NE(o.bit_counterexample->original_bits, o.bit_counterexample->rewrite_bits);
  EXPECT_EQ(o.real, Verdict::proved) << o.real_detail;
  EXPECT_TRUE(o.overflow_ok);
  EXPECT_TRUE(o.holds(Level::real));
  EXPECT_EQ(r.verdict, "holds");
}

TEST(TutorialLinks, PrecisionChangeAt512IsRefutedBitExactAndProvedReal) {
  expect_refuted_bit_exact_and_proved_real("attn_fwd_v6", "attn_fwd_v7", 512);
}

TEST(DeepTutorialLinks, NumericsChangesAt1024AreRefutedBitExactAndProvedReal) {
  expect_refuted_bit_exact_and_proved_real("attn_fwd_v3", "attn_fwd_v4", 1024);
  expect_refuted_bit_exact_and_proved_real("attn_fwd_v4", "attn_fwd_v5", 1024);
  expect_refuted_bit_exact_and_proved_real("attn_fwd_v6", "attn_fwd_v7", 1024);
}

}  // namespace
}  // namespace ncv::equiv
