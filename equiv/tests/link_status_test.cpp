// judge_link: what `report` makes of equiv's outcome for a rewrite link, against the registry's
// claims (same numerics, a declared interface change).
#include "equiv/link_status.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"

namespace ncv::equiv {
namespace {

kernels::Variant rewrite(bool same_numerics, std::string interface_change = "") {
  kernels::Variant v;
  v.name = "r";
  v.rewrites = "o";
  v.same_numerics_as_predecessor = same_numerics;
  v.interface_change = std::move(interface_change);
  return v;
}

OptionOutcome bit_exact_proved() {
  OptionOutcome o;
  o.bit_exact = Verdict::proved;
  return o;
}

TEST(LinkStatus, AnUndeclaredInterfaceChangeFailsAndADeclaredOneIsChanged) {
  OptionOutcome o;
  o.interface_error = "the original gives o fp32 [512, 128]; the rewrite gives o bf16 [512, 128]";
  const LinkJudgement undeclared = judge_link(rewrite(false), o);
  EXPECT_EQ(undeclared.status, LinkStatus::fail);
  EXPECT_EQ(undeclared.level, "refuted");
  const LinkJudgement declared = judge_link(rewrite(false, "bf16 output"), o);
  EXPECT_EQ(declared.status, LinkStatus::changed);
  EXPECT_EQ(declared.level, "interface changed");
  EXPECT_FALSE(declared.contract_holds);
  EXPECT_STREQ(link_status_name(declared.status), "CHANGED");
}

TEST(LinkStatus, ADeclarationDoesNotExcuseARunErrorOrACounterexample) {
  OptionOutcome run_fails;
  run_fails.interface_error = "x";
  run_fails.run_error = "read of uninitialised SBUF";
  EXPECT_EQ(judge_link(rewrite(false, "longer sequences"), run_fails).status, LinkStatus::fail);
  OptionOutcome refuted;
  refuted.bit_exact = Verdict::refuted;
  EXPECT_EQ(judge_link(rewrite(true, "longer sequences"), refuted).status, LinkStatus::fail);
}

TEST(LinkStatus, ClaimsAreHeldToTheLevelTheyName) {
  EXPECT_EQ(judge_link(rewrite(true), bit_exact_proved()).status, LinkStatus::ok);
  // Real equality with the overflow obligation and the contract cases: enough for a rewrite
  // that changes numerics, unknown for one that claims the same bits.
  OptionOutcome real = {};
  real.real = Verdict::proved;
  real.overflow_ok = true;
  real.numeric = Verdict::proved;
  EXPECT_EQ(judge_link(rewrite(false), real).status, LinkStatus::ok);
  EXPECT_EQ(judge_link(rewrite(false), real).level, "real proved");
  EXPECT_EQ(judge_link(rewrite(true), real).status, LinkStatus::unknown);
  // Real proved but the exp overflow obligation open: not proved.
  real.overflow_ok = false;
  EXPECT_EQ(judge_link(rewrite(false), real).level, "unknown");
  EXPECT_EQ(judge_link(rewrite(false), real).status, LinkStatus::unknown);
  OptionOutcome numeric_refuted;
  numeric_refuted.numeric = Verdict::refuted;
  EXPECT_EQ(judge_link(rewrite(false), numeric_refuted).status, LinkStatus::fail);
  EXPECT_EQ(judge_link(rewrite(false), OptionOutcome{}).status, LinkStatus::unknown);
}

// The registry's declarations: the tutorial chain's deliberate interface changes, and none on a
// link whose interface equiv finds unchanged.
TEST(LinkStatus, TheTutorialChainDeclaresItsInterfaceChanges) {
  for (const char* name : {"attn_fwd_v3", "attn_fwd_v8a", "attn_fwd_v9"}) {
    const kernels::Variant* v = kernels::find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_FALSE(v->interface_change.empty()) << name;
  }
  for (const kernels::Variant& v : kernels::registry()) {
    if (v.rewrites.empty()) {
      EXPECT_TRUE(v.interface_change.empty()) << v.name << " rewrites nothing";
    }
  }
  EXPECT_TRUE(kernels::find_variant("attn_fwd_v4")->interface_change.empty())
      << "v4's narrower domain comes from the model's allocator, not the source";
}

}  // namespace
}  // namespace ncv::equiv

namespace ncv::equiv {
namespace {

// An option set that is neither proved nor refuted says "unknown" and why, naming the cause:
// the term budget is not an overflow, and an overflow obligation that was never looked at (no
// terms built) is not printed as "NOT DISCHARGED".
TEST(OutcomeStatus, UnknownBlocksSayUnknownAndNameTheirCause) {
  OptionOutcome budget;
  budget.bit_detail = "terms over the budget (1 GiB) at seqlen=512 d_head=128";
  budget.real_detail = budget.bit_detail;
  budget.overflow_ok = false;  // run_equiv: not built, so not checked
  EXPECT_EQ(budget.status(Level::bit_exact), "unknown");
  EXPECT_EQ(budget.status(Level::real), "unknown");
  EXPECT_NE(budget.unknown_reason(Level::real).find("over the budget"), std::string::npos);
  EquivResult r;
  r.original = "o";
  r.rewrite = "r";
  r.required = Level::real;
  r.outcomes = {budget};
  const std::string text = r.text();
  EXPECT_NE(text.find("[unknown,"), std::string::npos) << text;
  EXPECT_EQ(text.find("does not hold"), std::string::npos) << text;
  EXPECT_EQ(text.find("NOT DISCHARGED"), std::string::npos) << text;
  EXPECT_NE(text.find("overflow       not checked"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown        real unknown: terms over the budget"), std::string::npos)
      << text;

  // Real proved with an exp whose argument is not shown <= 0: the obligation is the cause.
  OptionOutcome open;
  open.real = Verdict::proved;
  open.overflow = {ExpObligation{"exp at line 12", false}};
  EXPECT_EQ(open.status(Level::real), "unknown");
  EXPECT_NE(open.unknown_reason(Level::real).find("not discharged at exp at line 12"),
            std::string::npos);

  // A counterexample refutes; holding has no reason.
  OptionOutcome refuted;
  refuted.bit_exact = Verdict::refuted;
  EXPECT_EQ(refuted.status(Level::bit_exact), "refuted");
  EXPECT_EQ(refuted.unknown_reason(Level::bit_exact), "");
  EXPECT_EQ(bit_exact_proved().status(Level::contract), "holds");
}

}  // namespace
}  // namespace ncv::equiv
