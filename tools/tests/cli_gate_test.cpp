// The default `ncverify check` (shapes chosen from the domain, every open option set, the worst
// case with its replay line, the first failing element) and `ncverify bugs --gate`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// The text after "replay: " on the line that has it, split into arguments.
std::vector<std::string> replay_args(const std::string& out) {
  const size_t at = out.find("replay: ncverify ");
  if (at == std::string::npos) return {};
  const size_t end = out.find('\n', at);
  std::string line = out.substr(at + 17, end - at - 17);
  std::vector<std::string> args;
  size_t s = 0;
  while (s < line.size()) {
    size_t e = line.find(' ', s);
    if (e == std::string::npos) e = line.size();
    if (e > s) args.push_back(line.substr(s, e - s));
    s = e + 1;
  }
  return args;
}

TEST(CliGate, CheckWithoutShapeParamsSweepsTheDomainAndListsWhatItRan) {
  CliResult r =
      run_cli({"check", "sd_attention_step2", "--param", "use_causal_mask=true", "--param",
               "dtype=bf16", "--param", "mixed_precision=true", "--cases", "2", "--budget-s", "0"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* role :
       {"smallest", "one tile + one step", "non-power-of-two", "several tiles"}) {
    EXPECT_NE(r.out.find(role), std::string::npos) << role << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("seqlen=128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seqlen=1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst case:"), std::string::npos) << r.out;
  // The replay line re-runs exactly the worst case: one case, same verdict.
  const std::vector<std::string> again = replay_args(r.out);
  ASSERT_FALSE(again.empty()) << r.out;
  CliResult one = run_cli(again);
  EXPECT_EQ(one.exit_code, 0) << describe(one);
  EXPECT_NE(one.out.find("1 cases"), std::string::npos) << one.out;
}

TEST(CliGate, ABugFoundByTheSweepPrintsItsReplayAndFirstFailingElement) {
  // A 2% softmax-scale error: invisible to uniform [0, 1) inputs at one shape, caught by the
  // default check's peaked inputs.
  CliResult r = run_cli({"check", "scale_off_2pct", "--cases", "2", "--budget-s", "0"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("first failing element"), std::string::npos) << r.out;
  const std::vector<std::string> again = replay_args(r.out);
  ASSERT_FALSE(again.empty()) << r.out;
  CliResult one = run_cli(again);
  EXPECT_EQ(one.exit_code, 1) << describe(one);
  EXPECT_NE(one.out.find("first failing element"), std::string::npos) << one.out;
}

TEST(CliGate, JsonReportsBothRatiosPerCase) {
  CliResult r = run_cli({"check", "sd_attention", "--param", "seqlen=256", "--param", "d_head=32",
                         "--param", "dtype=bf16", "--cases", "2", "--apriori", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j.at("cases")) {
    EXPECT_TRUE(c.at("case_bound_ratio").is_number()) << c.dump();
    EXPECT_TRUE(c.at("fa_ratio").is_number()) << c.dump();
    EXPECT_TRUE(c.at("apriori_ratio").is_number()) << c.dump();
    // The case bound is the smaller one: its ratio is at least the a-priori one.
    EXPECT_GE(c.at("case_bound_ratio").get<double>(), c.at("apriori_ratio").get<double>());
  }
  EXPECT_TRUE(j.contains("median_case_bound_ratio"));
  EXPECT_TRUE(j.contains("worst_case_replay"));
}

// A correct kernel on the case that exposed an unsound case bound (the sgemm upper-bound products
// of wt-fast, reverted): a cancelling output element near zero must stay inside the bound.
TEST(CliGate, CancellingElementStaysInsideTheCaseBound) {
  const CliResult r =
      run_cli({"check", "sd_attention_step3", "--param", "d_head=65", "--param", "seqlen=384",
               "--param", "dtype=bf16", "--param", "mixed_precision=true", "--param",
               "use_causal_mask=false", "--values", "bf16_bits:s=0:seed=212076"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST(CliGate, UnknownDistributionAndReplayWithoutShapeExitTwo) {
  CliResult bad = run_cli({"check", "sd_attention", "--param", "seqlen=128", "--param", "d_head=8",
                           "--dist", "cauchy"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("no such distribution"), std::string::npos) << bad.err;
  CliResult open = run_cli({"check", "sd_attention", "--param", "seqlen=128", "--dist", "peaked"});
  EXPECT_EQ(open.exit_code, 2) << describe(open);
  EXPECT_NE(open.err.find("d_head"), std::string::npos) << open.err;
}

TEST(CliGate, BugsGateCatchesAnEntryAndSaysWhere) {
  CliResult r = run_cli({"bugs", "--gate", "--only", "mask_fill_leaks_large_logits", "--json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("caught"), 1);
  EXPECT_EQ(j.at("entries"), 1);
  EXPECT_NE(j.at("catalogue")[0].at("first_failure").get<std::string>().find("--dist"),
            std::string::npos);
}

}  // namespace
}  // namespace ncv::cli_test
