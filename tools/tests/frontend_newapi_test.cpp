// New-API NKI kernels (`import nki`) through the CLI (label frontend): the generation a kernel
// is traced for (`--gen` of import, run, check, bench and prove reaches the tracer, so
// nki.isa.get_nc_version() answers NeuronCore-v2, v3 or v4 for trn1, trn2 or trn3, trn1 without
// --gen; a --gen that contradicts a kernel's own nki.jit(platform_target=), legacy or new-API
// (NKI 0.2's way to name the target, an error since NKI 0.3.0), and `import --gen all` are usage
// errors), and an nc_matmul whose accumulate flag depends on the loop variable
// staying a symbolic program that `prove` proves for every shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

std::string kernel(const std::string& function, const std::string& file = "nc_version.py") {
  return (kKernels / file).string() + ":" + function;
}

TEST(FrontendGeneration, ImportTracesForTheNamedGeneration) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "value=2 @line"},
      {{"--gen", "trn1"}, "value=2 @line"},
      {{"--gen", "trn2"}, "value=3 @line"},
      {{"--gen", "trn3"}, "value=4 @line"},
  };
  for (const auto& [gen, memset] : cases) {
    std::vector<std::string> args = {"import", kernel("version_filled"), "--input", "a=fp32[4,8]"};
    args.insert(args.end(), gen.begin(), gen.end());
    const CliResult r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find(memset), std::string::npos) << memset << "\n" << r.out;
  }
}

TEST(FrontendGeneration, RunTracesForTheGenerationItRunsOn) {
  const CliResult r = run_cli(
      {"run", kernel("version_filled"), "--input", "a=fp32[4,8]", "--gen", "trn3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gen"], "trn3");
  const CliResult base = run_cli(
      {"run", kernel("version_filled"), "--input", "a=fp32[4,8]", "--gen", "trn1", "--json"});
  ASSERT_EQ(base.exit_code, 0) << describe(base);
  // a different memset value: a different output
  EXPECT_NE(nlohmann::json::parse(base.out)["outputs"][0]["checksum"], j["outputs"][0]["checksum"]);
}

TEST(FrontendGeneration, ContradictionsAndSeveralGenerationsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"import", kernel("for_trn2", "legacy_for_trn2.py"), "--input", "a=fp32[4,8]", "--gen",
        "trn1"},
       "platform_target='trn2'"},
      {{"import", kernel("for_trn2", "newapi_platform_target.py"), "--input", "a=fp32[4,8]",
        "--gen", "trn3"},
       "platform_target='trn2'"},
      {{"import", kernel("version_filled"), "--input", "a=fp32[4,8]", "--gen", "all"},
       "import traces for one generation"},
      {{"import", kernel("version_filled"), "--input", "a=fp32[4,8]", "--gen", "trn9"}, "trn9"},
  };
  for (const auto& [args, why] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
  // the kernel's own generation, named or not
  const std::string legacy = kernel("for_trn2", "legacy_for_trn2.py");
  EXPECT_EQ(run_cli({"import", legacy, "--input", "a=fp32[4,8]", "--gen", "trn2"}).exit_code, 0);
  EXPECT_EQ(run_cli({"import", legacy, "--input", "a=fp32[4,8]"}).exit_code, 0);
  // NKI 0.2's platform_target= on a new-API kernel: its generation, as the legacy decorator's
  // (one run: the --gen trn3 case above shows the decorator's generation is read)
  EXPECT_EQ(
      run_cli({"import", kernel("for_trn2", "newapi_platform_target.py"), "--input", "a=fp32[4,8]"})
          .exit_code,
      0);
}

TEST(FrontendNewApiMatmul, AFlagOnTheLoopVariableSplitsTheSymbolicLoopAndProves) {
  const std::string k = kernel("matmul_k_tiles", "newapi_matmul.py");
  const CliResult r = run_cli({"import", k, "--shape", "a=K,M", "--shape", "b=K,N"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("param K in [128, 65536] multiple_of 128"), std::string::npos) << r.out;
  // the first iteration overwrites (accumulate's default, false), the rest accumulate
  const size_t first = r.out.find("for k in affine_range(1) {");
  const size_t rest = r.out.find("for k in affine_range(1, K // 128) {");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(rest, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(first, rest - first).find("accumulate=true"), std::string::npos);
  EXPECT_NE(r.out.find("accumulate=true", rest), std::string::npos);
  const CliResult p = run_cli({"prove", k, "--shape", "a=K,M", "--shape", "b=K,N"});
  EXPECT_EQ(p.exit_code, 0) << describe(p);
  EXPECT_NE(p.out.find("PROVED"), std::string::npos) << p.out;
}

TEST(FrontendNewApiMatmul, WhatASymbolicShapeCannotDecideIsExitTwoAtTheKernelLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"import", kernel("flag_on_a_shape", "newapi_matmul.py"), "--shape", "a=K,M", "--shape",
        "b=K,N"},
       "nisa.nc_matmul: accumulate=M > 64: this branch needs the value of M"},
      {{"import", kernel("iota_over_symbolic_dims", "newapi_matmul.py"), "--shape", "a=P,F"},
       "nisa.iota: the pattern's dims"},
  };
  for (const auto& [args, why] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("newapi_matmul.py:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ncv::cli_test
