// The default check's planner (check_plan.h, check_sweep.h): the order of its work and the budget
// it keeps, checked on its own accounting with a fake clock and an injected per-case cost (no
// interpreter runs, no wall-clock assertions): what it runs, what it lists as skipped and why,
// and that no case starts once the budget is spent.
#include "check/check_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "check/check_sweep.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/interp/interpreter.h"

namespace ncv::kernels {
namespace {

// A fake clock and case runner: each case costs cost(params) seconds of fake time and passes
// (or fails where `fails` says so); every case's start time is recorded.
struct FakeRun {
  double now = 0;
  std::function<double(const ParamValues&)> cost;
  std::function<bool(const Options&, const ParamValues&)> fails =
      [](const Options&, const ParamValues&) { return false; };
  // Where a passing case's run needed spills (CheckResult::unknown).
  std::function<bool(const Options&, const ParamValues&)> spills =
      [](const Options&, const ParamValues&) { return false; };
  std::vector<double> starts;

  void install(SweepOptions& o) {
    o.clock = [this] { return now; };
    o.run_case = [this](const Program& p, const Options& opt, const ParamValues& params,
                        const CheckOptions& co) {
      EXPECT_EQ(co.cases, 1);
      EXPECT_EQ(co.distributions.size(), 1u);
      EXPECT_NO_THROW(check_params(p, params));
      starts.push_back(now);
      now += cost(params);
      CheckResult r;
      r.kernel = p.name;
      r.params = params;
      r.options = opt;
      CaseResult c;
      c.distribution = oracle::distribution_name(co.distributions.front());
      c.seed = co.seed;
      c.pass = !fails(opt, params);
      r.pass = c.pass;
      if (c.pass && spills(opt, params)) {
        r.pass = false;
        r.unknown = "live SBUF buffers need more than the capacity (spills)";
      }
      r.worst_normalized = c.pass ? 0.5 : 2.0;
      r.cases.push_back(c);
      return r;
    };
  }
};

double product(const ParamValues& p) {
  double x = 1;
  for (const auto& [name, v] : p) x *= static_cast<double>(v);
  return x;
}

// The promise: the sweep ends within 1.2 B plus its longest case, and no case starts after B.
void expect_budget_kept(const SweepResult& r, const FakeRun& f, double budget) {
  EXPECT_LE(r.seconds, 1.2 * budget + r.max_case_s) << r.summary();
  for (size_t i = 1; i < f.starts.size(); ++i) {
    EXPECT_LT(f.starts[i], budget) << "case " << i << " started after the budget\n" << r.summary();
  }
  // Every planned item is either run or listed as skipped with a reason (none passed silently).
  for (const SkippedShape& k : r.skipped) {
    EXPECT_FALSE(k.reason.empty());
    EXPECT_FALSE(k.shape.role.empty());
  }
  EXPECT_EQ(r.to_json().at("skipped").size(), r.skipped.size());
}

TEST(CheckPlan, StartsWithTheFirstSetsSmallestShapeAndListsEveryItemOnce) {
  const Variant& v = *find_variant("flash_fwd");
  const std::vector<Options> sets = resolved_combinations(v);
  const std::vector<PlanItem> order = plan_order(sets);
  ASSERT_EQ(order.size(), sets.size() * sweep_roles().size());
  EXPECT_EQ(order.front(), (PlanItem{0, 0}));
  std::set<std::pair<size_t, size_t>> seen;
  for (const PlanItem& it : order) EXPECT_TRUE(seen.insert({it.set, it.role}).second);
  // A kernel without options: its roles in order.
  const std::vector<PlanItem> one = plan_order({Options{}});
  ASSERT_EQ(one.size(), sweep_roles().size());
  for (size_t r = 0; r < one.size(); ++r) EXPECT_EQ(one[r], (PlanItem{0, r}));
}

// Under a small budget as many option values as possible: every value of every option of
// flash_fwd (88 option sets) shows up at a bug-exposing role within the first few items, and the
// bug-exposing roles of all sets come before the other roles of any set past the first few.
TEST(CheckPlan, CoversEveryOptionValueAtTheBugExposingRolesFirst) {
  const Variant& v = *find_variant("flash_fwd");
  const std::vector<Options> sets = resolved_combinations(v);
  ASSERT_GT(sets.size(), 50u);
  const std::vector<PlanItem> order = plan_order(sets);
  std::set<std::pair<std::string, std::string>> all, seen_at_smallest;
  for (const Options& o : sets) all.insert(o.begin(), o.end());
  size_t n = 0;
  for (; n < order.size() && seen_at_smallest.size() < all.size(); ++n) {
    if (order[n].role != 0) continue;
    for (const auto& kv : sets[order[n].set]) seen_at_smallest.insert(kv);
  }
  EXPECT_EQ(seen_at_smallest, all);
  // 9 options of 2 values: a covering order needs a handful of sets per role, not 88.
  EXPECT_LE(n, 3u * 4u) << "items until every option value ran at the smallest shape";
  // Every bug-exposing (role, option value) is covered before the first non-exposing item.
  std::set<std::tuple<size_t, std::string, std::string>> triples;
  for (const PlanItem& it : order) {
    if (!bug_exposing_role(sweep_roles()[it.role])) break;
    for (const auto& [k, x] : sets[it.set]) triples.insert({it.role, k, x});
  }
  EXPECT_EQ(triples.size(), 3 * all.size());
}

// flash_fwd, 88 option sets (each set's fixed roles used to run before the budget was looked
// at): a 2 s budget with cases of 0.05 s per 512 keys squared is kept, the runs cover every
// option value, and what did not run is listed as skipped for the budget.
TEST(CheckPlan, KeepsTheBudgetOnAKernelWithManyOptionSets) {
  const Variant& v = *find_variant("flash_fwd");
  const std::vector<Options> sets = resolved_combinations(v);
  FakeRun f;
  f.cost = [](const ParamValues& p) {
    const double s = static_cast<double>(p.at("seqlen")) / 512.0;
    return 0.05 * s * s * static_cast<double>(p.at("bs") * p.at("group") * p.at("kv_heads"));
  };
  SweepOptions o;
  o.budget_s = 2;
  f.install(o);
  const SweepResult r = check_sweep(v, sets, v.build, {}, o);
  EXPECT_TRUE(r.pass);
  expect_budget_kept(r, f, o.budget_s);
  ASSERT_FALSE(r.runs.empty());
  EXPECT_EQ(r.runs.front().shape.role, "smallest");
  EXPECT_EQ(r.runs.front().options, sets.front());
  EXPECT_GT(r.runs.front().result.cases.size(), 1u) << "the first item runs several inputs";
  ASSERT_FALSE(r.skipped.empty());
  for (const SkippedShape& k : r.skipped) EXPECT_EQ(k.reason, "budget") << k.options;
  std::set<std::pair<std::string, std::string>> all, ran;
  for (const Options& s : sets) all.insert(s.begin(), s.end());
  for (const SweepRun& run : r.runs) ran.insert(run.options.begin(), run.options.end());
  EXPECT_EQ(ran, all) << r.summary();
  EXPECT_NE(r.summary().find("SKIP"), std::string::npos);
}

// sd_attention_allocated: seqlen in steps of 1024, a case of several seconds. Under a budget
// shorter than one case exactly one case runs (the most bug-exposing input at the smallest
// shape), the sweep says so, and every other item is skipped for the budget.
TEST(CheckPlan, ABudgetShorterThanOneCaseRunsExactlyOne) {
  const Variant& v = *find_variant("sd_attention_allocated");
  const std::vector<Options> sets = resolved_combinations(v);
  FakeRun f;
  f.cost = [](const ParamValues& p) {
    const double s = static_cast<double>(p.at("seqlen")) / 1024.0;
    return 3.0 * s * s * static_cast<double>(p.at("bs"));
  };
  SweepOptions o;
  o.budget_s = 2;
  f.install(o);
  const SweepResult r = check_sweep(v, sets, v.build, {}, o);
  expect_budget_kept(r, f, o.budget_s);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.cases(), 1);
  EXPECT_EQ(r.runs[0].shape.role, "smallest");
  EXPECT_EQ(r.runs[0].shape.params.at("seqlen"), 1024);
  EXPECT_TRUE(r.pass) << "one case ran and passed: the verdict covers it, the rest is SKIP";
  EXPECT_NE(r.note.find("ran exactly one case"), std::string::npos) << r.note;
  // Its five roles are distinct shapes: every other planned item is listed.
  EXPECT_EQ(r.skipped.size() + r.runs.size(), static_cast<size_t>(r.planned)) << r.summary();

