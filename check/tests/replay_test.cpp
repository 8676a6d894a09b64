// The replay line's builder (check/replay.h) in process: its quoting survives a real shell word for
// word, and the line repeats what the check was given without giving a name twice. The lines run
// end to end (each reproducing its case) in tools/tests/cli_replay_test.cpp.
#include "check/replay.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace ncv::kernels {
namespace {

// The words /bin/sh makes of `line` (each printed NUL-terminated by printf).
std::vector<std::string> shell_words(const std::string& line) {
  const std::string cmd = "printf '%s\\0' " + line;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  if (pipe == nullptr) return {};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  std::vector<std::string> words;
  for (size_t at = 0; at < out.size();) {
    const size_t end = out.find('\0', at);
    words.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

TEST(ShellQuote, EveryWordReachesTheProgramAsItWas) {
  const std::vector<std::string> words = {
      "plain",
      "--param",
      "cfg=AttnTKGConfig(4, 1, 5, 18432, 24576, 128, 0, tp_k_prior=True)",
      "q=bf16[1,32,128]",
      "note=\"double\" and 'single' quotes",
      "$HOME `id` $(id) \\ ; & | < > * ? ~ # !",
      "",
      "tab\there\nnewline",
      "off by one.nkir"};
  EXPECT_EQ(shell_words(shell_join(words)), words);
  EXPECT_EQ(shell_quote("seqlen=128"), "seqlen=128") << "a plain word stays readable";
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(CheckReplayWords, AFileRepeatsItsParamsOnceAndItsKeywordArgumentsAsGiven) {
  CheckInvocation inv;
  inv.target = "k.py:attn";
  inv.like = "sd_attention";
  inv.assignments = {"seqlen=128", "use_causal_mask=true", "cfg=Cfg(1, 2)"};
  inv.inputs = {"q=bf16[1,32,128]"};
  inv.grid = "bs";
  CaseResult c;
  c.distribution = "peaked";
  c.seed = 3;
  c.exact_oracle = true;
  const std::vector<std::string> w = check_replay_words(
      inv, {{"use_causal_mask", "true"}, {"dtype", "fp32"}}, {{"d_head", 32}, {"seqlen", 128}}, c);
  const std::vector<std::string> want = {
      "check",     "k.py:attn",     "--like",     "sd_attention",     "--param",
      "d_head=32", "--param",       "seqlen=128", "--param",          "use_causal_mask=true",
      "--param",   "cfg=Cfg(1, 2)", "--input",    "q=bf16[1,32,128]", "--grid",
      "bs",        "--dist",        "peaked",     "--seed",           "3"};
  EXPECT_EQ(w, want) << "a file's options are its own: only the given ones are repeated";
}

TEST(CheckReplayWords, ARegisteredKernelGivesEveryOptionAndTheOracleAndRecipeOfItsCase) {
  CheckInvocation inv;
  inv.target = "sd_attention";
  inv.rebuilds = true;
  inv.assignments = {"dtype=bf16"};
  inv.determinism_runs = 1;
  inv.default_determinism_runs = 10;
  CaseResult c;
  c.distribution = "normal:s=-3:seed=17";
  c.exact_oracle = false;
  const std::vector<std::string> w = check_replay_words(
      inv, {{"dtype", "bf16"}, {"use_causal_mask", "false"}}, {{"seqlen", 256}}, c);
  const std::vector<std::string> want = {"check",
                                         "sd_attention",
                                         "--param",
                                         "seqlen=256",
                                         "--param",
                                         "dtype=bf16",
                                         "--param",
                                         "use_causal_mask=false",
                                         "--determinism-runs",
                                         "1",
                                         "--oracle",
                                         "fast",
                                         "--values",
                                         "normal:s=-3:seed=17"};
  EXPECT_EQ(w, want);
}

}  // namespace
}  // namespace ncv::kernels
