// `ncverify bugs` and the replay paths the property suite prints: `check` of a catalogue entry
// with `--values`, and their usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliBugs, OneEntryRowAndTheSummaryLine) {
  CliResult r = run_cli({"bugs", "--only", "reciprocal_not_applied"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reciprocal_not_applied"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("caught (matches_oracle)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("properties caught 1/1; baseline caught 1/1"), std::string::npos) << r.out;
}

TEST(CliBugs, JsonCountsAndRows) {
  CliResult r = run_cli({"bugs", "--json", "--only", "scale_applied_twice"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entries"], 1);
  EXPECT_EQ(j["properties_caught"], 1);
  EXPECT_EQ(j["rows"][0]["bug"], "scale_applied_twice");
  EXPECT_TRUE(j["rows"][0]["baseline_shape"].contains("seqlen"));
}

TEST(CliBugs, UnknownEntryIsAUsageError) {
  CliResult r = run_cli({"bugs", "--only", "no_such_bug"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no_such_bug"), std::string::npos) << r.err;
}

TEST(CliCheck, ReplaysACatalogueEntryWithPropertyValues) {
  // The replay line the property suite prints for this entry's shrunk failure.
  CliResult bad = run_cli({"check", "reciprocal_not_applied", "--param", "d_head=1", "--param",
                           "seqlen=128", "--values", "uniform:s=0:seed=0"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("uniform:s=0:seed=0"), std::string::npos) << bad.out;
  // The same values on the kernel it breaks pass.
  CliResult good = run_cli({"check", "sd_attention_step4", "--param", "d_head=1", "--param",
                            "seqlen=128", "--values", "uniform:s=0:seed=0"});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
}

TEST(CliCheck, BadValueRecipesAndFixedOptionsExitTwo) {
  CliResult r = run_cli({"check", "sd_attention", "--param", "d_head=1", "--param", "seqlen=128",
                         "--values", "gaussian:s=0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown value kind 'gaussian'"), std::string::npos) << r.err;
  CliResult fixed = run_cli({"check", "causal_mask_off_by_one", "--param", "d_head=8", "--param",
                             "seqlen=128", "--param", "use_causal_mask=false"});
  EXPECT_EQ(fixed.exit_code, 2);
  EXPECT_NE(fixed.err.find("fixes use_causal_mask=true"), std::string::npos) << fixed.err;
}

}  // namespace
}  // namespace ncv::cli_test
