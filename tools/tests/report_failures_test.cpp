// annotate_failures / failures_text: what a report did not pass, why, and how to replay it, read
// from the report's JSON as `report` builds it.
#include "tools/report_failures.h"

#include <gtest/gtest.h>

namespace ncv::cli {
namespace {

nlohmann::json report_with_one_of_each() {
  nlohmann::json failing_case = {{"seed", 3},
                                 {"distribution", "large_logits"},
                                 {"pass", false},
                                 {"verdict", "fail"},
                                 {"verdict_line", "FAIL 4 element(s) non-finite ..."}};
  nlohmann::json passing_case = {{"seed", 1}, {"pass", true}, {"verdict", "pass"}};
  nlohmann::json per_option = {
      {"status", "unknown"},
      {"unknown_reason", "real unknown: the terms of both programs outgrow 1024 MiB"}};
  return {{"checks",
           {{{"kernel", "good"}, {"pass", true}, {"verdict", "pass"}},
            {{"kernel", "bad"},
             {"pass", false},
             {"verdict", "fail"},
             {"cases", {passing_case, failing_case}},
             {"replay", {"ncverify check bad --dist large_logits --seed 3"}}}}},
          {"links",
           {{{"kernel", "v4"},
             {"rewrites", "v3"},
             {"pass", false},
             {"status", "UNKNOWN"},
             {"claim", "changes numerics"},
             {"level", "unknown"},
             {"options", {{"dtype", "bf16"}}},
             {"gen", "trn1"},
             {"equiv", {{"per_options", {per_option}}}}}}},
          {"proofs",
           {{{"kernel", "good"}, {"counterexample", 0}, {"unknown", 0}, {"obligations", 5}},
            {{"kernel", "v4"},
             {"counterexample", 0},
             {"unknown", 1},
             {"obligations", 5},
             {"gen", "trn1"},
             {"unproved", {"seqlen=[128, 4096]: sbuf fits: unknown (timeout)"}}}}}};
}

TEST(ReportFailures, EachNonPassingRowGetsItsReasonAndReplayInOrder) {
  nlohmann::json report = report_with_one_of_each();
  const nlohmann::json f = annotate_failures(report);
  ASSERT_EQ(f.size(), 3u) << f.dump(1);
  EXPECT_EQ(f[0]["kind"], "check");
  EXPECT_EQ(f[0]["verdict"], "FAIL");
  EXPECT_EQ(f[0]["reason"], "case seed=3 large_logits: FAIL 4 element(s) non-finite ...");
  EXPECT_EQ(f[0]["replay"], "ncverify check bad --dist large_logits --seed 3");
  EXPECT_EQ(f[1]["kind"], "equiv");
  EXPECT_EQ(f[1]["verdict"], "UNKNOWN");
  EXPECT_NE(f[1]["reason"].get<std::string>().find("outgrow 1024 MiB"), std::string::npos);
  EXPECT_EQ(f[1]["replay"], "ncverify equiv v3 v4 --param dtype=bf16 --gen trn1");
  EXPECT_EQ(f[2]["kind"], "prove");
  EXPECT_EQ(f[2]["verdict"], "UNKNOWN");
  EXPECT_NE(f[2]["reason"].get<std::string>().find("sbuf fits: unknown"), std::string::npos);
  EXPECT_EQ(f[2]["replay"], "ncverify prove v4 --gen trn1");
  // the rows carry them too (the page shows them in the row); passing rows do not
  EXPECT_EQ(report["checks"][1]["reason"], f[0]["reason"]);
  EXPECT_FALSE(report["checks"][0].contains("reason"));
  EXPECT_EQ(report["links"][0]["replay"][0], f[1]["replay"]);
  EXPECT_FALSE(report["proofs"][0].contains("reason"));

  const std::string text = failures_text(f);
  EXPECT_EQ(text.rfind("\nnot passed: 3\n", 0), 0u) << text;
  EXPECT_NE(text.find("  FAIL check bad: case seed=3"), std::string::npos) << text;
  EXPECT_NE(text.find("    replay: ncverify equiv v3 v4 --param dtype=bf16 --gen trn1"),
            std::string::npos)
      << text;
}

TEST(ReportFailures, AllPassingSaysNone) {
  nlohmann::json report = {{"checks", {{{"kernel", "a"}, {"pass", true}}}},
                           {"links", nlohmann::json::array()},
                           {"proofs", {{{"kernel", "a"}, {"counterexample", 0}, {"unknown", 0}}}}};
  const nlohmann::json f = annotate_failures(report);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(failures_text(f), "\nnot passed: none\n");
}

// A counterexample makes a proof row FAIL, a refuted link names the layer and the element.
TEST(ReportFailures, RefutationsAreFailuresWithTheirCounterexample) {
  nlohmann::json report = {
      {"proofs", {{{"kernel", "k"}, {"counterexample", 2}, {"unknown", 0}, {"gen", "trn2"}}}},
      {"links",
       {{{"kernel", "r"},
         {"rewrites", "o"},
         {"pass", false},
         {"status", "FAIL"},
         {"claim", "bit-exact"},
         {"level", "refuted"},
         {"equiv",
          {{"per_options",
            {{{"status", "refuted"},
              {"bit_exact",
               {{"verdict", "refuted"},
                {"detail", "counterexample replayed on the interpreter"},
                {"counterexample",
                 {{"output", "out"},
                  {"index", {4, 0}},
                  {"original", -1.01},
                  {"rewrite", -1.02},
                  {"inputs", "large_logits"},
                  {"seed", 1}}}}}}}}}}}}}};
  const nlohmann::json f = annotate_failures(report);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0]["verdict"], "FAIL");
  EXPECT_EQ(f[0]["kind"], "equiv");
  EXPECT_NE(f[0]["reason"].get<std::string>().find(
                "bit_exact refuted: counterexample replayed on the interpreter (out[4,0]: "
                "original -1.01 vs rewrite -1.02"),
            std::string::npos)
      << f[0]["reason"];
  EXPECT_EQ(f[1]["verdict"], "FAIL");
  EXPECT_EQ(f[1]["kind"], "prove");
}

}  // namespace
}  // namespace ncv::cli
