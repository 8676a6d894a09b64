// The generation a traced NKI kernel is traced for (label frontend): `--gen` of import, run,
// check, bench and prove reaches the tracer, so nki.isa.get_nc_version() answers NeuronCore-v2,
// v3 or v4 for trn1, trn2 or trn3 (trn1 without --gen); a --gen that contradicts the kernel's
// own nki.jit(platform_target=) and `import --gen all` are usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

std::string kernel(const std::string& function) {
  return (kKernels / "nc_version.py").string() + ":" + function;
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
      {{"import", kernel("for_trn2"), "--input", "a=fp32[4,8]", "--gen", "trn1"},
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
  EXPECT_EQ(
      run_cli({"import", kernel("for_trn2"), "--input", "a=fp32[4,8]", "--gen", "trn2"}).exit_code,
      0);
  EXPECT_EQ(run_cli({"import", kernel("for_trn2"), "--input", "a=fp32[4,8]"}).exit_code, 0);
}

}  // namespace
}  // namespace ncv::cli_test
