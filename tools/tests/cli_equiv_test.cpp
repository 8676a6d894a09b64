// `ncverify equiv`, `ncverify adopt` and `report`'s rewrite-link rows, run as a user or an
// optimizer loop runs them: exit codes (0 holds / adopt, 1 refuted / reject, 2 bad input) and
// the JSON documents they print. Options are pinned with --param wherever the point is not the
// option sweep, so each equiv runs one option set (about a second).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// One option set of the sd_attention family: the fp32 kernel with bf16 Tensor-engine operands
// and no mask (the family's defaults), where step 1's fused softmax rounds as the tutorial does.
const std::vector<std::string> kFp32NoMask = {
    "--param", "dtype=fp32", "--param", "use_causal_mask=false", "--param", "mixed_precision=true"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// A catalogue entry that `equiv` refutes against its base kernel: Q is scaled twice, so the
// softmax is softmax(s / 64) and every output row differs.
const char* const kBug = "scale_applied_twice";

TEST(CliEquiv, BitExactLinkHoldsWithExitZero) {
  const CliResult r =
      run_cli(with({"equiv", "sd_attention_step1", "sd_attention_step2", "--require", "bit-exact"},
                   kFp32NoMask));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("verdict: holds (require bit-exact)"), std::string::npos) << r.out;
}

// --term-budget-mib is kept: the same link with its terms held to 16 MiB is unknown there (exit
// 1, the budget named), never proved; a budget below 16 MiB is bad usage.
TEST(CliEquiv, TermBudgetIsKept) {
  const CliResult r = run_cli(with({"equiv", "sd_attention_step1", "sd_attention_step2",
                                    "--require", "bit-exact", "--term-budget-mib", "16"},
                                   kFp32NoMask));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("verdict: unknown (require bit-exact)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outgrow 16 MiB at d_head=1 seqlen=128"), std::string::npos) << r.out;
  const CliResult bad =
      run_cli(with({"equiv", "sd_attention_step1", "sd_attention_step2", "--term-budget-mib", "8"},
                   kFp32NoMask));
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
}

// Terms that cannot fit are not built: at seqlen 1024 x d_head 64 the compute engines write 14
// million elements, over 16 MiB at 32 bytes each, so the shape is unknown at once (the terms'
// estimate named) and its concrete cases still run.
TEST(CliEquiv, TermsThatCannotFitAreNotBuilt) {
  const CliResult r =
      run_cli(with({"equiv", "sd_attention_step4", "sd_attention_step5", "--param", "seqlen=1024",
                    "--param", "d_head=64", "--term-budget-mib", "16", "--cases", "1"},
                   kFp32NoMask));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("would outgrow 16 MiB at d_head=64 seqlen=1024 (their compute engines "
                       "write "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bytes of terms each: not built)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numeric        pass  1 cases"), std::string::npos) << r.out;
}

// Terms built at the smallest shape and not at the next: the exp looked at is discharged, and the
// overflow line says the obligation was not checked at every shape (not "NOT DISCHARGED").
TEST(CliEquiv, OverflowNotCheckedWhereAShapeOutgrewTheBudget) {
  const CliResult r = run_cli(with({"equiv", "sd_attention_step3", "sd_attention_step4",
                                    "--term-budget-mib", "128", "--cases", "1"},
                                   kFp32NoMask));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("outgrow 128 MiB at d_head=1 seqlen=256"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overflow       not checked at every shape  1 exp instruction(s) "
                       "discharged"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("NOT DISCHARGED"), std::string::npos) << r.out;
}

// The catalogue bug at one option set and shape (the default tier); the deep tier compares it at
// every option set and the shapes equiv picks.
const std::vector<std::string> kOneShapeFp32NoMask = {"--param", "dtype=fp32",
                                                      "--param", "use_causal_mask=false",
                                                      "--param", "mixed_precision=true",
                                                      "--param", "seqlen=128",
                                                      "--param", "d_head=16"};

