// `ncverify prove`: counts per obligation class, details of what is not proved, exit codes.
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliProve, RegisteredKernelIsProvedWithExitZeroAndCounts) {
  const CliResult r = run_cli({"prove", "sd_attention"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("prove sd_attention"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bounds: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0 counterexample, 0 unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not implemented yet"), std::string::npos) << r.out;
}

TEST(CliProve, JsonCountsAndPass) {
  const CliResult r = run_cli({"prove", "sd_attention", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("pass").get<bool>());
  ASSERT_FALSE(j.at("programs").empty());
  for (const auto& p : j.at("programs")) {
    EXPECT_GT(p.at("bounds").at("proved").get<int>(), 0);
    EXPECT_EQ(p.at("bounds").at("counterexample").get<int>(), 0);
    EXPECT_EQ(p.at("bounds").at("unknown").get<int>(), 0);
  }
}

TEST(CliProve, OffByOneFileIsACounterexampleWithExitOne) {
  const fs::path file = write_temp("off_by_one.nkir", R"(kernel off_by_one
param N in [128, 512] multiple_of 128
input x : hbm fp32 [N, 64]
output y : hbm fp32 [N, 64]
for i in affine_range(N // 128) {
  buffer t : sbuf fp32 [128, 64]
  dma_copy t[:, :], x[i * 128 + 1:+128, :]
  dma_copy y[i * 128:+128, :], t[:, :]
}
)");
  const CliResult r = run_cli({"prove", file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("1 counterexample"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("replay: reproduced"), std::string::npos) << r.out;
}

TEST(CliProve, UnknownKernelIsUsageError) {
  const CliResult r = run_cli({"prove", "no_such_kernel"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("neither a registered kernel"), std::string::npos) << r.err;
}

TEST(CliProve, KernelAndAllTogetherIsUsageError) {
  EXPECT_EQ(run_cli({"prove", "sd_attention", "--all"}).exit_code, 2);
  EXPECT_EQ(run_cli({"prove"}).exit_code, 2);
}

}  // namespace
}  // namespace ncv::cli_test
