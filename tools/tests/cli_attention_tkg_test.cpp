// attention_tkg on the command line: the Perfetto trace of an LNC2 run has one process per core,
// and frontier gives a largest seqlen (= curr_sprior) per generation.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliAttentionTkg, Lnc2TraceHasOneProcessPerCore) {
  const fs::path path = temp_dir() / "tkg_trace.json";
  const CliResult r = run_cli({"bench", "attention_tkg", "-p", "lnc=2-sprior", "-p", "bs=1", "-p",
                               "q_head=2", "-p", "s_active=2", "-p", "seqlen=512", "-p",
                               "d_head=32", "--gen", "trn2", "--trace", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json trace = nlohmann::json::parse(read_file(path));
  std::set<std::string> processes;
  std::set<int> pids_with_slices;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      processes.insert(e.at("args").at("name").get<std::string>());
    }
    if (e.at("ph") == "X") pids_with_slices.insert(e.at("pid").get<int>());
  }
  EXPECT_EQ(processes, (std::set<std::string>{"core 0", "core 1"}));
  EXPECT_EQ(pids_with_slices, (std::set<int>{0, 1}));
}

// bs 2, 8 heads, 4 active tokens (64 columns), d 128, generated mask: trn1 runs out of SBUF at
// 32640 slots (inside the declared domain; the kernel needs NeuronCore-v3 anyway); on trn2 and
// trn3 every slot count the domain's relations allow fits (the batch-tiling relation,
// 8 * 64 * seqlen <= 16 MiB, stops the domain at 32768 first).
TEST(CliAttentionTkg, FrontierPerGeneration) {
  const CliResult r = run_cli({"frontier", "attention_tkg",      "--param", "bs=2",
                               "--param",  "q_head=8",           "--param", "s_active=4",
                               "--param",  "d_head=128",         "--param", "lnc=1",
                               "--param",  "strided_mm1=true",   "--param", "mask=pos_id",
                               "--param",  "sink=off",           "--param", "kv_dtype=bf16",
                               "--param",  "s_prior_tiling=off", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, int64_t> largest;
  for (const auto& f : j.at("frontiers")) {
    ASSERT_EQ(f.at("status").get<std::string>(), "fits") << f.dump();
    largest[f.at("gen").get<std::string>()] = f.at("largest_fitting").get<int64_t>();
  }
  EXPECT_EQ(largest.at("trn1"), 32512);
  EXPECT_GE(largest.at("trn2"), 32768);
  EXPECT_GE(largest.at("trn3"), 32768);
}

}  // namespace
}  // namespace ncv::cli_test