void expect_catalogue_bug_refuted(const std::vector<std::string>& pinned) {
  const CliResult r = run_cli(with({"equiv", "sd_attention", kBug, "--cases", "2"}, pinned));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("verdict: refuted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("counterexample"), std::string::npos) << r.out;
  // Each refuted option set prints the command that replays its counterexample, and it does:
  // the same refutation, through /bin/sh as printed (the built binary in place of `ncverify`).
  const std::string prefix = "\nreplay: ncverify ";
  const size_t at = r.out.find(prefix);
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t end = r.out.find('\n', at + 1);
  const std::string args = r.out.substr(at + prefix.size(), end - at - prefix.size());
  const CliResult again = run_command("/bin/sh", {"-c", shell_quote(NCVERIFY_BINARY) + " " + args});
  EXPECT_EQ(again.exit_code, 1) << args << "\n" << describe(again);
  EXPECT_NE(again.out.find("verdict: refuted"), std::string::npos) << again.out;
}

TEST(CliEquiv, CatalogueBugIsRefutedWithExitOne) {
  expect_catalogue_bug_refuted(kOneShapeFp32NoMask);
}

TEST(DeepCliEquiv, CatalogueBugIsRefutedWithExitOne) {
  expect_catalogue_bug_refuted({});
}

TEST(CliEquiv, BadInputExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"equiv", "sd_attention", "no_such_kernel"},
      {"equiv", "no_such_kernel", "sd_attention_step1"},
      {"equiv", "sd_attention", "sd_attention_step1", "--require", "close-enough"},
      // seqlen must be a multiple of 128 in [128, 4096]
      {"equiv", "sd_attention", "sd_attention_step1", "--param", "seqlen=100"},
      {"equiv", "sd_attention", "sd_attention_step1", "--param", "seqlen=8192"},
      {"equiv", "sd_attention", "sd_attention_step1", "--param", "dtype=fp64"},
  };
  for (const auto& args : bad) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << "\n" << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("ncverify: "), std::string::npos) << r.err;
  }
}

TEST(CliEquiv, JsonHasOneEntryPerOptionSet) {
  const CliResult r =
      run_cli(with({"equiv", "sd_attention_step1", "sd_attention_step2", "--json"}, kFp32NoMask));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("verdict"), "holds");
  EXPECT_EQ(j.at("require"), "bit-exact");  // step 2 claims step 1's numerics
  ASSERT_EQ(j.at("per_options").size(), 1u);
  const auto& o = j.at("per_options").front();
  EXPECT_EQ(o.at("options").at("dtype"), "fp32");
  EXPECT_EQ(o.at("bit_exact").at("verdict"), "proved");
  EXPECT_TRUE(o.at("holds").get<bool>());
  EXPECT_FALSE(o.at("shapes").empty());
}

// A rewrite given as a .nkir dump (one DMA queue changed) without --like is read as a rewrite of
// the registered original: `--param use_causal_mask=false` parses as its option (it used to be
// refused as "not an integer"), and the file is compared at the options its `options` line
// records only (it used to be compared at every option set of the original and refuted at the
// causal one).
TEST(CliEquiv, FileRewriteWithoutLikeIsReadAsTheOriginals) {
  const CliResult dump = run_cli({"dump", "sd_attention", "--param", "use_causal_mask=false"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  std::string text = dump.out;
  const std::string from = "queue=1", to = "queue=2";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, from.size(), to);
  const fs::path file = write_temp("queue_rewrite.nkir", text);
  const std::vector<std::string> shape = {"--param", "seqlen=128", "--param", "d_head=16",
                                          "--json"};
  for (const bool pin : {true, false}) {
    std::vector<std::string> args = {"equiv", "sd_attention", file.string()};
    if (pin) args = with(args, {"--param", "use_causal_mask=false"});
    const CliResult r = run_cli(with(args, shape));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("verdict"), "holds") << r.out;
    ASSERT_EQ(j.at("per_options").size(), 1u) << r.out;
    EXPECT_EQ(j.at("per_options").front().at("options").at("use_causal_mask"), "false");
  }
}

