// Runs the built `ncverify` binary the way a user or CI does and checks the exit-code contract
// (0 pass, 1 dynamic-check failure, 2 bad usage or input) and what the messages say.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/ir/printer.h"
#include "model/nkir/parse.h"
#include "tools/tests/cli_test_support.h"

namespace {

const std::string kExamples = NCV_EXAMPLES_DIR;
const std::string kData = NCV_CLI_TEST_DATA_DIR;
const std::string kMatmul = kExamples + "/tiled_matmul.nkir";
const std::string kSoftmax = kExamples + "/softmax_qkv_one_tile.nkir";
const std::string kOobCopy = kData + "/oob_copy.nkir";

using namespace ncv::cli_test;  // NOLINT: the shared CLI runner

// Plain string scanning rather than <regex>: GCC 12's -Wmaybe-uninitialized misfires inside
// <regex> under the asan preset (warnings are errors there).

// The first line of `text` that starts with `prefix`, without its newline; "" if none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    if (text.compare(pos, prefix.size(), prefix) == 0) return text.substr(pos, end - pos);
    pos = end + 1;
  }
  return "";
}

bool all_of_class(const std::string& s, const char* chars) {
  return !s.empty() && s.find_first_not_of(chars) == std::string::npos;
}

// `key=VALUE` in a space-separated line; "" if absent.
std::string field(const std::string& line, const std::string& key) {
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 2;
  return line.substr(begin, line.find(' ', begin) - begin);
}

std::string checksum_of(const std::string& out, const std::string& output_name) {
  const std::string c = field(line_starting(out, "output " + output_name + ": "), "checksum");
  return c.size() == 16 && all_of_class(c, "0123456789abcdef") ? c : "";
}

// True when `text` contains "NAME:LINE:COL: " with LINE (if given) and COL decimal numbers.
bool has_file_line_col(const std::string& text, const std::string& name, int line = -1) {
  for (size_t at = text.find(name + ":"); at != std::string::npos;
       at = text.find(name + ":", at + 1)) {
    size_t pos = at + name.size() + 1;
    const size_t line_end = text.find(':', pos);
    if (line_end == std::string::npos) return false;
    const std::string l = text.substr(pos, line_end - pos);
    const size_t col_end = text.find(": ", line_end + 1);
    if (col_end == std::string::npos) return false;
    const std::string c = text.substr(line_end + 1, col_end - line_end - 1);
    if (all_of_class(l, "0123456789") && all_of_class(c, "0123456789") &&
        (line < 0 || l == std::to_string(line))) {
      return true;
    }
  }
  return false;
}

const std::vector<std::string> kMatmulParams = {"--param", "M=256",   "--param",
                                                "N=512",   "--param", "K=256"};

