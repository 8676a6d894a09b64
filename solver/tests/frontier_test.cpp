// The capacity frontier: Z3's binary search agrees exactly with evaluating the capacity rules at
// every value, for every registered kernel, option program, d_head and generation; hand-built
// programs check the statuses (fits everywhere, fits nowhere, a non-monotone footprint).
#include "solver/frontier.h"

#include <gtest/gtest.h>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "kernels/registry_proof_scope.h"
#include "kernels/tests/registry_slices.h"
#include "model/ir/builder.h"
#include "solver/allocation.h"
#include "solver/tests/fermat_placement.h"

namespace ncv::solver {
namespace {

using kernels::LabelledProgram;
using kernels::option_programs;

struct BruteForce {
  std::optional<int64_t> first_failing;
  std::string why;
};

// The least value of `param` in [lo, hi] (multiples of its step) with a capacity violation.
BruteForce brute_force(const Program& p, const HwConfig& hw, const std::string& param,
                       ParamValues at, int64_t hi) {
  const Param& s = *p.find_param(param);
  const CapacityChecker checker(p, hw);
  for (int64_t v = s.lo; v <= hi; v += s.multiple_of) {
    at[param] = v;
    if (auto why = checker.violation(at)) return {v, *why};
  }
  return {};
}

bool legal(const Param& prm, int64_t v) {
  return v >= prm.lo && v <= prm.hi && v % prm.multiple_of == 0;
}

// The cross-check for one program: d_head 64 and 128 where legal, the other params at their lo.
void cross_check(const std::string& label, const Program& p, const HwConfig& hw, int64_t limit,
                 int& compared) {
  for (int64_t d : {64, 128}) {
    const Param* dh = p.find_param("d_head");
    if (dh && !legal(*dh, d)) continue;
    FrontierQuery q;
    q.hw = &hw;
    q.search_hi = limit;
    for (const Param& prm : p.params) {
      if (prm.name != "seqlen") q.fixed[prm.name] = prm.name == "d_head" ? d : prm.lo;
    }
    const FrontierResult f = capacity_frontier(p, q);
    const std::string where = label + " d_head=" + std::to_string(d) + " " + hw.name;
    ASSERT_NE(f.status, FrontierResult::Status::unknown) << where << ": " << f.unknown_reason;
    const BruteForce b = brute_force(p, hw, "seqlen", q.fixed, limit);
    ++compared;
    EXPECT_EQ(f.first_failing, b.first_failing) << where << ": brute force says " << b.why;
    if (!b.first_failing) {
      EXPECT_EQ(f.status, FrontierResult::Status::fits) << where;
      EXPECT_EQ(f.largest_fitting, limit - (limit - f.lo) % f.step) << where;
      continue;
    }
    EXPECT_FALSE(f.why_failing.empty()) << where;
    if (*b.first_failing == f.lo) {
      EXPECT_EQ(f.status, FrontierResult::Status::fits_nowhere) << where;
    } else {
      EXPECT_EQ(f.status, FrontierResult::Status::fits) << where;
      EXPECT_EQ(f.largest_fitting, *b.first_failing - f.step) << where;
    }
  }
}

// Registry-wide (README.md "Tests"): one kernel per family at the option sets covering every value
// in the default tier (PerFamily/), every kernel at every option set in the deep tier (Deep/).
class FrontierRegistry : public ::testing::TestWithParam<std::string> {};

TEST_P(FrontierRegistry, AgreesWithBruteForceForEveryOptionSetAndGeneration) {
  const kernels::Variant& v = *kernels::find_variant(GetParam());
  if (!kernels::in_registry_isa_and_frontier_tests(v)) {
    GTEST_SKIP() << v.name << " is outside the registry-wide frontier cross-check "
                 << "(kernels/registry_proof_scope.h)";
  }
  int compared = 0;
  for (const LabelledProgram& lp :
       kernels::testing::tier_programs(v, kernels::testing::in_deep_test())) {
    for (const HwConfig* hw : {&hw_config_trn1(), &hw_config_trn2(), &hw_config_trn3()}) {
      if (!kernels::supports_generation(v, hw->name)) continue;  // does not run there
      cross_check(lp.label, lp.program, *hw, 16384, compared);
    }
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(PerFamily, FrontierRegistry,
                         ::testing::ValuesIn(kernels::testing::family_representatives()),
                         kernels::testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, FrontierRegistry,
                         ::testing::ValuesIn(kernels::testing::all_kernels()),
                         kernels::testing::kernel_param_name);

// sd_attention with fp32 operands (mixed_precision false) at d_head 64 under the compiler's
// allocation rules (model/ir/liveness.h): 9984 is the last seqlen that fits trn1's SBUF and
// 10112 the first that does not (6784 / 6912 when every buffer of a q tile lived for the whole
// q tile).
TEST(Frontier, TutorialKernelWithFp32OperandsAtDHead64) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const Program p = v.build(v.resolve({{"mixed_precision", "false"}, {"dtype", "fp32"}}));
  FrontierQuery q;
  q.fixed = {{"d_head", 64}};
  q.search_hi = 32768;
  const FrontierResult f = capacity_frontier(p, q);
  ASSERT_EQ(f.status, FrontierResult::Status::fits) << f.unknown_reason;
  ASSERT_TRUE(f.first_failing);
  EXPECT_EQ(*f.first_failing, 10112) << f.why_failing;
  EXPECT_EQ(f.largest_fitting, 9984);
  EXPECT_EQ(f.declared_hi, 4096);
  EXPECT_NE(f.why_failing.find("SBUF capacity"), std::string::npos) << f.why_failing;
  EXPECT_EQ(brute_force(p, hw_config_trn1(), "seqlen", q.fixed, 32768).first_failing, 10112);
  // The interpreter (on the kernel widened to 32768) agrees on both sides of the frontier.
  Program wide = p;
  for (Param& prm : wide.params) {
    if (prm.name == "seqlen") prm.hi = 32768;
  }
  RunOptions opts;
  opts.compute_values = false;
  opts.record_trace = false;
  for (int64_t s : {9984, 10112}) {
    const ParamValues at{{"seqlen", s}, {"d_head", 64}};
    const RunResult r = run_program(wide, at, random_inputs(wide, at, 1), opts);
    EXPECT_EQ(r.error.has_value(), s == 10112) << s;
    if (r.error) {
      EXPECT_EQ(r.error->kind, CheckKind::capacity) << r.error->message;
    }
  }
}

// A buffer of (N mod 4) * C + 64 bytes: too large exactly at N = 3 mod 4 when C is large. The
// first failing value is 3 although larger values fit again; the search is over "some value <= m
// fails", so it finds the least one.
Program non_monotone(int64_t c) {
  Builder b("non_monotone");
  Expr N = b.param("N", 1, 64);
  auto out = b.output("out", DType::fp32, {128, Expr::mod(N, 4) * c + 16});
  auto t = b.sbuf("t", DType::fp32, {128, Expr::mod(N, 4) * c + 16});
  b.memset(t(), 0.0f);
  b.dma_copy(out(), t());
  return b.finish();
}

TEST(Frontier, NonMonotoneFootprintFailsFirstAtTheLeastValue) {
  // 3 * c * 4 + 64 > 180224 >= 2 * c * 4 + 64 for c = 16000.
  const Program p = non_monotone(16000);
  FrontierQuery q;
  q.param = "N";
  const FrontierResult f = capacity_frontier(p, q);
  ASSERT_EQ(f.status, FrontierResult::Status::fits) << f.unknown_reason;
  EXPECT_EQ(f.first_failing, 3);
  EXPECT_EQ(f.largest_fitting, 2);
  EXPECT_FALSE(capacity_violation(p, hw_config_trn1(), {{"N", 4}}));
  EXPECT_EQ(brute_force(p, hw_config_trn1(), "N", {}, 64).first_failing, 3);
}

TEST(Frontier, FitsEverywhereAndFitsNowhere) {
  FrontierQuery q;
  q.param = "N";
  const FrontierResult small = capacity_frontier(non_monotone(1), q);
  EXPECT_EQ(small.status, FrontierResult::Status::fits);
  EXPECT_FALSE(small.first_failing);
  EXPECT_EQ(small.largest_fitting, 64);
  EXPECT_EQ(small.searched_hi, 64);

  Builder b("huge");
  Expr N = b.param("N", 1, 8);
  auto out = b.output("out", DType::fp32, {128, N * 50000});
  auto t = b.sbuf("t", DType::fp32, {128, N * 50000});
  b.memset(t(), 0.0f);
  b.dma_copy(out(), t());
  q.search_hi = 100;  // beyond the declared hi
  const FrontierResult none = capacity_frontier(b.finish(), q);
  EXPECT_EQ(none.status, FrontierResult::Status::fits_nowhere);
  EXPECT_EQ(none.first_failing, 1);
  EXPECT_EQ(none.searched_hi, 100);
  EXPECT_EQ(none.declared_hi, 8);
}

TEST(Frontier, RejectsFixedValuesOutsideTheDomain) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention_allocated");
  const Program p = v.build(v.resolve({}));
  FrontierQuery q;
  q.fixed = {{"d_head", 64}, {"bs", 1}};
  EXPECT_THROW(capacity_frontier(p, q), std::invalid_argument);
  q.fixed = {{"d_head", 128}};
  EXPECT_THROW(capacity_frontier(p, q), std::invalid_argument);  // bs missing
}

TEST(Frontier, UndecidedQueryIsUnknownNeverAFrontier) {
  FrontierQuery q;
  q.param = "N";
  q.timeout_ms = 1;
  q.resource_limit = 1;  // stops the first query at once on any machine (the timeout alone did not)
  const FrontierResult f = capacity_frontier(testing::fermat_placement(), q);
  EXPECT_EQ(f.status, FrontierResult::Status::unknown);
  EXPECT_FALSE(f.first_failing);
  EXPECT_NE(f.unknown_reason.find("unknown"), std::string::npos) << f.unknown_reason;
  EXPECT_GE(f.queries, 1);
}

}  // namespace
}  // namespace ncv::solver
