// `ncverify list`, `check`, and `run`/`dump` on registered kernel names, through the binary.
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliList, TextNamesEveryVariantWithItsPredecessor) {
  const CliResult r = run_cli({"list"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* name : {"naive_attention", "sd_attention_step5", "sd_attention_allocated",
                           "sd_attention_batched"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r.out.find("rewrites sd_attention_step3 (changes numerics)"), std::string::npos)
      << r.out;
}

TEST(CliList, JsonIsAnArrayWithDomainsAndContracts) {
  const CliResult r = run_cli({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_GE(j.size(), 9u);
  for (const auto& v : j) {
    EXPECT_TRUE(v.contains("params") && v.contains("contract") && v.contains("layout")) << v;
  }
}

TEST(CliCheck, RegisteredKernelPassesWithExitZeroAndJson) {
  const CliResult r = run_cli({"check", "sd_attention", "--param", "seqlen=128", "--param",
                               "d_head=32", "--cases", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["options"]["use_causal_mask"], "false");
}

TEST(CliCheck, OptionsArePassedAsParams) {
  const CliResult r =
      run_cli({"check", "sd_attention_step5", "--param", "seqlen=256", "--param", "d_head=64",
               "--param", "use_causal_mask=true", "--param", "dtype=bf16", "--cases", "1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

// An outside rewrite as a .nkir file, checked with a registered kernel's adapter and contract:
// a faithful copy passes, a copy with the softmax scale doubled fails with exit 1.
TEST(CliCheck, NkirFileLikeAKernel) {
  const CliResult dump = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  const fs::path good = write_temp("rewrite_good.nkir", dump.out);
  const std::vector<std::string> shape = {"--param",   "seqlen=128", "--param",
                                          "d_head=16", "--cases",    "1"};
  std::vector<std::string> args = {"check", good.string(), "--like", "sd_attention"};
  args.insert(args.end(), shape.begin(), shape.end());
  const CliResult ok = run_cli(args);
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);

  std::string text = dump.out;
  const size_t at = text.find("operand0=0.125");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("operand0=0.125").size(), "operand0=0.25");
  const fs::path bad = write_temp("rewrite_bad.nkir", text);
  args[1] = bad.string();
  const CliResult fail = run_cli(args);
  EXPECT_EQ(fail.exit_code, 1) << describe(fail);
  EXPECT_NE(fail.out.find("FAIL"), std::string::npos) << fail.out;
}

// A rewrite whose live buffers outgrow SBUF while each instruction fits: the compiler would
// spill, so its check is UNKNOWN (exit 1, never PASS) with the reason, not FAIL; the same rewrite
// with wrong values still FAILs (spills change no value).
TEST(CliCheck, ARewriteThatNeedsSpillsIsUnknownNotFail) {
  const CliResult dump = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  // Two 120,000-byte buffers live together (trn1 has 180,224 usable bytes per partition).
  const std::string extra =
      "buffer spill_t : sbuf fp32 [128, 30000]\n"
      "buffer spill_u : sbuf fp32 [128, 30000]\n"
      "buffer spill_s : sbuf fp32 [128, 8]\n"
      "memset spill_t[:, :], value=1\n"
      "memset spill_u[:, :], value=2\n"
      "tensor_copy spill_s[:, :], spill_t[:, 0:+8]\n"
      "tensor_copy spill_s[:, :], spill_u[:, 0:+8]\n";
  std::string text = dump.out;
  const size_t body = text.find("\nfor ");
  ASSERT_NE(body, std::string::npos) << text;
  text.insert(body + 1, extra);
  std::vector<std::string> args = {"check",      "",        "--like",    "sd_attention", "--param",
                                   "seqlen=128", "--param", "d_head=16", "--cases",      "1"};
  args[1] = write_temp("rewrite_spills.nkir", text).string();
  const CliResult unknown = run_cli(args);
  EXPECT_EQ(unknown.exit_code, 1) << describe(unknown);
  EXPECT_NE(unknown.out.find("UNKNOWN"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("spill"), std::string::npos) << unknown.out;
  EXPECT_EQ(unknown.out.find("FAIL"), std::string::npos) << unknown.out;
  // `run` computes its values and says so, exit 0.
  const CliResult run = run_cli({"run", args[1], "--param", "seqlen=128", "--param", "d_head=16"});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_NE(run.out.find("spill: "), std::string::npos) << run.out;
  // Break it: the softmax scale doubled.
  const size_t at = text.find("operand0=0.125");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("operand0=0.125").size(), "operand0=0.25");
  args[1] = write_temp("rewrite_spills_bad.nkir", text).string();
  const CliResult fail = run_cli(args);
  EXPECT_EQ(fail.exit_code, 1) << describe(fail);
  EXPECT_NE(fail.out.find("FAIL"), std::string::npos) << fail.out;
  EXPECT_EQ(fail.out.find("UNKNOWN"), std::string::npos) << fail.out;
}

TEST(CliCheck, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"check", "no_such_kernel", "--param", "seqlen=128"},
      {"check", "sd_attention", "--param", "seqlen=128", "--param", "d_head=8", "--param",
       "use_causal_mask=maybe"},
      {"check", "sd_attention", "--param", "seqlen=100", "--param", "d_head=8"},
      {"check", "sd_attention", "--param", "seqlen=128", "--param", "d_head=8", "--param",
       "heads=2"},
      {"check", "sd_attention", "--like", "sd_attention", "--param", "seqlen=128"},
  };
  for (const auto& args : bad) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args.back() << "\n" << describe(r);
    EXPECT_NE(r.err.find("ncverify:"), std::string::npos) << describe(r);
  }
  const CliResult typo = run_cli({"check", "sd_attention", "--param", "seqlen=128", "--param",
                                  "d_head=8", "--param", "use_causal=1"});
  EXPECT_EQ(typo.exit_code, 2) << describe(typo);
  EXPECT_NE(typo.err.find("unknown --param 'use_causal' (params and options: seqlen, d_head, "
                          "use_causal_mask"),
            std::string::npos)
      << describe(typo);
  // A .nkir file alone has no adapter or contract.
  const CliResult dump = run_cli({"dump", "sd_attention"});
  const fs::path file = write_temp("alone.nkir", dump.out);
  const CliResult r =
      run_cli({"check", file.string(), "--param", "seqlen=128", "--param", "d_head=8"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("--like"), std::string::npos) << describe(r);
}

TEST(CliKernels, RunAndDumpWorkOnEveryRegisteredName) {
  const nlohmann::json all = nlohmann::json::parse(run_cli({"list", "--json"}).out);
  for (const auto& v : all) {
    const std::string name = v["name"];
    const CliResult dump = run_cli({"dump", name});
    ASSERT_EQ(dump.exit_code, 0) << name << describe(dump);
    EXPECT_EQ(dump.out.rfind("kernel " + name, 0), 0u) << name;
    std::vector<std::string> args = {"run", name};
    for (const auto& p : v["params"]) {
      const int64_t m = p["multiple_of"], lo = p["lo"];
      args.push_back("--param");
      args.push_back(p["name"].get<std::string>() + "=" + std::to_string((lo + m - 1) / m * m));
    }
    const CliResult run = run_cli(args);
    EXPECT_EQ(run.exit_code, 0) << name << describe(run);
    EXPECT_NE(run.out.find("result: ok"), std::string::npos) << name << run.out;
  }
  const CliResult causal = run_cli({"dump", "sd_attention", "--param", "use_causal_mask=true"});
  ASSERT_EQ(causal.exit_code, 0) << describe(causal);
  EXPECT_NE(causal.out.find("affine_select"), std::string::npos);
}

}  // namespace
}  // namespace ncv::cli_test