std::vector<std::string> run_args(const std::string& file, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", file};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---------------------------------------------------------------------------------------------
// Usage

TEST(CliUsage, HelpListsSubcommandsAndExitsZero) {
  const CliResult r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("run"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("dump"), std::string::npos) << describe(r);
}

TEST(CliUsage, RunHelpDocumentsFlagsAndExitCodes) {
  const CliResult r = run_cli({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* flag : {"--param", "--seed", "--gen", "--json", "--reference", "Exit codes"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << "\n" << describe(r);
  }
}

TEST(CliUsage, NoSubcommandIsUsageError) {
  const CliResult r = run_cli({});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
}

TEST(CliUsage, UnknownSubcommandIsUsageError) {
  const CliResult r = run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << describe(r);
}

TEST(CliUsage, RunWithoutKernelIsUsageError) {
  const CliResult r = run_cli({"run"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("kernel is required"), std::string::npos) << describe(r);
}

// ---------------------------------------------------------------------------------------------
// run on the examples

TEST(CliRun, TiledMatmulExampleRuns) {
  const CliResult r = run_cli(run_args(kMatmul, kMatmulParams));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("kernel: tiled_matmul"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("params: K=256 M=256 N=512"), std::string::npos) << describe(r);
  const std::string instances = line_starting(r.out, "instances: ").substr(11);
  EXPECT_TRUE(all_of_class(instances, "0123456789") && instances != "0") << describe(r);
  const std::string c = line_starting(r.out, "output C: shape=[256, 512] dtype=fp32 ");
  ASSERT_NE(c, "") << describe(r);
  EXPECT_NE(checksum_of(r.out, "C"), "") << describe(r);
  EXPECT_TRUE(all_of_class(field(c, "min"), "0123456789.e+-")) << c;
  EXPECT_TRUE(all_of_class(field(c, "max"), "0123456789.e+-")) << c;
  EXPECT_EQ(field(c, "nan"), "0") << c;
  EXPECT_NE(r.out.find("result: ok"), std::string::npos) << describe(r);
}

TEST(CliRun, SoftmaxExampleRunsWithoutNaN) {
  const CliResult r = run_cli(run_args(kSoftmax, {"--param", "d=64"}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string o = line_starting(r.out, "output O: shape=[128, 64] ");
  ASSERT_NE(o, "") << describe(r);
  EXPECT_EQ(field(o, "nan"), "0") << o;
  EXPECT_NE(r.out.find("result: ok"), std::string::npos) << describe(r);
}

TEST(CliRun, SameSeedSameOutputDifferentSeedDifferentOutput) {
  const CliResult a = run_cli(run_args(kMatmul, with(kMatmulParams, {"--seed", "7"})));
  const CliResult b = run_cli(run_args(kMatmul, with(kMatmulParams, {"--seed", "7"})));
  const CliResult c = run_cli(run_args(kMatmul, with(kMatmulParams, {"--seed", "8"})));
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(checksum_of(a.out, "C"), "");
  EXPECT_NE(checksum_of(a.out, "C"), checksum_of(c.out, "C")) << describe(c);
}

TEST(CliRun, ReferenceModeGivesTheSameBits) {
  for (const auto& [file, params] :
       {std::pair{kMatmul, kMatmulParams},
        std::pair{kSoftmax, std::vector<std::string>{"--param", "d=64"}}}) {
    const CliResult fast = run_cli(run_args(file, params));
    const CliResult ref = run_cli(run_args(file, with(params, {"--reference"})));
    ASSERT_EQ(fast.exit_code, 0) << describe(fast);
    ASSERT_EQ(ref.exit_code, 0) << describe(ref);
    EXPECT_NE(ref.out.find("mode: reference"), std::string::npos) << describe(ref);
    const std::string name = file == kMatmul ? "C" : "O";
    EXPECT_EQ(checksum_of(fast.out, name), checksum_of(ref.out, name)) << file;
  }
}

TEST(CliRun, OtherGenerationsRun) {
  for (const char* gen : {"trn2", "trn3"}) {
    const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--gen", gen})));
    EXPECT_EQ(r.exit_code, 0) << gen << "\n" << describe(r);
    EXPECT_NE(r.out.find(std::string("gen: ") + gen), std::string::npos) << describe(r);
  }
}

TEST(CliRun, JsonHasTheSameFields) {
  const CliResult text = run_cli(run_args(kMatmul, kMatmulParams));
  const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--json"})));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("kernel"), "tiled_matmul");
  EXPECT_EQ(j.at("params").at("M"), 256);
  EXPECT_EQ(j.at("gen"), "trn1");
  EXPECT_EQ(j.at("mode"), "fast");
  EXPECT_EQ(j.at("seed"), 0);
  EXPECT_GT(j.at("instances").get<uint64_t>(), 0u);
  EXPECT_EQ(j.at("result"), "ok");
  EXPECT_TRUE(j.at("error").is_null());
  ASSERT_EQ(j.at("outputs").size(), 1u);
  const auto& c = j.at("outputs")[0];
  EXPECT_EQ(c.at("name"), "C");
  EXPECT_EQ(c.at("shape"), nlohmann::json::array({256, 512}));
  EXPECT_EQ(c.at("dtype"), "fp32");
  EXPECT_EQ(c.at("checksum"), checksum_of(text.out, "C"));
  EXPECT_TRUE(c.at("min").is_number());
  EXPECT_TRUE(c.at("max").is_number());
  EXPECT_EQ(c.at("nan_count"), 0);
}

// ---------------------------------------------------------------------------------------------
// Dynamic-check failures exit 1

TEST(CliRun, AccessOffTheEndFailsTheDynamicCheck) {
  const CliResult ok = run_cli(run_args(kOobCopy, {"--param", "N=512"}));
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);

  const CliResult r = run_cli(run_args(kOobCopy, {"--param", "N=256"}));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("result: dynamic-check failure (out_of_bounds)"), std::string::npos)
      << describe(r);
  EXPECT_NE(r.out.find("error: "), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("oob_copy"), std::string::npos) << describe(r);

  const CliResult j = run_cli(run_args(kOobCopy, {"--param", "N=256", "--json"}));
  EXPECT_EQ(j.exit_code, 1) << describe(j);
  const nlohmann::json parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed.at("result"), "dynamic_check_failure");
  EXPECT_EQ(parsed.at("error").at("kind"), "out_of_bounds");
  EXPECT_FALSE(parsed.at("error").at("message").get<std::string>().empty());
}

// A reciprocal of zero (outside the activation's documented range) in rows 64..127 of a tile:
// with only rows 0..63 stored the run is ok with a note, in text and JSON; with all rows stored
// the output depends on the value the hardware gives there, an undefined result (exit 1).
TEST(CliRun, ActivationOutsideItsRangeIsANoteOrAnUndefinedResult) {
  auto kernel = [](int rows) {
    const std::string r = std::to_string(rows);
    return write_temp("act_range_" + r + ".nkir",
                      "kernel act_range\n"
                      "input x : hbm fp32 [64, 4]\n"
                      "output y : hbm fp32 [" +
                          r +
                          ", 4]\n"
                          "buffer t : sbuf fp32 [128, 4]\n"
                          "buffer u : sbuf fp32 [128, 4]\n"
                          "memset t[:, :], value=-3\n"
                          "dma_copy t[0:+64, :], x[:, :]\n"
                          "activation u[:, :], t[:, :], func=reciprocal, bias=3\n"
                          "dma_copy y[:, :], u[0:+" +
                          r + ", :], queue=1\n")
        .string();
  };
  const std::string padding = kernel(64), reaching = kernel(128);
  const CliResult ok = run_cli(run_args(padding, {}));
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_NE(ok.out.find("note: an activation input is outside its function's documented range, "
                        "and no output depends on the value the hardware gives there"),
            std::string::npos)
      << describe(ok);
  const CliResult okj = run_cli(run_args(padding, {"--json"}));
  ASSERT_EQ(okj.exit_code, 0) << describe(okj);
  const nlohmann::json j = nlohmann::json::parse(okj.out);
  EXPECT_EQ(j.at("result"), "ok");
  EXPECT_EQ(j.at("undefined_activation").at("kind"), "undefined_result");
  EXPECT_NE(j.at("undefined_activation").at("detail").get<std::string>().find("reciprocal"),
            std::string::npos);
  const CliResult bad = run_cli(run_args(reaching, {"--json"}));
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  const nlohmann::json b = nlohmann::json::parse(bad.out);
  EXPECT_EQ(b.at("error").at("kind"), "undefined_result");
  EXPECT_TRUE(b.at("undefined_activation").is_null());
}

// ---------------------------------------------------------------------------------------------
// Bad input exits 2 with a message naming the file or flag

TEST(CliBadInput, MissingFile) {
  const std::string missing = (temp_dir() / "does_not_exist.nkir").string();
  const CliResult r = run_cli(run_args(missing, {}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("'" + missing + "' is neither a registered kernel"), std::string::npos)
      << describe(r);
}

TEST(CliBadInput, DirectoryInsteadOfFile) {
  const CliResult r = run_cli({"dump", temp_dir().string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("directory"), std::string::npos) << describe(r);
}

TEST(CliBadInput, MalformedProgramReportsFileLineColumn) {
  const fs::path bad = write_temp("malformed.nkir", "kernel k\nparam N in [1, 4]\n\nfor ) {\n");
  for (const char* cmd : {"run", "dump"}) {
    const CliResult r = run_cli({cmd, bad.string()});
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << describe(r);
    EXPECT_TRUE(has_file_line_col(r.err, "malformed.nkir", 4)) << cmd << "\n" << describe(r);
  }
}

TEST(CliBadInput, GarbageBytesAreAParseError) {
  const fs::path bad = write_temp("garbage.nkir", std::string("\x01\xff\x00kernel", 9));
  const CliResult r = run_cli({"dump", bad.string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(has_file_line_col(r.err, "garbage.nkir")) << describe(r);
}

TEST(CliBadInput, StaticRuleViolationReportsFileLineColumn) {
  // A buffer of 256 partitions breaks the 128-partition rule.
  const fs::path bad = write_temp("too_many_partitions.nkir",
                                  "kernel k\n"
                                  "input X : hbm fp32 [256, 4]\n"
                                  "output Y : hbm fp32 [256, 4]\n"
                                  "\n"
                                  "buffer t : sbuf fp32 [256, 4]\n"
                                  "dma_copy t[:, :], X[:, :]\n"
                                  "dma_copy Y[:, :], t[:, :]\n");
  const CliResult r = run_cli(run_args(bad.string(), {}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(has_file_line_col(r.err, "too_many_partitions.nkir")) << describe(r);
}

TEST(CliBadInput, UnknownParam) {
  const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--param", "Z=3"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("unknown param 'Z'"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("tiled_matmul.nkir"), std::string::npos) << describe(r);
}

TEST(CliBadInput, ParamOutsideTheDomain) {
  // M must be a multiple of 128; 0 is also below the range.
  for (const char* bad : {"M=100", "M=0", "M=1000000000"}) {
    const CliResult r =
        run_cli(run_args(kMatmul, {"--param", bad, "--param", "N=512", "--param", "K=256"}));
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << describe(r);
    EXPECT_NE(r.err.find("tiled_matmul.nkir"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("M"), std::string::npos) << describe(r);
  }
}

TEST(CliBadInput, RunsOverTheMemoryBudgetAreRefused) {
  // M = N = K = 4096: about 160 MiB of HBM tensors, over a 16 MiB budget, under the default.
  const std::vector<std::string> big = {"--param", "M=4096",  "--param",
                                        "N=4096",  "--param", "K=4096"};
  CliResult r = run_cli(run_args(kMatmul, with(big, {"--memory-budget-mib", "16"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("budget"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("tiled_matmul.nkir"), std::string::npos) << describe(r);
  r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--memory-budget-mib", "0"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
}

TEST(CliBadInput, MissingParam) {
  const CliResult r = run_cli(run_args(kMatmul, {"--param", "M=256", "--param", "N=512"}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("K"), std::string::npos) << describe(r);
}

TEST(CliBadInput, MalformedParamFlag) {
  for (const char* bad : {"M256", "M=", "=256", "M=abc", "M=2.5", "M=12x", "1M=3"}) {
    const CliResult r = run_cli(run_args(kMatmul, {"--param", bad}));
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << describe(r);
    EXPECT_NE(r.err.find("malformed --param '" + std::string(bad) + "'"), std::string::npos)
        << describe(r);
    EXPECT_NE(r.err.find("NAME=INTEGER"), std::string::npos) << describe(r);
  }
}

TEST(CliBadInput, ParamGivenTwice) {
  const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--param", "M=128"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("'M' given more than once"), std::string::npos) << describe(r);
}

TEST(CliBadInput, UnknownGeneration) {
  const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--gen", "trn9"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("unknown --gen 'trn9'"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("trn1"), std::string::npos) << describe(r);
}

TEST(CliBadInput, BadSeed) {
  const CliResult r = run_cli(run_args(kMatmul, with(kMatmulParams, {"--seed", "abc"})));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("--seed"), std::string::npos) << describe(r);
}

// ---------------------------------------------------------------------------------------------
// dump

TEST(CliDump, OutputReparsesToTheSameText) {
  for (const std::string& file : {kMatmul, kSoftmax, kOobCopy}) {
    const CliResult first = run_cli({"dump", file});
    ASSERT_EQ(first.exit_code, 0) << file << "\n" << describe(first);
    EXPECT_EQ(first.out, ncv::print_program(ncv::parse_program(read_file(file), file)));
    const fs::path again = write_temp("dumped.nkir", first.out);
    const CliResult second = run_cli({"dump", again.string()});
    ASSERT_EQ(second.exit_code, 0) << describe(second);
    EXPECT_EQ(first.out, second.out) << file;
    EXPECT_EQ(ncv::parse_program(first.out), ncv::parse_program(read_file(file), file)) << file;
  }
}

// ---------------------------------------------------------------------------------------------
// timing workloads by name

// `list --workloads` names every timing workload; run, bench and dump take one by name with its
// params, check refuses it (no attention problem or contract), and a param it does not declare
// exits 2 naming it.
TEST(CliWorkloads, RunBenchAndDumpTakeAWorkloadByName) {
  const CliResult l = run_cli({"list", "--workloads", "--json"});
  ASSERT_EQ(l.exit_code, 0) << describe(l);
  bool anchor = false;
  for (const auto& w : nlohmann::json::parse(l.out)) {
    anchor = anchor || w.at("name") == "vector_tensor_tensor_anchor";
  }
  EXPECT_TRUE(anchor) << l.out;
  const std::vector<std::string> gemm = {"-p", "K=256", "-p", "M=128", "-p", "N=512"};
  const CliResult b = run_cli(with({"bench", "gemm_autocomp_c0", "--json"}, gemm));
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  EXPECT_GT(nlohmann::json::parse(b.out).at("latency_us").get<double>(), 0.0);
  const CliResult r = run_cli({"run", "vector_tensor_tensor_anchor", "-p", "P=4", "-p", "N=8"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const CliResult d = run_cli({"dump", "mamba_tutorial_v1"});
  ASSERT_EQ(d.exit_code, 0) << describe(d);
  EXPECT_NO_THROW(ncv::parse_program(d.out));
  const CliResult c = run_cli(with({"check", "gemm_autocomp_c0"}, gemm));
  EXPECT_EQ(c.exit_code, 2) << describe(c);
  EXPECT_NE(c.err.find("is a timing workload"), std::string::npos) << describe(c);
  const CliResult bad =
      run_cli({"bench", "gemm_autocomp_c0", "-p", "K=256", "-p", "M=128", "-p", "X=512"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("unknown param 'X'"), std::string::npos) << describe(bad);
}

}  // namespace
