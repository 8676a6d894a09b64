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

// The lines of `out` that start with `prefix` (after the indent).
std::string lines_starting(const std::string& out, const std::string& prefix) {
  std::string s;
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\n', at);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(at, end - at);
    if (line.find_first_not_of(' ') != std::string::npos &&
        line.compare(line.find_first_not_of(' '), prefix.size(), prefix) == 0) {
      s += line + "\n";
    }
    at = end + 1;
  }
  return s;
}

TEST(CliGate, CheckWithoutShapeParamsSweepsTheDomainAndListsWhatItRan) {
  CliResult r = run_cli({"check", "sd_attention_step2", "--param", "use_causal_mask=true",
                         "--param", "dtype=bf16", "--param", "mixed_precision=true", "--cases", "2",
                         "--budget-s", "10"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const std::string ran = lines_starting(r.out, "PASS");
  for (const char* role :
       {"smallest", "one tile + one step", "non-power-of-two", "several tiles"}) {
    EXPECT_NE(ran.find(role), std::string::npos) << role << "\n" << r.out;
  }
  EXPECT_NE(ran.find("seqlen=128"), std::string::npos) << r.out;
  EXPECT_NE(ran.find("seqlen=1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst case:"), std::string::npos) << r.out;
  // The replay line re-runs exactly the worst case: one case, same verdict.
  const std::vector<std::string> again = replay_args(r.out);
  ASSERT_FALSE(again.empty()) << r.out;
  CliResult one = run_cli(again);
  EXPECT_EQ(one.exit_code, 0) << describe(one);
  EXPECT_NE(one.out.find("1 cases"), std::string::npos) << one.out;
}

// A budget shorter than one case: exactly one case runs (the most bug-exposing input at the
// smallest shape), the other planned shapes are listed as SKIP with the reason, never as passed,
// and the verdict says how much it covers.
TEST(CliGate, ABudgetOfZeroRunsOneCaseAndListsTheRestAsSkipped) {
  CliResult r =
      run_cli({"check", "sd_attention_step2", "--param", "use_causal_mask=true", "--param",
               "dtype=bf16", "--param", "mixed_precision=true", "--budget-s", "0"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const std::string ran = lines_starting(r.out, "PASS");
  EXPECT_NE(ran.find("smallest"), std::string::npos) << r.out;
  EXPECT_NE(ran.find(" 1 cases"), std::string::npos) << r.out;
  EXPECT_EQ(ran.find("several tiles"), std::string::npos) << r.out;
  const std::string skipped = lines_starting(r.out, "SKIP");
  for (const char* role : {"one tile + one step", "non-power-of-two", "several tiles", "widest"}) {
    EXPECT_NE(skipped.find(role), std::string::npos) << role << "\n" << r.out;
  }
  EXPECT_NE(skipped.find("budget"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ran exactly one case"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sd_attention_step2: PASS (1 shapes x option sets run; 4 planned ones not "
                       "run, listed as SKIP)"),
            std::string::npos)
      << r.out;
  const CliResult j =
      run_cli({"check", "sd_attention_step2", "--param", "use_causal_mask=true", "--param",
               "dtype=bf16", "--param", "mixed_precision=true", "--budget-s", "0", "--json"});
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  const auto o = nlohmann::json::parse(j.out);
  EXPECT_EQ(o.at("cases"), 1);
  EXPECT_EQ(o.at("skipped").size(), 4u);
  for (const auto& k : o.at("skipped")) EXPECT_EQ(k.at("reason"), "budget") << k.dump();
  EXPECT_NE(o.at("note").get<std::string>().find("ran exactly one case"), std::string::npos);
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