  // With room for a few cases, the larger tiles are predicted from the measured ones and left
  // out when they do not fit: a 2048-key case costs 4x a 1024-key one.
  FakeRun g;
  g.cost = f.cost;
  o.budget_s = 10;
  g.install(o);
  const SweepResult roomier = check_sweep(v, sets, v.build, {}, o);
  expect_budget_kept(roomier, g, o.budget_s);
  for (const SweepRun& run : roomier.runs) EXPECT_EQ(run.shape.params.at("seqlen"), 1024);
  bool skipped_larger = false;
  for (const SkippedShape& k : roomier.skipped) {
    if (!k.shape.params.empty() && k.shape.params.at("seqlen") > 1024) {
      skipped_larger = true;
      // from the measured 3 s per 1024 keys: at least the fixed half plus twice the rest
      EXPECT_GE(k.predicted_s, 1.5 + 2 * 1.5 - 1e-9) << k.options;
    }
  }
  EXPECT_TRUE(skipped_larger) << roomier.summary();
}

// A heavy variant (its declared per-case cost, check_case_seconds, over the budget): the
// prediction comes from that declaration before anything ran, one case runs, and the note says
// it was predicted over the budget.
TEST(CheckPlan, AHeavyVariantRunsOneCaseAndSaysItWasPredictedOverTheBudget) {
  const Variant& v = *find_variant("pipelined_attention");
  ASSERT_TRUE(heavy_check(v));
  FakeRun f;
  f.cost = [&](const ParamValues&) { return v.check_case_seconds; };
  SweepOptions o;
  o.budget_s = 10;
  f.install(o);
  const SweepResult r = check_sweep(v, resolved_combinations(v), v.build, {}, o);
  expect_budget_kept(r, f, o.budget_s);
  EXPECT_EQ(r.cases(), 1);
  EXPECT_NE(r.note.find("predicted"), std::string::npos) << r.note;
  EXPECT_DOUBLE_EQ(r.seconds, v.check_case_seconds);
}

// Cases run one at a time: with 0.1 s per case and a 1 s budget, cases stop once the next one
// no longer fits, never after the budget.
TEST(CheckPlan, StopsBetweenCasesWhenTheNextNoLongerFits) {
  const Variant& v = *find_variant("sd_attention");
  FakeRun f;
  f.cost = [](const ParamValues&) { return 0.1; };
  SweepOptions o;
  o.budget_s = 1;
  f.install(o);
  const SweepResult r = check_sweep(v, resolved_combinations(v), v.build, {}, o);
  expect_budget_kept(r, f, o.budget_s);
  EXPECT_GE(r.cases(), 9);
  EXPECT_LE(r.cases(), 11);
  EXPECT_LE(r.seconds, o.budget_s + 0.1 + 1e-9);
}

// The gate stops at the first failing case: the rest is listed as stopped, the verdict fails.
TEST(CheckPlan, StopOnFailureListsTheRestAsStopped) {
  const Variant& v = *find_variant("sd_attention");
  FakeRun f;
  f.cost = [](const ParamValues& p) { return 0.01 * product(p) / 128.0; };
  f.fails = [](const Options& o, const ParamValues& p) {
    return o.at("use_causal_mask") == "true" && p.at("seqlen") > 128;
  };
  SweepOptions o;
  o.budget_s = 30;
  o.check.stop_on_failure = true;
  f.install(o);
  const SweepResult r = check_sweep(v, resolved_combinations(v), v.build, {}, o);
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.runs.empty());
  EXPECT_FALSE(r.runs.back().result.pass);
  ASSERT_FALSE(r.skipped.empty());
  for (const SkippedShape& k : r.skipped) {
    EXPECT_EQ(k.reason, "stopped at the first failing case");
  }
}

