// attention_tkg on the command line: the Perfetto trace of an LNC2 run has one process per core,
// and frontier gives a largest seqlen (= curr_sprior) per generation.
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

TEST(CliAttentionTkg, FrontierPerGeneration) {
  const CliResult r =
      run_cli({"frontier", "attention_tkg", "--param", "bs=1", "--param", "q_head=16", "--param",
               "s_active=8", "--param", "d_head=128", "--gen", "all", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, int64_t> largest;
  for (const auto& f : j.at("frontiers")) {
    if (f.contains("largest_fitting")) {
      largest[f.at("gen").get<std::string>()] = f.at("largest_fitting").get<int64_t>();
    }
  }
  std::cout << j.dump(2) << "\n";
}

}  // namespace
}  // namespace ncv::cli_test
