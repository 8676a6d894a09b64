// A dumped .nkir file records the build options it was made with (its `options` line), and every
// command that checks a file `--like` a kernel takes them as its options: a `--param` that
// contradicts the file is a usage error (exit 2), not a check of the program against the wrong
// spec and contract. Through the binary.
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const std::vector<std::string> kShape = {"--param",   "seqlen=128", "--param",
                                         "d_head=64", "--cases",    "1"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// `ncverify dump sd_attention` with these --param options, written to a temporary file.
std::string dumped(const std::string& name, const std::vector<std::string>& options) {
  const CliResult dump = run_cli(with({"dump", "sd_attention"}, options));
  EXPECT_EQ(dump.exit_code, 0) << describe(dump);
  return write_temp(name, dump.out).string();
}

void expect_usage_error(const CliResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  for (const std::string& p : parts)
    EXPECT_NE(r.err.find(p), std::string::npos) << p << "\n" << describe(r);
}

TEST(CliOptionsLine, DumpRecordsTheResolvedOptions) {
  const CliResult d = run_cli({"dump", "sd_attention", "--param", "dtype=bf16"});
  ASSERT_EQ(d.exit_code, 0) << describe(d);
  EXPECT_EQ(d.out.rfind("kernel sd_attention\n"
                        "options dtype=bf16 mixed_precision=true use_causal_mask=false\n",
                        0),
            0u)
      << d.out;
  // A dumped file dumps to the same text: the line survives the round trip.
  const std::string file = write_temp("redumped.nkir", d.out).string();
  const CliResult again = run_cli({"dump", file});
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(again.out, d.out);
}

// The bf16 program is checked as bf16 without repeating dtype: the spec and contract are bf16's
// (an fp32 check of bf16 outputs fails by a wide margin, which is what this guards against).
TEST(CliOptionsLine, CheckLikeTakesTheFilesOptions) {
  const std::string file = dumped("bf16.nkir", {"--param", "dtype=bf16"});
  const CliResult r = run_cli(with({"check", file, "--like", "sd_attention", "--json"}, kShape));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["options"]["dtype"], "bf16") << j.dump(2);
  EXPECT_EQ(j["options_from"], "file") << j.dump(2);
  EXPECT_EQ(j["pass"], true);
  // Repeating the recorded value is fine; the text output says where the options came from.
  const CliResult same =
      run_cli(with({"check", file, "--like", "sd_attention", "--param", "dtype=bf16"}, kShape));
  EXPECT_EQ(same.exit_code, 0) << describe(same);
  EXPECT_NE(same.out.find("options dtype=bf16 mixed_precision=true use_causal_mask=false "
                          "(recorded by " +
                          file + ")"),
            std::string::npos)
      << describe(same);
}

TEST(CliOptionsLine, AParamThatContradictsTheFileIsExitTwo) {
  const std::string bf16 = dumped("contradicted_bf16.nkir", {"--param", "dtype=bf16"});
  expect_usage_error(
      run_cli(with({"check", bf16, "--like", "sd_attention", "--param", "dtype=fp32"}, kShape)),
      {bf16 + ": option dtype=fp32 contradicts the program, which was built with dtype=bf16"});
  const std::string causal =
      dumped("contradicted_causal.nkir", {"--param", "use_causal_mask=true"});
  expect_usage_error(
      run_cli(with({"check", causal, "--like", "sd_attention", "--param", "use_causal_mask=false"},
                   kShape)),
      {causal + ": option use_causal_mask=false contradicts the program, which was built with "
                "use_causal_mask=true"});
  // equiv and adopt load their file sides the same way.
  for (const char* cmd : {"equiv", "adopt"}) {
    expect_usage_error(run_cli({cmd, "sd_attention", bf16, "--like", "sd_attention", "--param",
                                "dtype=fp32", "--param", "seqlen=128", "--param", "d_head=64"}),
                       {"option dtype=fp32 contradicts the program"});
  }
}