// A shape whose run needed spills makes the sweep UNKNOWN, never FAIL and never PASS; a failing
// shape anywhere makes it FAIL whatever else was unknown.
TEST(CheckPlan, ASpillingShapeIsUnknownAndAFailingOneStillFails) {
  const Variant& v = *find_variant("sd_attention");
  FakeRun f;
  f.cost = [](const ParamValues& p) { return 0.01 * product(p) / 128.0; };
  f.spills = [](const Options&, const ParamValues& p) { return p.at("seqlen") > 128; };
  SweepOptions o;
  o.budget_s = 30;
  f.install(o);
  const SweepResult unknown = check_sweep(v, resolved_combinations(v), v.build, {}, o);
  EXPECT_FALSE(unknown.pass);
  ASSERT_TRUE(unknown.unknown) << unknown.summary();
  EXPECT_STREQ(unknown.verdict(), "UNKNOWN");
  EXPECT_EQ(unknown.to_json().at("verdict"), "unknown");
  EXPECT_NE(unknown.summary().find("UNKNOWN"), std::string::npos) << unknown.summary();
  // Break it: the causal option set fails at seqlen 128.
  f.now = 0;
  f.fails = [](const Options& opt, const ParamValues& p) {
    return opt.at("use_causal_mask") == "true" && p.at("seqlen") == 128;
  };
  const SweepResult failing = check_sweep(v, resolved_combinations(v), v.build, {}, o);
  EXPECT_FALSE(failing.pass);
  EXPECT_FALSE(failing.unknown) << failing.summary();
  EXPECT_STREQ(failing.verdict(), "FAIL");
}

