// Through the binary: the generations each kernel runs on (`list`), `--gen` refusals and skips
// for a kernel restricted to some generations (kernels::Variant::generations), and `check
// --determinism-runs` (each case under schedule seeds 0..N-1, compared byte for byte).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliGenerations, ListShowsEveryKernelsGenerations) {
  const CliResult j = run_cli({"list", "--json"});
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  for (const auto& v : nlohmann::json::parse(j.out)) {
    ASSERT_TRUE(v.contains("generations")) << v["name"];
    EXPECT_FALSE(v["generations"].empty()) << v["name"];
    EXPECT_GE(v["determinism_runs"].get<int>(), 1) << v["name"];
    if (v["name"] == "sd_attention") {
      EXPECT_EQ(v["generations"], nlohmann::json::array({"trn1", "trn2", "trn3"}));
      EXPECT_EQ(v["generations_restricted"], false);
    }
  }
  const CliResult t = run_cli({"list"});
  ASSERT_EQ(t.exit_code, 0) << describe(t);
  EXPECT_NE(t.out.find("  generations: trn1, trn2, trn3\n"), std::string::npos) << t.out;
}

// The first registered kernel restricted to some generations and a generation it does not run
// on; none until a kernel declares a restriction (attention_tkg, issue 28).
struct Restricted {
  std::string name, other_gen;
};
std::optional<Restricted> restricted_kernel() {
  const CliResult r = run_cli({"list", "--json"});
  if (r.exit_code != 0) return std::nullopt;
  for (const auto& v : nlohmann::json::parse(r.out)) {
    if (!v.value("generations_restricted", false)) continue;
    for (const char* g : {"trn1", "trn2", "trn3"}) {
      const auto& gens = v["generations"];
      if (std::find(gens.begin(), gens.end(), g) == gens.end()) return Restricted{v["name"], g};
    }
  }
  return std::nullopt;
}

TEST(CliGenerations, ANamedGenerationARestrictedKernelDoesNotRunOnExitsTwo) {
  const std::optional<Restricted> k = restricted_kernel();
  if (!k) GTEST_SKIP() << "no registered kernel is restricted to some generations yet";
  for (const char* cmd : {"check", "bench", "run", "prove", "frontier"}) {
    const CliResult r = run_cli({cmd, k->name, "--gen", k->other_gen});
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << describe(r);
    EXPECT_NE(r.err.find("--gen " + k->other_gen + ": " + k->name + " runs on "), std::string::npos)
        << cmd << "\n"
        << describe(r);
    EXPECT_NE(r.err.find(" only"), std::string::npos) << cmd << "\n" << describe(r);
  }
}

TEST(CliGenerations, GenAllSkipsWhereARestrictedKernelDoesNotRunAndSaysWhy) {
  const std::optional<Restricted> k = restricted_kernel();
  if (!k) GTEST_SKIP() << "no registered kernel is restricted to some generations yet";
  const CliResult r =
      run_cli({"frontier", k->name, "--gen", "all", "--json", "--timeout-ms", "2000"});
  ASSERT_NE(r.exit_code, 2) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool skipped = false;
  for (const auto& s : j["skipped"]) {
    skipped = skipped || (s["gen"] == k->other_gen &&
                          s["reason"].get<std::string>().find(k->name + " runs on ") == 0);
  }
  EXPECT_TRUE(skipped) << j["skipped"];
  for (const auto& row : j["frontiers"]) EXPECT_NE(row["gen"], k->other_gen) << row;
}

const std::vector<std::string> kBatched = {"--param", "bs=2",      "--param", "seqlen=128",
                                           "--param", "d_head=32", "--cases", "1"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(CliDeterminism, EachCaseRunsUnderNSchedulesAndSaysSo) {
  const CliResult j = run_cli(
      with({"check", "sd_attention_batched", "--determinism-runs", "3", "--json"}, kBatched));
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["determinism_runs"], 3);
  EXPECT_EQ(doc["gen"], "trn1");
  EXPECT_EQ(doc["cases"][0]["determinism"]["runs"], 3);
  EXPECT_EQ(doc["cases"][0]["determinism"]["identical"], true);
  const CliResult t =
      run_cli(with({"check", "sd_attention_batched", "--determinism-runs", "3"}, kBatched));
  ASSERT_EQ(t.exit_code, 0) << describe(t);
  EXPECT_NE(t.out.find("each case run 3 times under schedule seeds 0..2"), std::string::npos)
      << t.out;
  EXPECT_EQ(run_cli(with({"check", "sd_attention_batched", "--determinism-runs", "0"}, kBatched))
                .exit_code,
            2);
}

// sd_attention_batched with a cross-core race after each output store (core 0 also stores its
// tile into batch 1's rows while core 1 stores its own there again, in the same lockstep step):
// one run passes, two schedules differ and the check fails with the first differing element.
TEST(CliDeterminism, ARacyRewriteFailsWithTheRunAndTheFirstDifference) {
  const CliResult dump = run_cli({"dump", "sd_attention_batched"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  const std::regex store(R"(( *)(dma_copy out\[program_id, ([^\n]*))\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dump.out, m, store)) << dump.out;
  const std::string in = m[1];
  const std::string race = in + "for race0 in sequential_range(1 - program_id) {\n" + in +
                           "  dma_copy out[1 - program_id, " + std::string(m[3]) + "\n" + in +
                           "}\n" + in + "for race1 in sequential_range(program_id) {\n" + in +
                           "  " + std::string(m[2]) + "\n" + in + "}\n";
  const fs::path file =
      write_temp("racy_batched.nkir", m.prefix().str() + m[0].str() + race + m.suffix().str());
  const std::vector<std::string> base = {"check", file.string(), "--like", "sd_attention_batched"};
  const CliResult once = run_cli(with(base, kBatched));
  EXPECT_EQ(once.exit_code, 0) << describe(once);
  const CliResult twice = run_cli(with(with(base, {"--determinism-runs", "2"}), kBatched));
  EXPECT_EQ(twice.exit_code, 1) << describe(twice);
  EXPECT_NE(twice.out.find("nondeterministic: run 1 (schedule seed 1) differs from run 0 in "
                           "output 'out'"),
            std::string::npos)
      << twice.out;
  EXPECT_NE(twice.out.find("--determinism-runs 2"), std::string::npos) << twice.out;  // replay
  const CliResult json = run_cli(with(with(base, {"--determinism-runs", "2", "--json"}), kBatched));
  ASSERT_EQ(json.exit_code, 1) << describe(json);
  const nlohmann::json d = nlohmann::json::parse(json.out)["cases"][0]["determinism"];
  EXPECT_EQ(d["identical"], false);
  EXPECT_EQ(d["run"], 1);
  EXPECT_EQ(d["output"], "out");
  EXPECT_FALSE(d["value_run0"].get<std::string>().empty());
  EXPECT_NE(d["value_run0"], d["value"]);
}

}  // namespace
}  // namespace ncv::cli_test