// Step 1 claims changed numerics (contract), and at dtype fp32 its fused softmax rounds exactly
// as the tutorial does: the gate adopts it.
TEST(CliAdopt, FusedSoftmaxStepIsAdoptedAtFp32) {
  const CliResult r =
      run_cli(with({"adopt", "sd_attention", "sd_attention_step1", "--json"}, kFp32NoMask));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("verdict"), "adopt");
  EXPECT_EQ(j.at("reason"), "");
  EXPECT_TRUE(j.at("check").at("pass").get<bool>());
  EXPECT_LE(j.at("check").at("worst_normalized").get<double>(), 1.0);
  std::set<std::string> shapes;
  for (const auto& run : j.at("check").at("runs")) {
    EXPECT_TRUE(run.at("pass").get<bool>()) << run.dump();
    shapes.insert(run.at("shape").dump());
  }
  EXPECT_GE(shapes.size(), 2u);
  const auto& p = j.at("prove");
  EXPECT_GT(p.at("total").get<int>(), 0);
  EXPECT_EQ(p.at("proved"), p.at("total"));
  EXPECT_EQ(p.at("unknown"), 0);
  EXPECT_EQ(p.at("refuted"), 0);
  EXPECT_EQ(j.at("equiv").at("verdict"), "holds");
  ASSERT_FALSE(j.at("equiv").at("per_options").empty());
  ASSERT_FALSE(j.at("latency").empty());
  for (const auto& l : j.at("latency")) {
    EXPECT_EQ(l.at("gen"), "trn1");
    EXPECT_GT(l.at("original_ns").get<double>(), 0);
    EXPECT_GT(l.at("rewrite_ns").get<double>(), 0);
    EXPECT_TRUE(l.at("change_pct").is_number());
    EXPECT_TRUE(l.contains("shape"));
  }
  EXPECT_NE(j.at("latency_note").get<std::string>().find("not a reason to reject"),
            std::string::npos);
}

// One shape pinned (no other checked shapes, no mid-size one): the text form stays cheap.
TEST(CliAdopt, TextEndsWithTheVerdictAndSaysLatencyDoesNotReject) {
  const CliResult r = run_cli(with({"adopt", "sd_attention", "sd_attention_step1", "--param",
                                    "seqlen=128", "--param", "d_head=64"},
                                   kFp32NoMask));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("\nverdict: adopt\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a reason to reject"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("reason: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mid-size"), std::string::npos) << r.out;
}

// An unknown names its real cause: with the terms held to 16 MiB the overflow obligation was never
// looked at, and the reason says so instead of calling it not discharged.
TEST(CliAdopt, AnUnknownSaysTheOverflowWasNotCheckedWhereTheTermsWereNotBuilt) {
  const CliResult r =
      run_cli(with({"adopt", "sd_attention_step3", "sd_attention_step4", "--param", "seqlen=128",
                    "--param", "d_head=16", "--term-budget-mib", "16"},
                   kFp32NoMask));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("\nverdict: unknown\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exp overflow not checked: the terms were not built"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("not discharged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outgrow 16 MiB at d_head=16 seqlen=128"), std::string::npos) << r.out;
}

