// A traced kernel checked `--like K` is judged under the options its program shows, not K's
// defaults taken unseen (check/like_contract.h): an all-fp32 kernel --like sd_attention (default
// mixed_precision=true: bf16 Tensor-engine operands) gets the fp32 contract, a bf16 one the bf16
// contract, each option's source is printed (text and JSON), a default that contradicts the
// program and an option neither K nor the kernel has are exit 2, and an on/off option's value
// parses the same (false, False, 0) with and without --like. Through the binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

std::string rendition(const std::string& function) {
  return (kKernels / "sd_attention_rendition.py").string() + ":" + function;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One tile, one case: each check below is one trace and one small run.
const std::vector<std::string> kSmall = {"--param",   "seqlen=128", "--param",
                                         "d_head=16", "--cases",    "1"};

nlohmann::json check_json(const std::vector<std::string>& args, int exit_code = 0) {
  const CliResult r = run_cli(cat(cat({"check"}, args), {"--json"}));
  EXPECT_EQ(r.exit_code, exit_code) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

// The source ("given", "derived", "default", ...) the JSON names for option `name`.
std::string source_of(const nlohmann::json& j, const std::string& name) {
  for (const nlohmann::json& s : j.value("contract_used", nlohmann::json::object())
                                     .value("sources", nlohmann::json::array())) {
    if (s.at("name") == name) return s.at("from");
  }
  return "(none)";
}

// The kernel stores nothing in bf16 and has no mixed_precision argument: sd_attention's default
// mixed_precision=true (the contract rounding q, k, v and P to bf16) does not fit it, so the
// check derives mixed_precision=false and judges it under the fp32 contract. Before
// like_contract the JSON said mixed_precision "true" and q_dtype "bf16".
TEST(CheckLikeContract, AnAllFp32KernelIsJudgedUnderTheFp32Contract) {
  const nlohmann::json j =
      check_json(cat({rendition("sd_attention_fp32"), "--like", "sd_attention"}, kSmall));
  EXPECT_EQ(j["options"]["mixed_precision"], "false") << j.dump(2);
  EXPECT_EQ(j["options"]["dtype"], "fp32") << j.dump(2);
  EXPECT_EQ(j["contract"]["q_dtype"], "fp32") << j.dump(2);
  EXPECT_EQ(j["contract"]["p_dtype"], "fp32") << j.dump(2);
  EXPECT_EQ(source_of(j, "mixed_precision"), "derived") << j.dump(2);
  EXPECT_EQ(source_of(j, "dtype"), "derived") << j.dump(2);
  EXPECT_EQ(source_of(j, "use_causal_mask"), "default") << j.dump(2);
  EXPECT_EQ(j["contract_used"]["kernel"], "sd_attention") << j.dump(2);
  EXPECT_EQ(j.value("pass", false), true) << j.dump(2);
}

// The same program with every output 2^-15 too large: a kernel that rounds only in fp32 (unit
// roundoff 2^-24) has no such error. At the first case (peaked, seed 1) the bf16 default's bound
// passed it (max|err|/bound 0.498 before like_contract); the fp32 contract fails it (1.38).
TEST(CheckLikeContract, AnFp32KernelsSmallErrorIsCaught) {
  std::string text = read_file(kKernels / "sd_attention_rendition.py");
  const std::string scaled = "o_scaled = o * nisa.nc_transpose(divisor)";
  ASSERT_NE(text.find(scaled), std::string::npos);
  text.replace(text.find(scaled), scaled.size(), scaled + " * 1.000030517578125");
  const fs::path sloppy = write_temp("sloppy_fp32_rendition.py", text);
  const std::string k = sloppy.string() + ":sd_attention_fp32";
  const CliResult r = run_cli(cat({"check", k, "--like", "sd_attention"}, kSmall));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  // Asking for the bf16 contract by name is refused: the program never rounds to bf16.
  const CliResult lax = run_cli(
      cat({"check", k, "--like", "sd_attention", "--param", "mixed_precision=true"}, kSmall));
  EXPECT_EQ(lax.exit_code, 2) << "mixed_precision=true does not fit a program without bf16\n"
                              << describe(lax);
  EXPECT_NE(lax.err.find("holds no bf16 value"), std::string::npos) << lax.err;
}

// bf16 q, k and v (the output is q's dtype): dtype=bf16 is derived, and the contract is bf16's.
TEST(CheckLikeContract, ABf16KernelGetsTheBf16Contract) {
  const nlohmann::json j =
      check_json(cat({rendition("sd_attention_fp32"), "--like", "sd_attention", "--input", "q=bf16",
                      "--input", "k=bf16", "--input", "v=bf16"},
                     kSmall));
  EXPECT_EQ(j["options"]["dtype"], "bf16") << j.dump(2);
  EXPECT_EQ(source_of(j, "dtype"), "derived") << j.dump(2);
  EXPECT_EQ(j["contract"]["out_dtype"], "bf16") << j.dump(2);
  EXPECT_EQ(j.value("pass", false), true) << j.dump(2);
}

// The text names the contract and each option's source; an option the program cannot decide is
// K's default and says so.
TEST(CheckLikeContract, TheTextNamesEachOptionsSource) {
  const CliResult r =
      run_cli(cat({"check", rendition("sd_attention"), "--like", "sd_attention"}, kSmall));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("contract sd_attention with dtype=fp32 mixed_precision=true "
                       "use_causal_mask=false\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  option dtype = fp32: derived from the program (dtype=bf16: the spec's "
                       "input dtype is bf16, the program's k is fp32"),
            std::string::npos)
      << r.out;
  // The rendition holds bf16 (its own default mixed_precision=True) and fp32 values: both fit.
  EXPECT_NE(r.out.find("  option mixed_precision = true: sd_attention's default, not given"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  option use_causal_mask = false: sd_attention's default, not given"),
            std::string::npos)
      << r.out;
}

// A given value that contradicts the program's tensors: exit 2, naming the option, what the
// program has and how to pass the options.
TEST(CheckLikeContract, AGivenValueThatContradictsTheProgramIsExitTwo) {
  expect_exit(run_cli(cat({"check", rendition("sd_attention_fp32"), "--like", "sd_attention",
                           "--param", "dtype=bf16"},
                          kSmall)),
              2,
              {"no option set of sd_attention fits the program with dtype=bf16",
               "the program's k is fp32", "--param NAME=VALUE"});
}

// An option neither sd_attention nor the kernel has (flash_fwd's sliding_window): exit 2.
TEST(CheckLikeContract, AnOptionNeitherTheKernelNorTheLikeKernelHasIsExitTwo) {
  for (const char* option : {"sliding_window=on"}) {
    const std::string name = std::string(option).substr(0, std::string(option).find('='));
    expect_exit(
        run_cli(cat(
            {"check", rendition("sd_attention_fp32"), "--like", "sd_attention", "--param", option},
            kSmall)),
        2, {"--param " + name + ": the kernel has no keyword argument or shape named " + name});
  }
}

// `--param use_causal_mask=false`, `=False` and `=0` mean one thing, `=true` another, whether the
// option is the --like kernel's (`like`), the registered kernel's (`registered`) or the
// --contract kernel's (`layout`: with --layout the problem is stated by its flags, the kernel's
// scale 0.125 and --causal for the mask; the option picks the contract).
void expect_on_off_values_parse_alike(const std::vector<std::string>& like,
                                      const std::vector<std::string>& registered,
                                      const std::vector<std::string>& layout) {
  const auto meaning = [](const std::string& v) {
    return v == "true" || v == "True" || v == "1" ? "true" : "false";
  };
  for (const std::string& value : like) {
    SCOPED_TRACE("--like " + value);
    const nlohmann::json j = check_json(cat({rendition("sd_attention_fp32"), "--like",
                                             "sd_attention", "--param", "use_causal_mask=" + value},
                                            kSmall));
    EXPECT_EQ(j["options"]["use_causal_mask"], meaning(value)) << j.dump(2);
    EXPECT_EQ(source_of(j, "use_causal_mask"), "given") << j.dump(2);
  }
  for (const std::string& value : registered) {
    SCOPED_TRACE("registered " + value);
    const nlohmann::json j =
        check_json(cat({"sd_attention", "--param", "use_causal_mask=" + value}, kSmall));
    EXPECT_EQ(j["options"]["use_causal_mask"], meaning(value)) << j.dump(2);
  }
  for (const std::string& value : layout) {
    SCOPED_TRACE("--layout " + value);
    std::vector<std::string> args = {rendition("sd_attention_fp32"),
                                     "--layout",
                                     "sd_attention",
                                     "--contract",
                                     "sd_attention",
                                     "--scale",
                                     "0.125",
                                     "--param",
                                     "mixed_precision=false",
                                     "--param",
                                     "use_causal_mask=" + value};
    if (std::string(meaning(value)) == "true") args.push_back("--causal");
    const nlohmann::json j = check_json(cat(args, kSmall));
    EXPECT_EQ(j["options"]["use_causal_mask"], meaning(value)) << j.dump(2);
  }
}

TEST(CheckLikeContract, OnOffValuesParseTheSameWithAndWithoutLike) {
  // One spelling per path here (every spelling on every path in the Deep sibling).
  expect_on_off_values_parse_alike({"0", "True"}, {"False"}, {});
}

TEST(DeepCheckLikeContract, OnOffValuesParseTheSameWithAndWithoutLike) {
  const std::vector<std::string> all = {"false", "False", "0", "true", "True", "1"};
  expect_on_off_values_parse_alike(all, all, all);
}

}  // namespace
}  // namespace ncv::cli_test
