// `ncverify prove`: counts per obligation class, details of what is not proved, exit codes.
#include <nlohmann/json.hpp>
#include <set>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliProve, RegisteredKernelIsProvedWithExitZeroAndCounts) {
  const CliResult r = run_cli({"prove", "sd_attention"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("prove sd_attention"), std::string::npos) << r.out;
  for (const char* cls : {"bounds: ", "isa-rules: ", "allocation: "}) {
    EXPECT_NE(r.out.find(cls), std::string::npos) << cls << r.out;
  }
  EXPECT_NE(r.out.find(" 0 counterexample, 0 unknown"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("counterexample:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nPROVED\n"), std::string::npos) << r.out;
}

TEST(CliProve, JsonCountsAndPass) {
  const CliResult r = run_cli({"prove", "sd_attention", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("pass").get<bool>());
  ASSERT_FALSE(j.at("programs").empty());
  for (const auto& p : j.at("programs")) {
    EXPECT_EQ(p.at("gen").get<std::string>(), "trn1");
    for (const char* cls : {"bounds", "isa-rules", "allocation"}) {
      EXPECT_GT(p.at(cls).at("proved").get<int>(), 0) << cls;
      EXPECT_EQ(p.at(cls).at("counterexample").get<int>(), 0) << cls;
      EXPECT_EQ(p.at(cls).at("unknown").get<int>(), 0) << cls;
    }
  }
  EXPECT_GT(j.at("total").at("allocation").at("proved").get<int>(), 0);
}

TEST(CliProve, EveryGenerationOnRequest) {
  const CliResult r = run_cli({"prove", "naive_attention", "--gen", "all", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> gens;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& p : j.at("programs")) {
    gens.insert(p.at("gen").get<std::string>());
  }
  EXPECT_EQ(gens, (std::set<std::string>{"trn1", "trn2", "trn3"}));
  EXPECT_EQ(run_cli({"prove", "naive_attention", "--gen", "trn9"}).exit_code, 2);
}

// data/growing_buffer.nkir: [128, 64 * N] fp32 is 256 * N bytes per partition; it fits trn1's
// 176 KiB of usable SBUF up to N = 640; the smallest counterexample is N = 768.
TEST(CliProve, BufferTooLargeAtTheDomainMaximumIsACapacityCounterexample) {
  const std::string file = std::string(NCV_CLI_TEST_DATA_DIR) + "/growing_buffer.nkir";
  const CliResult r = run_cli({"prove", file});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("allocation: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("N=768"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: reproduced"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT PROVED"), std::string::npos) << r.out;
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

// The output ends with what the verdicts cover and what they do not (also in --json).
TEST(CliProve, EndsWithWhatTheVerdictsCover) {
  const CliResult r = run_cli({"prove", "naive_attention"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("initialization: "), std::string::npos) << r.out;
  const std::string last_line =
      "covers: well-formedness, index bounds, ISA rules, SBUF/PSUM "
      "allocation, initialization of SBUF/PSUM reads, for every shape "
      "in the domain; not covered: numerics (ncverify check), "
      "equivalence to another kernel (ncverify equiv)\n";
  ASSERT_GE(r.out.size(), last_line.size());
  EXPECT_EQ(r.out.substr(r.out.size() - last_line.size()), last_line) << r.out;
  const auto j = nlohmann::json::parse(run_cli({"prove", "naive_attention", "--json"}).out);
  EXPECT_EQ(j.at("coverage").get<std::string>() + "\n", last_line);
  EXPECT_GT(j.at("total").at("initialization").at("proved").get<int>(), 0);
}

// Bug-catalogue entries that read PSUM before writing it: the eviction moved above the loop of
// transposes, and the first PV matmul accumulating onto PSUM nothing zeroed. Each is an
// initialization counterexample that the interpreter's shadow check confirms.
TEST(CliProve, CatalogueEntriesReadingUnwrittenPsumAreInitializationCounterexamples) {
  for (const char* bug : {"stale_psum_read", "psum_group_start_accumulates"}) {
    const CliResult r = run_cli({"prove", bug, "--json"});
    EXPECT_EQ(r.exit_code, 1) << bug << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j.at("pass").get<bool>());
    EXPECT_GT(j.at("total").at("initialization").at("counterexample").get<int>(), 0) << bug;
    EXPECT_EQ(j.at("total").at("initialization").at("disagreements").get<int>(), 0) << bug;
    for (const char* cls : {"well-formed", "bounds", "isa-rules", "allocation"}) {
      EXPECT_EQ(j.at("total").at(cls).at("counterexample").get<int>(), 0) << bug << " " << cls;
    }
    bool confirmed = false;
    for (const auto& p : j.at("programs")) {
      for (const auto& f : p.at("not_proved")) {
        const std::string text = f.get<std::string>();
        EXPECT_NE(text.find("[initialization]"), std::string::npos) << text;
        confirmed = confirmed || (text.find("replay: reproduced, the interpreter raised "
                                            "uninitialized_read") != std::string::npos);
      }
    }
    EXPECT_TRUE(confirmed) << bug << r.out;
  }
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