// A dumped step 4 adopted --like the tutorial is checked as a rewrite of it: it may round where
// the family rounds (its correct output is far outside the tutorial's own case bound), so its
// check passes; the verdict is the equivalence's to give.
TEST(CliAdopt, FileLikeAFamilyMemberIsCheckedUnderTheFamilysContracts) {
  const CliResult dump = run_cli({"dump", "sd_attention_step4"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  const std::string file = write_temp("adopt_step4.nkir", dump.out).string();
  const CliResult r = run_cli({"adopt", "sd_attention", file, "--like", "sd_attention", "--param",
                               "seqlen=256", "--param", "d_head=64", "--cases", "2", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("check").at("pass").get<bool>()) << j.at("check").dump(2);
}

// The first failing check case gives a replay line, and running it fails the same way; the
// refuted equivalence gives its counterexample and replay line too.
void expect_catalogue_bug_rejected_with_replay_lines(const std::vector<std::string>& pinned) {
  const CliResult r =
      run_cli(with({"adopt", "sd_attention", kBug, "--cases", "2", "--json"}, pinned));
  ASSERT_EQ(r.exit_code, 1) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("verdict"), "reject");
  const std::string reason = j.at("reason");
  EXPECT_NE(reason.find("replay: ncverify check " + std::string(kBug)), std::string::npos)
      << reason;
  EXPECT_FALSE(j.at("check").at("pass").get<bool>());
  EXPECT_EQ(j.at("check").at("cases"), 2);
  EXPECT_EQ(j.at("equiv").at("verdict"), "refuted");
  bool equiv_reason = false;
  for (const auto& why : j.at("reasons")) {
    const std::string s = why;
    equiv_reason = equiv_reason || (s.rfind("equiv refuted", 0) == 0 &&
                                    s.find("replay: ncverify equiv") != std::string::npos);
  }
  EXPECT_TRUE(equiv_reason) << j.at("reasons").dump(2);
  for (const char* key : {"prove", "latency", "latency_note"}) EXPECT_TRUE(j.contains(key)) << key;

  std::string replay;
  for (const auto& run : j.at("check").at("runs")) {
    if (run.contains("replay")) {
      replay = run.at("replay");
      break;
    }
  }
  ASSERT_EQ(replay.rfind("ncverify check ", 0), 0u) << j.at("check").dump(2);
  std::vector<std::string> args;
  for (size_t at = std::string("ncverify ").size(); at < replay.size();) {
    const size_t end = std::min(replay.find(' ', at), replay.size());
    args.push_back(replay.substr(at, end - at));
    at = end + 1;
  }
  const CliResult c = run_cli(args);
  EXPECT_EQ(c.exit_code, 1) << replay << "\n" << describe(c);
  EXPECT_NE(c.out.find("FAIL"), std::string::npos) << c.out;
}

// At one option set and shape in the default tier; at every option set in the deep tier.
TEST(CliAdopt, CatalogueBugIsRejectedWithReplayLines) {
  expect_catalogue_bug_rejected_with_replay_lines(kOneShapeFp32NoMask);
}

TEST(DeepCliAdopt, CatalogueBugIsRejectedWithReplayLines) {
  expect_catalogue_bug_rejected_with_replay_lines({});
}

TEST(CliAdopt, BadInputExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"adopt", "sd_attention", "no_such_kernel"},
      {"adopt", "sd_attention", "sd_attention_step1", "--require", "close-enough"},
      {"adopt", "sd_attention", "sd_attention_step1", "--gen", "trn9"},
      {"adopt", "sd_attention", "sd_attention_step1", "--param", "seqlen=100"},
      {"adopt", "sd_attention", "sd_attention_step1", "--param", "no_such_param=1"},
  };
  for (const auto& args : bad) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << "\n" << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// One link row per rewrite among the report's kernels and per option set of the link (no mask,
// causal), each with its level and a status that follows it. `report_args` selects the kernels.
void expect_a_row_per_link(const std::vector<std::string>& report_args) {
  const CliResult r = run_cli(report_args);
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& row : j.at("checks")) {
    // the family's members are all named sd_attention*
    EXPECT_EQ(row.at("kernel").get<std::string>().rfind("sd_attention", 0), 0u)
        << "--family keeps only that family's kernels: " << row.at("kernel");
  }
  // Every registered variant that rewrites another (the Autocomp chain: steps 1 to 5), once per
  // report option set (no mask, causal).
  std::set<std::string> rewrites;
  for (const auto& row : j.at("checks")) {
    if (!row.at("rewrites").get<std::string>().empty()) rewrites.insert(row.at("kernel"));
  }
  ASSERT_FALSE(rewrites.empty());
  std::multiset<std::string> linked;
  for (const auto& row : j.at("links")) {
    linked.insert(row.at("kernel").get<std::string>());
    for (const char* key :
         {"rewrites", "claim", "level", "bit_exact", "claim_matches", "pass", "status"}) {
      EXPECT_TRUE(row.contains(key)) << key << " " << row.dump();
    }
    const std::string level = row.at("level");
    EXPECT_TRUE(level == "bit-exact proved" || level == "real proved" || level == "refuted" ||
                level == "unknown")
        << level;
    // A link that claims the same numerics is a failing row unless bit-exact is proved.
    if (row.at("claim") == "bit-exact") {
      EXPECT_EQ(row.at("pass").get<bool>(), row.at("bit_exact") == "proved") << row.dump();
    }
    // ok when it passes; FAIL only when contradicted, else UNKNOWN.
    const std::string status = row.at("status");
    if (row.at("pass").get<bool>()) {
      EXPECT_EQ(status, "ok");
    } else {
      EXPECT_EQ(status, level == "refuted" || row.at("bit_exact") == "refuted" ? "FAIL" : "UNKNOWN")
          << row.dump();
    }
  }
  for (const std::string& k : rewrites) EXPECT_EQ(linked.count(k), 2u) << k;
  EXPECT_EQ(j.at("links").size(), 2 * rewrites.size());
  // The exit code still follows `pass`.
  EXPECT_EQ(r.exit_code, j.at("pass").get<bool>() ? 0 : 1) << r.err;
  // `failures` lists exactly the rows that did not pass, each with its reason (report_failures).
  size_t not_passed = 0;
  for (const char* section : {"checks", "links"}) {
    for (const auto& row : j.at(section)) {
      if (row.at("pass").get<bool>()) continue;
      ++not_passed;
      EXPECT_FALSE(row.value("reason", "").empty()) << row.dump();
    }
  }
  for (const auto& row : j.at("proofs")) {
    if (row.at("counterexample") != 0 || row.at("unknown") != 0) ++not_passed;
  }
  EXPECT_EQ(j.at("failures").size(), not_passed) << j.at("failures").dump(1);
  EXPECT_EQ(j.at("pass").get<bool>(), not_passed == 0);
}

