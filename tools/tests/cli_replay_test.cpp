// Every replay line `check` prints (text `replay:` and JSON `worst_case_replay`) re-runs the case
// it came from: each is run through /bin/sh as printed (the built binary in place of `ncverify`)
// and must give the same verdict, oracle, worst element and normalized error, to the bit. One
// kernel of each kind: a catalogue bug in a registered kernel (a sweep whose worst case the sweep
// judged against the fast oracle, at a size where a pinned check uses the exact one), an NKI
// kernel with keyword arguments (one a config object whose text has spaces, parentheses,
// brackets, quotes and a $), --input and --grid, and a .nkir file without an options line, its
// options given by --param, checked --like a kernel and with --layout/--contract.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

std::vector<std::string> printed_replays(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  const std::string tag = "  replay: ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(tag, 0) == 0) lines.push_back(line.substr(tag.size()));
  }
  return lines;
}

// The case of a check's JSON (a pinned check's `cases`, or those of each sweep run) with these
// params, options, distribution and seed; null when there is none.
const nlohmann::json* find_case(const nlohmann::json& j, const nlohmann::json& replayed) {
  const nlohmann::json& rc = replayed.at("cases").at(0);
  const auto in = [&](const nlohmann::json& result) -> const nlohmann::json* {
    if (result.at("params") != replayed.at("params") ||
        result.at("options") != replayed.at("options")) {
      return nullptr;
    }
    for (const nlohmann::json& c : result.at("cases")) {
      if (c.at("distribution") == rc.at("distribution") && c.at("seed") == rc.at("seed")) return &c;
    }
    return nullptr;
  };
  if (!j.contains("runs")) return in(j);
  for (const nlohmann::json& run : j.at("runs")) {
    if (const nlohmann::json* c = in(run)) return c;
  }
  return nullptr;
}

// Runs `check args` as text and as JSON, then the replay line both print through /bin/sh, and
// asserts that it reproduces the worst case. Returns the replay line.
std::string expect_replay_reproduces(const std::vector<std::string>& args, const fs::path& cwd) {
  std::vector<std::string> check = {"check"};
  check.insert(check.end(), args.begin(), args.end());
  const CliResult text = run_cli(check, cwd);
  check.push_back("--json");
  const CliResult json = run_cli(check, cwd);
  EXPECT_EQ(text.exit_code, 1) << "the planted bug fails\n" << describe(text);
  EXPECT_EQ(json.exit_code, text.exit_code) << describe(json);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const std::vector<std::string> lines = printed_replays(text.out);
  EXPECT_EQ(lines.size(), 1u) << text.out;
  if (lines.empty() || !j.contains("worst_case_replay")) {
    ADD_FAILURE() << "no replay line\n" << text.out << json.out;
    return "";
  }
  const std::string line = j.at("worst_case_replay");
  EXPECT_EQ(lines.front(), line) << "text and JSON name the same replay";
  const std::string program = "ncverify ";
  EXPECT_EQ(line.rfind(program, 0), 0u) << line;
  // As a user pastes it: the shell splits and unquotes the words.
  const CliResult r = run_command(
      "/bin/sh",
      {"-c", shell_quote(NCVERIFY_BINARY) + " " + line.substr(program.size()) + " --json"}, cwd);
  EXPECT_EQ(r.exit_code, text.exit_code) << line << "\n" << describe(r);
  const nlohmann::json replayed = nlohmann::json::parse(r.out, nullptr, false);
  if (replayed.is_discarded() || !replayed.contains("cases") || replayed.at("cases").size() != 1) {
    ADD_FAILURE() << "the replay is not one case: " << line << "\n" << describe(r);
    return line;
  }
  const nlohmann::json* original = find_case(j, replayed);
  if (original == nullptr) {
    ADD_FAILURE() << "the replay ran a case the check did not: " << line << "\n" << r.out;
    return line;
  }
  const nlohmann::json& rc = replayed.at("cases").at(0);
  EXPECT_EQ(rc.at("verdict"), original->at("verdict")) << line;
  EXPECT_EQ(rc.at("oracle"), original->at("oracle")) << line;
  // The same worst element with the same value, oracle value and bound, and the same ratio.
  EXPECT_EQ(rc.at("comparison").at("worst"), original->at("comparison").at("worst")) << line;
  EXPECT_EQ(rc.at("case_bound_ratio"), original->at("case_bound_ratio")) << line;
  // A file checked --like: the same options from the same sources (check/like_contract.h).
  if (j.contains("contract_used")) {
    EXPECT_EQ(replayed.value("contract_used", nlohmann::json()), j.at("contract_used")) << line;
  }
  return line;
}