TEST(CliOptionsLine, AnOptionTheLikeKernelDoesNotOfferIsExitTwo) {
  std::string text = run_cli({"dump", "sd_attention"}).out;
  const std::string line = "options dtype=fp32 mixed_precision=true use_causal_mask=false";
  const size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  std::string fp16 = text;
  fp16.replace(at, line.size(), "options dtype=fp16 mixed_precision=true use_causal_mask=false");
  const std::string fp16_file = write_temp("fp16.nkir", fp16).string();
  expect_usage_error(run_cli(with({"check", fp16_file, "--like", "sd_attention"}, kShape)),
                     {fp16_file, "built with option dtype=fp16, which sd_attention does not offer",
                      "dtype is one of fp32, bf16"});
  std::string extra = text;
  extra.replace(at, line.size(), line + " scale=0.125");
  const std::string extra_file = write_temp("extra_option.nkir", extra).string();
  expect_usage_error(run_cli(with({"check", extra_file, "--like", "sd_attention"}, kShape)),
                     {"built with option scale=0.125, which sd_attention does not have (its "
                      "options: use_causal_mask, mixed_precision, dtype)"});
  // A kernel that only lends its contract (--layout/--contract) does not own the program's
  // options: one it lacks is not its business, and the check runs (scale 0.125 is the kernel's).
  const CliResult lent = run_cli(with({"check", extra_file, "--layout", "sd_attention",
                                       "--contract", "sd_attention", "--scale", "0.125"},
                                      kShape));
  EXPECT_EQ(lent.exit_code, 0) << describe(lent);
}

// Values that are not one identifier or number are written quoted (`lnc="2-sprior"`) and read
// back; written bare, the file is refused at the value with line and column (exit 2).
TEST(CliOptionsLine, ValuesWithOtherCharactersRoundTripQuoted) {
  const CliResult d = run_cli({"dump", "attention_tkg", "--param", "lnc=2-sprior"});
  ASSERT_EQ(d.exit_code, 0) << describe(d);
  const size_t at = d.out.find(" lnc=\"2-sprior\" ");
  ASSERT_NE(at, std::string::npos) << d.out.substr(0, 300);
  const std::string file = write_temp("tkg_sprior.nkir", d.out).string();
  const CliResult again = run_cli({"dump", file});
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(again.out, d.out);
  std::string bare = d.out;
  bare.replace(at, 16, " lnc=2-sprior ");
  const std::string bare_file = write_temp("tkg_sprior_bare.nkir", bare).string();
  const size_t column = at + 7 - bare.find("options");  // the '-' after "lnc=2", 1-based
  expect_usage_error(run_cli({"dump", bare_file}),
                     {bare_file + ":2:" + std::to_string(column) + ": expected option NAME=VALUE",
                      "written in double quotes: lnc=\"...\""});
}

// A file without the line (written before it existed, or by hand) is checked as before, with
// --param's options, and the output says they are unchecked.
TEST(CliOptionsLine, AFileWithoutTheLineTakesParamOptionsUnchecked) {
  std::string text = run_cli({"dump", "sd_attention", "--param", "dtype=bf16"}).out;
  const size_t from = text.find("options ");
  ASSERT_NE(from, std::string::npos) << text;
  text.erase(from, text.find('\n', from) + 1 - from);
  const std::string file = write_temp("no_options_line.nkir", text).string();
  const CliResult r = run_cli(
      with({"check", file, "--like", "sd_attention", "--param", "dtype=bf16", "--json"}, kShape));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["options"]["dtype"], "bf16") << j.dump(2);
  EXPECT_EQ(j["options_from"], "unchecked") << j.dump(2);
  const CliResult txt =
      run_cli(with({"check", file, "--like", "sd_attention", "--param", "dtype=bf16"}, kShape));
  EXPECT_EQ(txt.exit_code, 0) << describe(txt);
  EXPECT_NE(txt.out.find("has no options line, so nothing says it was built with them"),
            std::string::npos)
      << describe(txt);
}

// A registered kernel's options still come from --param.
TEST(CliOptionsLine, RegisteredKernelsTakeParamOptions) {
  const CliResult r =
      run_cli(with({"check", "sd_attention", "--param", "use_causal_mask=true", "--json"}, kShape));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["options"]["use_causal_mask"], "true");
  EXPECT_FALSE(j.contains("options_from"));
}

}  // namespace
}  // namespace ncv::cli_test