// Two kernels of the family (--kernel within --family): a bit-exact link (step 1) and a link
// proved in real arithmetic (step 4).
TEST(CliReport, OneRowPerRewriteLink) {
  // One link (step1's; the whole family is DeepCliReport.OneRowPerRewriteLinkOfTheFamily).
  expect_a_row_per_link({"report", "--seqlen", "128", "--cases", "1", "--family", "sd_attention",
                         "--kernel", "sd_attention_step1", "--json"});
}

// The whole sd_attention family (the attn_fwd chain's links cost minutes of equiv: `ci/report`
// runs them all).
TEST(DeepCliReport, OneRowPerRewriteLinkOfTheFamily) {
  expect_a_row_per_link(
      {"report", "--seqlen", "128", "--cases", "1", "--family", "sd_attention", "--json"});
}

// A kernel with masks beyond causal and GQA: one check row per mask its options offer, at a GQA
// group of 2 and a window of a quarter of the sequence, a logits bias alone and with the causal
// mask, in training mode (the lse checked). `report_args` selects the kernels; a
// pipelined_attention row is one case at seqlen 16384.
void expect_a_row_per_mask(const std::vector<std::string>& report_args) {
  const CliResult r = run_cli(report_args);
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> masks;
  for (const auto& row : j.at("checks")) {
    EXPECT_TRUE(row.at("pass").get<bool>()) << row.dump();
    if (row.at("kernel") == "pipelined_attention") {
      // seqlen 16384 only (--seqlen clamped into its domain), one case: a heavy variant
      EXPECT_EQ(row.at("params").at("seqlen"), 16384) << row.dump();
      EXPECT_EQ(row.at("cases").size(), 1u) << row.dump();
      continue;
    }
    EXPECT_EQ(row.at("kernel"), "flash_fwd");
    const std::string mask = row.at("mask");
    masks.insert(mask);
    EXPECT_EQ(row.at("params").at("group"), 2) << row.dump();
    // Training mode where offered: each row compares the stored log-sum-exp too.
    EXPECT_EQ(row.at("options").at("training"), "true") << row.dump();
    EXPECT_TRUE(row.at("cases").at(0).contains("lse_comparison")) << row.dump();
    if (mask == "window") {
      EXPECT_EQ(row.at("params").at("window"), 128) << row.dump();
    }
    EXPECT_EQ(row.at("options").at("logit_bias"),
              mask.find("bias") != std::string::npos ? "true" : "false")
        << row.dump();
  }
  EXPECT_EQ(masks, (std::set<std::string>{"none", "causal", "window", "bias", "causal+bias"}));
  EXPECT_TRUE(j.at("links").empty()) << "flash_fwd and pipelined_attention rewrite nothing";
}

TEST(CliReport, ChecksEveryMaskAKernelOffers) {
  expect_a_row_per_mask(
      {"report", "--seqlen", "512", "--cases", "1", "--kernel", "flash_fwd", "--json"});
}

// The whole family, with pipelined_attention's row (a minute of check).
TEST(DeepCliReport, ChecksEveryMaskOfTheFamily) {
  expect_a_row_per_mask(
      {"report", "--seqlen", "512", "--cases", "1", "--family", "flash_attention", "--json"});
}

TEST(CliReport, UnknownFamilyExitsTwoNamingIt) {
  const CliResult r = run_cli({"report", "--family", "no_such_family"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no registered kernel has family 'no_such_family'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ncv::cli_test