// (a) A registered kernel with a planted bug (catalogue entry row_max_subset_tiles), swept over
// seqlen: its worst case is at seqlen 256, d_head 2, which the sweep judges against the fast
// oracle (exact only up to 1e5 multiply-adds) and a pinned check against the exact one
// (up to 4e6): the replay says --oracle fast.
TEST(CheckReplay, ARegisteredKernelsSweepReplaysItsWorstCase) {
  const std::string line = expect_replay_reproduces(
      {"row_max_subset_tiles", "--cases", "1", "--budget-s", "1", "--param", "d_head=2", "--param",
       "dtype=fp32", "--param", "mixed_precision=true", "--param", "use_causal_mask=true"},
      {});
  EXPECT_NE(line.find("--param use_causal_mask=true"), std::string::npos) << line;
}

// `bugs --gate` names each entry's first failing case by the check that replays it: run as
// printed, it fails with the same normalized error.
TEST(CheckReplay, TheGatesFirstFailingCaseReplays) {
  // The gate stops at the entry's first failing case (a third of a second): a budget of one
  // second made the test depend on how loaded the machine was.
  const CliResult gate =
      run_cli({"bugs", "--gate", "--only", "row_max_subset_tiles", "--budget-s", "60", "--json"});
  ASSERT_EQ(gate.exit_code, 0) << describe(gate);
  const std::string where =
      nlohmann::json::parse(gate.out).at("catalogue").at(0).at("first_failure");
  const size_t why = where.rfind(" (max|err|/bound ");
  ASSERT_NE(why, std::string::npos) << where;
  const std::string line = where.substr(0, why), program = "ncverify ";
  ASSERT_EQ(line.rfind(program, 0), 0u) << line;
  const CliResult r = run_command(
      "/bin/sh", {"-c", shell_quote(NCVERIFY_BINARY) + " " + line.substr(program.size())});
  EXPECT_EQ(r.exit_code, 1) << line << "\n" << describe(r);
  // "(FAIL, max|err|/bound R)" on the worst-case line, R as the gate printed it.
  EXPECT_NE(r.out.find("FAIL, " + where.substr(why + 2)), std::string::npos) << where << "\n"
                                                                             << r.out;
}

