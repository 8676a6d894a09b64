// Well-formedness obligations: every registered kernel is proved; each way a program can be
// impossible to evaluate at some point of its domain (a dimension below 1, a byte size or an
// intermediate beyond int64, a negative trip count, a grid outside 1..64, copy offsets beyond
// int64) gives a counterexample at the smallest such params that replays as well_formed; domains
// spanning all of int64 are searched without overflow; an empty domain is refused.
#include "solver/well_formed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/prove.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// y = x through one SBUF tile of [128, cols]; the loop runs range(0, trips).
Program copy_kernel(Builder& b, const Expr& cols, const Expr& trips) {
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, cols});
  b.begin_loop("i", 0, trips, 1, LoopKind::sequential);
  b.dma_copy(t({all(), ds(0, 64)}), x());
  b.dma_copy(y(), t({all(), ds(0, 64)}));
  b.end_loop();
  return b.finish();
}

// The one obligation not proved, which must be a counterexample of `rule` at `params` that the
// interpreter replays as well_formed.
void expect_single_counterexample(const Program& p, const std::string& rule,
                                  const ParamValues& params) {
  const auto bad = not_proved(prove_well_formed(p));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  const Obligation& o = bad[0];
  EXPECT_EQ(o.cls, ObligationClass::well_formed);
  EXPECT_EQ(o.rule, rule) << o.describe();
  ASSERT_EQ(o.verdict, Verdict::counterexample) << o.describe();
  EXPECT_EQ(o.counterexample->params, params) << o.describe();
  ASSERT_TRUE(o.replay.has_value());
  EXPECT_TRUE(o.replay->reproduced) << o.describe();
  EXPECT_FALSE(o.replay->disagreement) << o.describe();
}

TEST(WellFormed, EveryRegisteredKernelIsProved) {
  for (const kernels::Variant& v : kernels::registry()) {
    for (const kernels::LabelledProgram& lp : kernels::option_programs(v)) {
      const auto all =
          prove_well_formed(lp.program, {.hw = find_hw_config(kernels::default_generation(v))});
      EXPECT_FALSE(all.empty()) << lp.label;
      for (const Obligation& o : not_proved(all)) ADD_FAILURE() << lp.label << ": " << o.describe();
    }
  }
}

TEST(WellFormed, AWellFormedProgramIsProvedAndTheProofIsNotVacuous) {
  Builder b("fine");
  const Expr n = b.param("N", 1, 8);
  const auto all = prove_well_formed(copy_kernel(b, n + 63, n));
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(all);
  // Dimensions, sizes, the trip count and arithmetic all appear.
  for (const char* rule :
       {"dimensions >= 1", "size fits int64", "trip count >= 0", "arithmetic fits int64"}) {
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const Obligation& o) {
      return o.rule == rule;
    })) << rule;
  }
}

TEST(WellFormed, ADimensionBelowOneIsRefutedAtTheSmallestParam) {
  Builder b("thin");
  const Expr n = b.param("N", 1, 100);
  // The free dim 128 - 2N reaches 0 at N = 64.
  expect_single_counterexample(copy_kernel(b, 128 - n * 2, 1), "dimensions >= 1", {{"N", 64}});
}

TEST(WellFormed, ANegativeTripCountIsRefuted) {
  Builder b("backwards");
  const Expr n = b.param("N", 1, 10);
  expect_single_counterexample(copy_kernel(b, 64, n - 3), "trip count >= 0", {{"N", 1}});
}

TEST(WellFormed, AByteSizeBeyondInt64IsRefuted) {
  Builder b("huge");
  const Expr n = b.param("N", 1, int64_t{1} << 40);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  b.input("big", DType::fp32, {n, n});  // 4 N^2 bytes
  b.dma_copy(y(), x());
  const Program p = b.finish();
  const auto bad = not_proved(prove_well_formed(p));
  ASSERT_FALSE(bad.empty());
  bool size_refuted = false;
  for (const Obligation& o : bad) {
    if (o.rule != "size fits int64" || o.verdict != Verdict::counterexample) continue;
    size_refuted = true;
    const int64_t v = o.counterexample->params.at("N");
    // 4 * v * v > 2^63 - 1 first at v = 1518500250.
    EXPECT_EQ(v, 1518500250) << o.describe();
    EXPECT_TRUE(o.replay->reproduced) << o.describe();
  }
  EXPECT_TRUE(size_refuted) << describe_all(bad);
}

TEST(WellFormed, AnIntermediateBeyondInt64IsRefuted) {
  Builder b("wrap");
  const Expr n = b.param("N", 1, kMax);
  // N * 2 - N is N (fits), but N * 2 overflows once N > 2^62 - 1.
  expect_single_counterexample(copy_kernel(b, 64, n * 2 - n - n + 1), "arithmetic fits int64",
                               {{"N", int64_t{1} << 62}});
}

TEST(WellFormed, AGridOutsideOneToSixtyFourIsRefuted) {
  Builder b("wide");
  const Expr n = b.param("N", 1, 100);
  b.grid(n);
  expect_single_counterexample(copy_kernel(b, 64, 1), "grid in [1, 64]", {{"N", 65}});
}

TEST(WellFormed, CopyOffsetsBeyondInt64AreRefuted) {
  Builder b("far");
  const Expr n = b.param("N", 0, kMax);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64}, {.bufs = 4, .placement = Placement{0, n}});
  b.dma_copy(t(), x());
  b.dma_copy(y(), t());
  const auto bad = not_proved(prove_well_formed(b.finish()));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].rule, "arithmetic fits int64") << bad[0].describe();
  ASSERT_TRUE(bad[0].counterexample.has_value()) << bad[0].describe();
}

TEST(WellFormed, ADomainSpanningAllOfInt64IsSearchedWithoutOverflow) {
  Builder b("everywhere");
  const Expr n = b.param("N", kMin + 1, kMax);
  // The dimension N is below 1 on half of the range: the smallest counterexample is the range's
  // least value, found by a binary search over more than 2^63 values (whose midpoint used to
  // overflow and loop forever).
  const auto bad = not_proved(prove_well_formed(copy_kernel(b, n, 1)));
  const auto dims = std::find_if(bad.begin(), bad.end(),
                                 [](const Obligation& o) { return o.rule == "dimensions >= 1"; });
  ASSERT_NE(dims, bad.end()) << describe_all(bad);
  ASSERT_TRUE(dims->counterexample.has_value()) << dims->describe();
  EXPECT_EQ(dims->counterexample->params.at("N"), kMin + 1) << dims->describe();
  EXPECT_TRUE(dims->replay->reproduced) << dims->describe();
}

TEST(WellFormed, AnEmptyDomainIsRefusedNotProvedVacuously) {
  Builder b("nowhere");
  const Expr n = b.param("N", 1, 10), m = b.param("M", 1, 10);
  b.require(RelationKind::LT, n * 0 + 20, m + n);  // 20 < N + M is impossible
  const Program p = copy_kernel(b, 64, 1);
  EXPECT_THROW(prove_program(p), std::invalid_argument);
}

}  // namespace
}  // namespace ncv::solver
