// The default check's shape choice: every role present, legal, deduplicated, pinned params kept;
// the largest shape grows only as far as the predicted time allows.
#include "check/check_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/registry.h"
#include "model/interp/interpreter.h"

namespace ncv::kernels {
namespace {

Program sd_program() {
  const Variant& v = *find_variant("sd_attention");
  return v.build(v.resolve({}));
}

TEST(CheckSweep, PlansEveryRoleFromTheDeclaredDomain) {
  const std::vector<PlannedShape> s = planned_shapes(sd_program(), {});
  ASSERT_EQ(s.size(), 5u);
  // seqlen in [128, 4096] multiple_of 128 (tiled); d_head in [1, 128] (untiled).
  EXPECT_EQ(s[0].role, "smallest");
  EXPECT_EQ(s[0].params.at("seqlen"), 128);
  EXPECT_EQ(s[0].params.at("d_head"), 1);
  EXPECT_EQ(s[1].role, "one tile + one step");
  EXPECT_EQ(s[1].params.at("seqlen"), 256);
  EXPECT_EQ(s[1].params.at("d_head"), 2);
  EXPECT_EQ(s[2].role, "non-power-of-two");
  EXPECT_EQ(s[2].params.at("seqlen"), 384);
  EXPECT_EQ(s[2].params.at("d_head"), 3);
  EXPECT_EQ(s[3].role, "several tiles");
  EXPECT_EQ(s[3].params.at("seqlen"), 1024);
  EXPECT_EQ(s[3].params.at("d_head"), 2);
  EXPECT_EQ(s[4].role, "widest");
  EXPECT_EQ(s[4].params.at("seqlen"), 128);
  EXPECT_EQ(s[4].params.at("d_head"), 128);
  for (const PlannedShape& p : s) EXPECT_NO_THROW(check_params(sd_program(), p.params));
}

TEST(CheckSweep, PinnedParamsStayAndDuplicatesGo) {
  const std::vector<PlannedShape> s = planned_shapes(sd_program(), {{"seqlen", 512}});
  ASSERT_FALSE(s.empty());
  for (const PlannedShape& p : s) EXPECT_EQ(p.params.at("seqlen"), 512);
  // d_head takes 1, 2, 3 and 128: four distinct shapes (several tiles repeats d_head 2).
  EXPECT_EQ(s.size(), 4u);
  const std::vector<PlannedShape> both =
      planned_shapes(sd_program(), {{"seqlen", 512}, {"d_head", 64}});
  EXPECT_EQ(both.size(), 1u);
}

TEST(CheckSweep, LargestShapeFollowsThePredictedTime) {
  const Program p = sd_program();
  const PlannedShape from = planned_shapes(p, {}).back();  // widest: seqlen 128, d_head 128
  // 0.01 s per case at 128; growth^2 in the tiled product: 4096 costs 32^2 = 1024x.
  const auto big = largest_within(p, from, 0.01, 4, 100.0);
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->params.at("seqlen"), 4096);
  EXPECT_EQ(big->params.at("d_head"), 128);
  const auto mid = largest_within(p, from, 0.01, 4, 0.01 * 4 * 16 * 16.5);  // room for 16x only
  ASSERT_TRUE(mid.has_value());
  EXPECT_EQ(mid->params.at("seqlen"), 2048);
  EXPECT_FALSE(largest_within(p, from, 0.01, 4, 0.01).has_value());
  // A pinned param never grows (`check --param seqlen=128` stays at 128).
  EXPECT_FALSE(largest_within(p, from, 0.01, 4, 100.0, {{"seqlen", 128}}).has_value());
}

TEST(CheckSweep, PredictedTimeIsQuadraticInTiledAndLinearInUntiledParams) {
  const Program p = sd_program();
  // seqlen (tiled) doubles: 4x; d_head (untiled) 1 -> 128: 128x.
  EXPECT_DOUBLE_EQ(predicted_seconds(p, {{"seqlen", 128}, {"d_head", 1}},
                                     {{"seqlen", 256}, {"d_head", 128}}, 0.01),
                   0.01 * 4 * 128);
  EXPECT_DOUBLE_EQ(predicted_seconds(p, {{"seqlen", 128}}, {{"seqlen", 128}}, 0.5), 0.5);
}

// The widest shape runs when the budget allows it; under a budget of 0 exactly one case runs and
// every other shape is reported as skipped (with its params and the reason), never as passed.
TEST(CheckSweep, WidestShapeRunsWithinBudgetAndIsReportedSkippedBeyondIt) {
  const Variant& v = *find_variant("sd_attention");
  SweepOptions o;
  o.cases_per_shape = 1;
  o.check.exact_oracle_max_macs = 1e5;  // as `ncverify check` sweeps (the fast oracle beyond)
  auto widest_ran = [](const SweepResult& r) {
    return std::any_of(r.runs.begin(), r.runs.end(),
                       [](const SweepRun& run) { return run.shape.role == "widest"; });
  };
  o.budget_s = 1000;
  const SweepResult roomy = check_sweep(v, {v.resolve({})}, v.build, {{"seqlen", 128}}, o);
  EXPECT_TRUE(roomy.pass);
  EXPECT_TRUE(widest_ran(roomy));
  for (const SweepRun& r : roomy.runs) EXPECT_EQ(r.shape.params.at("seqlen"), 128) << "pinned";
  EXPECT_TRUE(roomy.skipped.empty());
  EXPECT_TRUE(roomy.to_json().at("skipped").empty());

  o.budget_s = 0;
  const SweepResult tight = check_sweep(v, {v.resolve({})}, v.build, {{"seqlen", 128}}, o);
  EXPECT_FALSE(widest_ran(tight));
  EXPECT_EQ(tight.cases(), 1);
  // seqlen pinned: d_head 1 (run), 2, 3 and 128 (several tiles repeats d_head 2).
  ASSERT_EQ(tight.skipped.size(), 3u) << tight.summary();
  const auto widest = std::find_if(tight.skipped.begin(), tight.skipped.end(),
                                   [](const SkippedShape& k) { return k.shape.role == "widest"; });
  ASSERT_NE(widest, tight.skipped.end());
  EXPECT_EQ(widest->reason, "budget");
  EXPECT_EQ(tight.to_json().at("skipped").size(), 3u);
  EXPECT_NE(tight.summary().find("SKIP"), std::string::npos);
  EXPECT_NE(tight.note.find("ran exactly one case"), std::string::npos) << tight.note;
}

}  // namespace
}  // namespace ncv::kernels