// (b) An NKI kernel: sd_attention_batched of the rendition with a config object whose shift
// (the planted bug: each query sees one key past the diagonal) applies only under the causal
// mask (at the default MaskCfg() the kernel is the rendition, which passes). Without --grid the
// line does not run; without cfg or use_causal_mask it would pass.
TEST(CheckReplay, AnNkiKernelsReplayKeepsItsKeywordArgumentsInputsAndGrid) {
  std::string text = read_file(fs::path(NCV_FRONTEND_KERNELS_DIR) / "sd_attention_rendition.py");
  const auto replace = [&text](const std::string& from, const std::string& to, bool last) {
    const size_t at = last ? text.rfind(from) : text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("TILE = 128\n",
          "TILE = 128\n\n\nclass MaskCfg:\n    def __init__(self, shift=0, note=\"\"):\n"
          "        self.shift = shift\n        self.note = note\n",
          false);
  replace("pe, use_causal_mask):", "pe, use_causal_mask, shift=0):", false);
  replace("pred=(qi * TILE + row >=", "pred=(qi * TILE + row + shift >=", false);
  replace("def sd_attention_batched(q, k, v, use_causal_mask=False, mixed_precision=True):",
          "def sd_attention_batched(q, k, v, use_causal_mask=False, mixed_precision=True, "
          "cfg=MaskCfg()):",
          false);
  replace("kd, pe, use_causal_mask)", "kd, pe, use_causal_mask, cfg.shift)", true);
  const fs::path dir = temp_dir() / "replay_nki";
  fs::create_directories(dir);
  std::ofstream(dir / "shifted.py") << text;
  const std::string cfg = "cfg=MaskCfg(1, note=\"a (b) [c] 'd' $HOME\")";
  const std::vector<std::string> given = {"shifted.py:sd_attention_batched",
                                          "--like",
                                          "sd_attention_batched",
                                          "--grid",
                                          "bs",
                                          "--input",
                                          "q=fp32[bs,d_head,seqlen]",
                                          "--param",
                                          "bs=1",
                                          "--param",
                                          "seqlen=128",
                                          "--param",
                                          "d_head=32",
                                          "--param",
                                          "use_causal_mask=true",
                                          "--param",
                                          "mixed_precision=false",
                                          "--param",
                                          cfg,
                                          "--cases",
                                          "1"};
  const std::string line = expect_replay_reproduces(given, dir);
  // Quoted for the shell: the config's text reaches the tracer as given.
  EXPECT_NE(line.find("--param 'cfg=MaskCfg(1, note=\"a (b) [c] '\\''d'\\'' $HOME\")'"),
            std::string::npos)
      << line;
}

// (d) An NKI kernel checked --like a kernel whose default contract is not the program's: the
// all-fp32 rendition (no mixed_precision argument) with every output 2^-15 too large fails under
// the fp32 contract its program shows (mixed_precision=false derived, not sd_attention's default
// true, whose bf16 bound passes this case); the replay derives the same contract and fails alike.
TEST(CheckReplay, AKernelCheckedLikeReplaysUnderTheContractItWasJudgedBy) {
  std::string text = read_file(fs::path(NCV_FRONTEND_KERNELS_DIR) / "sd_attention_rendition.py");
  const std::string scaled = "o_scaled = o * nisa.nc_transpose(divisor)";
  ASSERT_NE(text.find(scaled), std::string::npos);
  text.replace(text.find(scaled), scaled.size(), scaled + " * 1.000030517578125");
  const fs::path dir = temp_dir() / "replay_like";
  fs::create_directories(dir);
  std::ofstream(dir / "sloppy.py") << text;
  const std::string line =
      expect_replay_reproduces({"sloppy.py:sd_attention_fp32", "--like", "sd_attention", "--param",
                                "seqlen=128", "--param", "d_head=16", "--cases", "1"},
                               dir);
  // The derived option is not in the line: the replay derives it again from the same program.
  EXPECT_EQ(line.find("mixed_precision"), std::string::npos) << line;
}

// (c) A .nkir file without an options line (causal_mask_off_by_one dumped at use_causal_mask=true,
// its `options` line removed): its options are --param's, checked --like sd_attention and with
// --layout/--contract, --contract-option and the problem's flags.
TEST(CheckReplay, ANkirFilesReplayKeepsItsOptionsLayoutAndContract) {
  const fs::path dir = temp_dir() / "replay_nkir";
  fs::create_directories(dir);
  const CliResult dump =
      run_cli({"dump", "causal_mask_off_by_one", "--param", "use_causal_mask=true"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  std::istringstream in(dump.out);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("options ", 0) != 0) kept += line + "\n";
  }
  ASSERT_NE(kept.size(), dump.out.size()) << "the dump records its options";
  std::ofstream(dir / "off by one.nkir") << kept;
  const std::vector<std::string> shape = {"--param",  "seqlen=128", "--param",
                                          "d_head=4", "--cases",    "1"};
  std::vector<std::string> like = {"off by one.nkir", "--like", "sd_attention", "--param",
                                   "use_causal_mask=true"};
  like.insert(like.end(), shape.begin(), shape.end());
  expect_replay_reproduces(like, dir);
  std::vector<std::string> layout = {"off by one.nkir",
                                     "--layout",
                                     "sd_attention",
                                     "--contract",
                                     "sd_attention",
                                     "--contract-option",
                                     "use_causal_mask=true",
                                     "--contract-option",
                                     "mixed_precision=true",
                                     "--contract-option",
                                     "dtype=fp32",
                                     "--causal",
                                     "--scale",
                                     "0.125"};
  layout.insert(layout.end(), shape.begin(), shape.end());
  expect_replay_reproduces(layout, dir);
}

}  // namespace
}  // namespace ncv::cli_test