// attention_tkg split over the batch needs 129 <= bs * q_head * s_active: every role moves to
// the nearest legal shape instead of vanishing, so `ncverify check attention_tkg` has shapes for
// every option set.
TEST(CheckPlan, RolesThatBreakARelationMoveToTheNearestLegalShape) {
  const Variant& v = *find_variant("attention_tkg");
  for (const Options& o : resolved_combinations(v)) {
    const Program p = v.build(o);
    const std::vector<PlannedShape> shapes = planned_shapes(p, {});
    std::string label;
    for (const auto& [k, x] : o) label += k + "=" + x + " ";
    ASSERT_FALSE(shapes.empty()) << label;
    EXPECT_EQ(shapes.front().role, "smallest") << label;
    for (const PlannedShape& s : shapes) EXPECT_NO_THROW(check_params(p, s.params)) << label;
    if (o.at("lnc") == "2-batch") {
      const ParamValues& sm = shapes.front().params;
      EXPECT_GE(sm.at("bs") * sm.at("q_head") * sm.at("s_active"), 129) << label;
    }
  }
}

// An option set whose program cannot be built (a catalogue entry whose edit does not find its
// pattern there) is an error naming that option set, raised when the sweep reaches it; the option
// sets before it ran.
TEST(CheckPlan, AnOptionSetThatDoesNotBuildIsAnErrorNamingIt) {
  const Variant& v = *find_variant("sd_attention");
  const std::vector<Options> sets = resolved_combinations(v);
  FakeRun f;
  f.cost = [](const ParamValues&) { return 0.01; };
  SweepOptions o;
  o.budget_s = 100;
  f.install(o);
  const auto build = [&](const Options& opts) {
    if (opts.at("use_causal_mask") == "true") throw std::logic_error("no causal select to edit");
    return v.build(opts);
  };
  try {
    check_sweep(v, sets, build, {}, o);
    FAIL() << "expected OptionSetError";
  } catch (const OptionSetError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("use_causal_mask=true"), std::string::npos) << what;
    EXPECT_NE(what.find("no causal select to edit"), std::string::npos) << what;
  }
  EXPECT_FALSE(f.starts.empty()) << "the option sets before it ran";
}

}  // namespace
}  // namespace ncv::kernels
