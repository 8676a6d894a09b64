// The case bound on the registered kernels themselves (not the contract reference): no correct
// kernel exceeds it, over every kernel, option set, the sweep's small shapes and every input
// distribution; and it is tight (median max|err| / bound per contract). The default tier runs 120
// cases; the deep tier runs NCV_BOUND_CASES of them (`ci/test --deep`: 10^5) split over eight
// interleaved shards, so that ctest -j spreads them over the machine's cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/check_sweep.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"

namespace ncv::kernels {
namespace {

struct Target {
  const Variant* variant;
  Options options;
  Program program;
  std::vector<PlannedShape> shapes;
  std::string contract;  // name and options: one row of the tightness table
  bool all_fp32 = false;
};

bool contract_all_fp32(const oracle::PrecisionContract& c) {
  for (DType t : {c.q_dtype, c.k_dtype, c.v_dtype, c.score_dtype, c.max_dtype, c.exp_dtype,
                  c.p_dtype, c.sum_dtype, c.norm_dtype, c.out_dtype}) {
    if (t != DType::fp32) return false;
  }
  return true;
}

std::vector<Target> targets() {
  std::vector<Target> out;
  for (const Variant& v : registry()) {
    if (heavy_check(v)) continue;  // CaseBoundOnKernels.HeavyVariantsAreLeftToTheirOwnTests
    for (LabelledProgram& lp : option_programs(v)) {
      Target t{&v, lp.options, std::move(lp.program), {}, "", false};
      // The sweep's three small shapes (the several-tiles one is left to the command line).
      std::vector<PlannedShape> shapes = planned_shapes(t.program, {});
      if (shapes.size() > 3) shapes.resize(3);
      // (Roles that break a relation move to the nearest legal shape: attention_tkg's batch
      // split, 129 <= bs * q_head * s_active, runs here too.)
      if (shapes.empty()) continue;
      t.shapes = std::move(shapes);
      const oracle::PrecisionContract ct = v.contract(lp.options);
      t.contract = ct.name;
      for (const auto& [k, x] : lp.options) t.contract += " " + k + "=" + x;
      t.all_fp32 = contract_all_fp32(ct);
      out.push_back(std::move(t));
    }
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Case n runs target n mod |targets| in round n / |targets|. A round's distribution rotates with
// the round; its shape is the target's smallest, except that every 32nd round (from round 1) takes
// the next larger one and every 128th (from round 2) the largest. Why: a case at the largest
// shape costs 30 times one at the smallest (flash_fwd at seqlen 3072 with two batches of six
// heads: 15 s), so a uniform walk made 10^5 cases cost half a day on two cores; the bound's
// arithmetic is the same at every shape, and value variety comes from the cases, not the sizes.
const PlannedShape& shape_of_round(const Target& t, size_t round) {
  size_t k = 0;
  if (round % 128 == 2) {
    k = 2;
  } else if (round % 32 == 1) {
    k = 1;
  }
  return t.shapes[std::min(k, t.shapes.size() - 1)];
}

// Runs the cases n in [0, cases) with n mod shards == shard: case n is the same case in every
// split, so the shards together run exactly the unsharded sequence, and the costly rounds spread
// over every shard.
void expect_no_case_over_the_bound(int cases, int shard, int shards) {
  const std::vector<Target> ts = targets();
  const auto& dists = check_distributions();
  std::map<std::string, std::vector<double>> ratios;
  std::map<std::string, bool> fp32_only;
  int failures = 0;
  int run = 0;
  for (int n = shard; n < cases; n += shards) {
    ++run;
    const Target& t = ts[static_cast<size_t>(n) % ts.size()];
    const size_t round = static_cast<size_t>(n) / ts.size();
    const PlannedShape& shape = shape_of_round(t, round);
    CheckOptions co;
    co.cases = 1;
    co.seed = static_cast<uint64_t>(n) + 1;
    co.distributions = {dists[round % dists.size()]};
    co.exact_oracle_max_macs = 1e5;
    co.run.hw = find_hw_config(default_generation(*t.variant));  // the kernel's own generation
    const CheckResult r = check_kernel(*t.variant, t.program, t.options, shape.params, co);
    const CaseResult& c = r.cases.front();
    if (!c.pass) {
      if (++failures <= 5) {
        ADD_FAILURE() << t.variant->name << " " << t.contract << " at " << shape.role << ": "
                      << c.distribution << " seed " << c.seed << ": "
                      << (c.run_error ? c.run_error->message : c.comparison.one_line());
      }
      continue;
    }
    ratios[t.contract].push_back(c.comparison.max_normalized);
    fp32_only[t.contract] = t.all_fp32;
  }
  EXPECT_EQ(failures, 0) << "of " << run << " correct-kernel cases";
  std::vector<double> narrow;
  for (const auto& [name, v] : ratios) {
    if (!fp32_only[name]) narrow.insert(narrow.end(), v.begin(), v.end());
  }
  if (run >= 120 || !narrow.empty()) {  // (a small deep run may draw no narrow contract)
    EXPECT_GE(median(narrow), 0.2) << "over every contract with a narrower dtype";
  }
  std::printf("%d correct-kernel cases (shard %d of %d), %d over the case bound\n", run, shard,
              shards, failures);
  for (const auto& [name, v] : ratios) {
    std::printf("  %-90s median %.3f (%zu cases)%s\n", name.c_str(), median(v), v.size(),
                fp32_only[name] ? "  [all-fp32 contract: order-free bound]" : "");
    // Tightness is asserted over every narrow contract together (above), not per contract: the
    // first deep run (12,500 cases a shard) found five contracts with medians of 0 to 0.10 at
    // their smallest shapes, where the kernel's order of operations is the reference's and its
    // error is (near) zero while the bound still covers every order. Those are listed, not failed:
    // the bound's soundness is the zero above, and an all-fp32 contract leaves only the
    // accumulation order open, which no order-free bound can make tight (kernels/README.md).
    if (!fp32_only[name] && v.size() >= 5 && median(v) < 0.2) {
      std::printf("    loose here: median %.3f over %zu cases\n", median(v), v.size());
    }
  }
}

// The default tier samples 120 cases (the deep shards below run 960 in all).
TEST(CaseBoundOnKernels, NoCorrectKernelExceedsItAndItIsTight) {
  expect_no_case_over_the_bound(120, 0, 1);
}

// The deep run: NCV_BOUND_CASES cases in all (unset: 960, four times the default tier's).
constexpr int kDeepShards = 8;
class CaseBoundOnKernelsShard : public ::testing::TestWithParam<int> {};

TEST_P(CaseBoundOnKernelsShard, NoCorrectKernelExceedsItAndItIsTight) {
  int cases = 960;
  if (const char* e = std::getenv("NCV_BOUND_CASES")) cases = std::max(1, std::atoi(e));
  expect_no_case_over_the_bound(cases, GetParam(), kDeepShards);
}

INSTANTIATE_TEST_SUITE_P(Deep, CaseBoundOnKernelsShard, ::testing::Range(0, kDeepShards));

// A variant whose one check case is too slow to sample here (Variant::check_case_seconds) is left
// out of the targets above; its own test checks its case bound at its shape.
TEST(CaseBoundOnKernels, HeavyVariantsAreLeftToTheirOwnTests) {
  std::string skipped;
  for (const Variant& v : registry()) {
    if (heavy_check(v)) skipped += "\n" + heavy_check_reason(v);
  }
  if (!skipped.empty())
    GTEST_SKIP() << "not sampled by NoCorrectKernelExceedsItAndItIsTight:" << skipped;
}

}  // namespace
}  // namespace ncv::kernels
