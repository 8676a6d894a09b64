// `ncverify calibrate`'s accuracy targets (tools/calibration_targets.h) on a small data folder:
// each target's line or rows are printed (text and JSON) from the fields that feed them — a
// step's `measure` and `vector_active_pct`, a file's `profile` counters — and bad values of those
// fields are refused with exit 2 naming the file and field.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// Two SD steps at a small shape with profile counters for the first, the Vector anchor measured
// as an instruction duration, and a Mamba tutorial point with a Vector utilisation.
void write_small_data(const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "sd.json") << R"({
    "generation": "trn1", "params": {"seqlen": 256, "d_head": 64},
    "shape": {"use_causal_mask": false, "mixed_precision": true},
    "profile": {"steps": [0], "fields": {"vector_engine_instruction_count": [40],
                                         "scalar_engine_instruction_duration_us": [12.5],
                                         "sbuf_read_MiB": [1.0]}},
    "steps": [{"kernel": "sd_attention", "latency_ms": 0.05},
              {"kernel": "sd_attention_step5", "latency_ms": 0.04}]})";
  std::ofstream(dir / "anchor.json") << R"({
    "generation": "trn1", "params": {"P": 64, "N": 8192},
    "steps": [{"workload": "vector_tensor_tensor_anchor",
               "measure": "vector_engine_instruction_time", "latency_ms": 0.014968}]})";
  std::ofstream(dir / "mamba.json") << R"({
    "generation": "trn1", "params": {"batch": 1, "state_size": 2, "channels": 128, "seq_len": 64},
    "steps": [{"workload": "mamba_tutorial_v1", "latency_ms": 0.02, "vector_active_pct": 90}]})";
}

TEST(CliCalibrate, PrintsEveryTargetWithItsRows) {
  const fs::path dir = temp_dir() / "calibration_targets";
  write_small_data(dir);
  const CliResult r = run_cli({"calibrate", "--data", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* line :
       {"every point within 15%: ", "median |error| within 8%: ", "order kept where measured",
        "sd.json first/last ratio within 5%: measured 1.250",
        "profile counters within 20%:", "sd.json #0 sd_attention",
        "vector_engine_instruction_count", "scalar_engine_instruction_time",
        "Vector-engine utilisation within 10 points:", "mamba.json #0 mamba_tutorial_v1"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  // SBUF traffic is published but not compared (the model's byte counts are bounding boxes).
  EXPECT_EQ(r.out.find("sbuf_read"), std::string::npos) << r.out;

  const CliResult j = run_cli({"calibrate", "--data", dir.string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  const nlohmann::json o = nlohmann::json::parse(j.out);
  const nlohmann::json& t = o.at("targets");
  std::map<std::string, double> counters;  // counter -> measured
  for (const auto& row : t.at("counters").at("rows"))
    counters[row.at("counter")] = row.at("measured");
  EXPECT_EQ(counters, (std::map<std::string, double>{{"vector_engine_instruction_count", 40.0},
                                                     {"scalar_engine_instruction_time", 12.5}}));
  ASSERT_EQ(t.at("vector_utilisation").at("rows").size(), 1u);
  EXPECT_EQ(t.at("vector_utilisation").at("rows")[0].at("measured").get<double>(), 90.0);
  // The anchor compares the instruction's duration (2N cycles at 1.12 GHz plus the static
  // overhead), not the program's latency with its loads and store.
  for (const auto& p : o.at("points")) {
    if (p.at("kernel") != "vector_tensor_tensor_anchor") continue;
    EXPECT_EQ(p.at("measure"), "vector_engine_instruction_time");
    EXPECT_GT(p.at("predicted_us").get<double>(), 2.0 * 8192 / 1.12 / 1000.0);
    EXPECT_LT(p.at("predicted_us").get<double>(), 2.0 * 8192 / 1.12 / 1000.0 + 0.2);
  }
}

TEST(CliCalibrate, BadTargetFieldsExitTwoNamingTheField) {
  const struct {
    const char* doc;
    const char* names;
  } cases[] = {
      {R"({"params": {"P": 64, "N": 64}, "steps": [{"workload": "vector_tensor_tensor_anchor",
           "measure": "sbuf_read_bytes", "latency_ms": 1}]})",
       "steps[0].measure"},
      {R"({"params": {"P": 64, "N": 64}, "steps": [{"workload": "vector_tensor_tensor_anchor",
           "vector_active_pct": 120, "latency_ms": 1}]})",
       "steps[0].vector_active_pct"},
      {R"({"params": {"P": 64, "N": 64}, "profile": {"steps": [3], "fields": {}},
           "steps": [{"workload": "vector_tensor_tensor_anchor", "latency_ms": 1}]})",
       "profile.steps[0]"},
      {R"({"params": {"P": 64, "N": 64},
           "profile": {"steps": [0], "fields": {"vector_engine_instruction_count": [1, 2]}},
           "steps": [{"workload": "vector_tensor_tensor_anchor", "latency_ms": 1}]})",
       "profile.fields.vector_engine_instruction_count"},
  };
  for (const auto& c : cases) {
    const fs::path dir = temp_dir() / "calibration_bad_target";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "bad.json") << c.doc;
    const CliResult r = run_cli({"calibrate", "--data", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find(c.names), std::string::npos) << c.names << "\n" << describe(r);
  }
}

}  // namespace
}  // namespace ncv::cli_test
