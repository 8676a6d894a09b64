// The hostile-input suite, continued (label `hostile`): inputs that are legal in form but break an
// assumption about size or range: a program too long to prove, a shape param that makes the
// program ill-formed where a command would assume it is not, measured data far outside what a
// measurement can be, and placements and grids past the model's limits. Each runs the built
// binary as a user would and asserts the exit code and that the message names what, where and
// why (hostile_test.cpp has the rest of the suite and its conventions).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// run_cli, and the wall-clock seconds it took.
CliResult run_timed(const std::vector<std::string>& args, double& seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = run_cli(args);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// A straight-line program of `n` instructions whose proof needs Z3 (a symbolic width N): each
// copies one column into a tile, so every obligation is small and the proof stays fast.
std::string copies_program(int n) {
  std::string text =
      "kernel long_copies\nparam N in [64, 4096]\ninput x : hbm fp32 [128, N]\n"
      "output y : hbm fp32 [128, N]\nbuffer t : sbuf fp32 [128, 64]\n";
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i % 64);
    text += "dma_copy t[:, " + k + ":+1], x[:, N - " + std::to_string(i % 64 + 1) + ":+1]\n";
  }
  return text + "dma_copy y[:, 0:+64], t[:, :]\n";
}

// A chain of `n` updates of one tile: every read's initialization obligation weighs every
// earlier write, so the proof grows quadratically (5,000 instructions took 77 s).
std::string chain_program(int n) {
  std::string text =
      "kernel long_chain\ninput x : hbm fp32 [128, 64]\noutput y : hbm fp32 [128, 64]\n"
      "buffer t : sbuf fp32 [128, 64]\ndma_copy t[:, :], x[:, :]\n";
  for (int i = 0; i < n; ++i) text += "tensor_scalar t[:, :], t[:, :], op0=add, operand0=1\n";
  return text + "dma_copy y[:, :], t[:, :]\n";
}

// --- 1. prove: the process ends with its verdict, and keeps a budget -------------------------

TEST(HostileLimits, ProveOfALongProgramExitsAsSoonAsItHasPrintedItsVerdict) {
  // Before the fix the Z3 context was destroyed at exit: on this file the verdict came after
  // ~2 s and the process ended ~12 s later (Z3_del_context). The margin is that wide on purpose.
  const std::string file = write_temp("long_copies.nkir", copies_program(8000)).string();
  double wall = 0;
  const CliResult r = run_timed({"prove", file, "--json"}, wall);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("pass").get<bool>()) << r.out;
  const double proving = j.at("seconds").get<double>();
  EXPECT_LT(wall - proving, 3.0) << "proved in " << proving << " s, exited after " << wall << " s";
}

TEST(HostileLimits, ProveKeepsItsBudgetOnAProgramTooLongToProveInIt) {
  const std::string file = write_temp("long_chain.nkir", chain_program(20000)).string();
  const CliResult text = run_cli({"prove", file, "--budget-s", "1"});
  EXPECT_EQ(text.exit_code, 1) << describe(text);
  EXPECT_NE(text.out.find("\nNOT PROVED\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("\nPROVED\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NOT PROVED for lack of time: the budget of 1.00 s per program ran out "
                          "(--budget-s raises it)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("[initialization] not examined"), std::string::npos) << text.out;
  // The budget holds: the JSON's own accounting, within one obligation's work of it.
  const CliResult json = run_cli({"prove", file, "--budget-s", "1", "--json"});
  ASSERT_EQ(json.exit_code, 1) << describe(json);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_FALSE(j.at("pass").get<bool>());
  EXPECT_LT(j.at("seconds").get<double>(), 4.0) << json.out.substr(0, 2000);
  EXPECT_GT(j.at("total").at("initialization").at("out_of_budget").get<int>(), 0);
  EXPECT_TRUE(j.at("programs").at(0).contains("out_of_budget"));
  // A budget that cannot be kept is refused.
  for (const char* bad : {"0", "-1", "nan", "inf"}) {
    expect_exit(run_cli({"prove", file, "--budget-s", bad}), 2, {"--budget-s"});
  }
  // So is any number of seconds that is not a number: CLI::Range let "nan" through, which
  // reached a deadline or a cast to milliseconds (undefined behaviour).
  expect_exit(run_cli({"check", "sd_attention", "--budget-s", "nan"}), 2, {"--budget-s", "nan"});
  expect_exit(run_cli({"bugs", "--gate", "--budget-s", "nan"}), 2, {"--budget-s", "nan"});
  expect_exit(run_cli({"report", "--frontier-timeout-s", "nan"}), 2,
              {"--frontier-timeout-s", "nan"});
}

// --- 2. frontier: fixed params the program cannot run at are refused -----------------------

// d_head's declared domain is all of int64, so only the program's own shapes say which values run.
const std::string kWideDomain =
    "kernel wide\nparam seqlen in [128, 4096] multiple_of 128\n"
    "param d_head in [-9223372036854775808, 9223372036854775807]\n"
    "input q : hbm fp32 [seqlen, d_head]\noutput out : hbm fp32 [seqlen, d_head]\n"
    "for i in affine_range(seqlen // 128) {\n  buffer t : sbuf fp32 [128, d_head]\n"
    "  dma_copy t[:, :], q[i * 128:+128, :]\n  dma_copy out[i * 128:+128, :], t[:, :]\n}\n";

TEST(HostileLimits, FrontierRefusesFixedParamsAtWhichTheProgramCannotRun) {
  const std::string file = write_temp("wide_domain.nkir", kWideDomain).string();
  const auto frontier = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"frontier", file, "--gen", "trn1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  // Before the fix each of these answered "everything searched fits" (exit 0): a dimension below
  // 1 was assumed away, so no value of seqlen was even considered.
  for (const std::string v : {"-9223372036854775808", "-1", "0"}) {
    const CliResult r = frontier({"--param", "d_head=" + v});
    expect_exit(r, 2,
                {"--param d_head=" + v, "tensor 'q' dimension 1 (d_head)", "below 1",
                 "allowed: d_head in [1, 9223372036854775807]"});
    EXPECT_EQ(r.out.find("everything searched fits"), std::string::npos) << describe(r);
  }
  // Not given: its least declared value, said so.
  expect_exit(frontier({}), 2,
              {"d_head=-9223372036854775808 (not given: its least declared value)", "below 1"});
  // Bytes beyond int64 where the search starts.
  expect_exit(frontier({"--param", "d_head=2305843009213693952"}), 2,
              {"--param d_head=2305843009213693952", "bytes of tensor 'q'", "int64", "seqlen=128"});
  // A dimension that is an expression: the constraint is named.
  std::string offset = kWideDomain;
  offset.replace(offset.find("[128, d_head]"), 13, "[128, d_head - 3]");
  expect_exit(run_cli({"frontier", write_temp("offset_dim.nkir", offset).string(), "--param",
                       "d_head=3", "--gen", "trn1"}),
              2, {"--param d_head=3", "tensor 't'", "the value 0", "with d_head + -3 >= 1"});
  const CliResult ok = frontier({"--param", "d_head=64"});
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
  // The searched param's own values: one where a dimension is below 1 does not fit.
  std::string low = kWideDomain;
  low.replace(low.find("[128, 4096]"), 11, "[-256, 4096]");
  const CliResult nowhere = run_cli({"frontier", write_temp("low_seqlen.nkir", low).string(),
                                     "--param", "d_head=64", "--gen", "trn1"});
  EXPECT_EQ(nowhere.exit_code, 0) << describe(nowhere);
  EXPECT_NE(nowhere.out.find("fits nowhere: seqlen=-256 already does not (dimensions >= 1: "
                             "tensor 'q' gets dimension seqlen = -256"),
            std::string::npos)
      << describe(nowhere);
  EXPECT_NE(nowhere.out.find("no memory to show at seqlen=-256"), std::string::npos)
      << describe(nowhere);
}

TEST(HostileLimits, EveryCommandTakingShapeParamsRefusesValuesOutsideTheDomain) {
  // A registered kernel's declared domain is the allowed range; the message names both.
  const std::string bad = "d_head=-9223372036854775808";
  const std::vector<std::vector<std::string>> commands = {
      {"run", "sd_attention", "--param", "seqlen=256", "--param", bad},
      {"bench", "sd_attention", "--param", "seqlen=256", "--param", bad},
      {"check", "sd_attention", "--param", "seqlen=256", "--param", bad},
      {"equiv", "sd_attention_step4", "sd_attention_step5", "--param", bad},
      {"frontier", "sd_attention", "--param", bad, "--gen", "trn1"}};
  for (const std::vector<std::string>& args : commands) {
    const CliResult r = run_cli(args);
    expect_exit(r, 2, {bad, "outside", "[1, 128]"});
  }
}

// --- 3. calibrate: measurements outside what a measurement can be ---------------------------

TEST(HostileLimits, CalibrationDataOutsideAPhysicalRangeIsRefusedNamingFileStepAndField) {
  const std::string params = R"("params": {"seqlen": 512, "d_head": 64})";
  const auto step = [&](const std::string& fields) {
    return "{" + params + R"(, "steps": [{"kernel": "sd_attention", )" + fields + "}]}";
  };
  const auto profiled = [&](const std::string& field, const std::string& value) {
    return "{" + params + R"(, "steps": [{"kernel": "sd_attention", "latency_ms": 0.5}], )" +
           R"("profile": {"steps": [0], "fields": {")" + field + "\": [" + value + "]}}}";
  };
  const struct {
    const char* name;
    std::string text;
    const char* field;
  } cases[] = {
      // 1e308 ms printed inf and -nan and exited 0 before the fix.
      {"huge", step(R"("latency_ms": 1e308)"), "steps[0].latency_ms"},
      {"past_an_hour", step(R"("latency_ms": 3600001)"), "steps[0].latency_ms"},
      {"tiny", step(R"("latency_ms": 1e-300)"), "steps[0].latency_ms"},
      {"subnormal", step(R"("latency_ms": 5e-324)"), "steps[0].latency_ms"},
      // A measure of an engine sd_attention never uses: the model predicts 0 of it.
      {"zero_prediction", step(R"("measure": "gpsimd_engine_instruction_time", "latency_ms": 0.5)"),
       "steps[0].measure: the model predicts 0"},
      {"zero_counter", profiled("vector_engine_instruction_count", "0"),
       "profile.fields.vector_engine_instruction_count[0]"},
      {"huge_counter", profiled("vector_engine_instruction_duration_us", "1e300"),
       "profile.fields.vector_engine_instruction_duration_us[0]"},
      {"negative_counter", profiled("sbuf_read_bytes", "-1"), "profile.fields.sbuf_read_bytes[0]"},
  };
  for (const auto& c : cases) {
    const fs::path dir = temp_dir() / (std::string("calibration_range_") + c.name);
    fs::create_directories(dir);
    std::ofstream(dir / "data.json", std::ios::binary | std::ios::trunc) << c.text;
    const CliResult r = run_cli({"calibrate", "--data", dir.string()});
    expect_exit(r, 2, {(dir / "data.json").string(), c.field});
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << c.name << "\n" << describe(r);
    EXPECT_EQ(r.out.find("inf"), std::string::npos) << c.name << "\n" << describe(r);
  }
  // The ends of the range are measurements.
  const fs::path dir = temp_dir() / "calibration_range_edges";
  fs::create_directories(dir);
  std::ofstream(dir / "data.json", std::ios::binary | std::ios::trunc)
      << "{" + params + R"(, "steps": [{"kernel": "sd_attention", "latency_ms": 1e-6}, )" +
             R"({"kernel": "sd_attention", "latency_ms": 3.6e6}]})";
  const CliResult edges = run_cli({"calibrate", "--data", dir.string()});
  EXPECT_EQ(edges.exit_code, 0) << describe(edges);
  EXPECT_EQ(edges.out.find("nan"), std::string::npos) << describe(edges);
  EXPECT_EQ(edges.out.find("inf"), std::string::npos) << describe(edges);
}

// --- 4. placements and grids past the model's limits ----------------------------------------

const std::string kCopyHeader = "input x : hbm fp32 [128, 64]\noutput y : hbm fp32 [128, 64]\n";
const std::string kCopyThrough = "dma_copy t[:, :], x[:, :]\ndma_copy y[:, :], t[:, :]\n";

TEST(HostileLimits, ConstantPlacementsAndGridsPastTheModelsLimitsAreInvalidPrograms) {
  // A placement at 2^63 - 1 aborted fuzz_program_replay (its end address left int64 in the
  // capacity check) and a grid of 10^12 hung it (a placement checked once per core).
  const struct {
    const char* name;
    std::string text;
    std::vector<std::string> needles;
  } cases[] = {
      {"byte_max",
       "buffer t : sbuf fp32 [128, 64] at (0, 9223372036854775807)\n",
       {":4:1:", "placed at byte 9223372036854775807, outside [0, 4294967296)"}},
      {"byte_negative",
       "buffer t : sbuf fp32 [128, 64] at (0, -256)\n",
       {":4:1:", "placed at byte -256"}},
      {"partition_max",
       "buffer t : sbuf fp32 [128, 64] at (9223372036854775807, 0)\n",
       {":4:1:", "placed at partition 9223372036854775807, outside the 128 partitions"}},
      {"partition_negative",
       "buffer t : sbuf fp32 [128, 64] at (-1, 0)\n",
       {":4:1:", "placed at partition -1"}},
      {"grid",
       "grid 1000000000000\nbuffer t : sbuf fp32 [128, 64] at (0, program_id * 256)\n",
       {"grid 1000000000000 exceeds 64", "1 to 64 program instances"}},
  };
  for (const auto& c : cases) {
    const std::string file = write_temp(std::string("limit_") + c.name + ".nkir",
                                        "kernel k\n" + kCopyHeader + c.text + kCopyThrough)
                                 .string();
    for (const char* cmd : {"run", "prove", "dump"}) {
      std::vector<std::string> needles = c.needles;
      needles.push_back(file);
      expect_exit(run_cli({cmd, file}), 2, needles);
    }
  }
}

TEST(HostileLimits, PlacementsAndGridsFromParamsFailTheRunAndAreRefutedWithoutHanging) {
  // The same values through params: checked where they are evaluated (exit 1), never wrapped.
  const std::string placed =
      write_temp("param_placement.nkir",
                 "kernel k\nparam N in [0, 9223372036854775807]\n" + kCopyHeader +
                     "buffer t : sbuf fp32 [128, 64] at (0, N)\n" + kCopyThrough)
          .string();
  const CliResult run = run_cli({"run", placed, "--param", "N=9223372036854775807"});
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  EXPECT_NE(run.out.find("[capacity]"), std::string::npos) << describe(run);
  EXPECT_NE(run.out.find("from byte 9223372036854775807"), std::string::npos) << describe(run);
  const CliResult proof = run_cli({"prove", placed});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("placement inside SBUF"), std::string::npos) << describe(proof);
  const std::string grid =
      write_temp("param_grid.nkir",
                 "kernel k\nparam G in [1, 1000000000000]\ngrid G\n" + kCopyHeader +
                     "buffer t : sbuf fp32 [128, 64] at (0, program_id * 256)\n" + kCopyThrough)
          .string();
  const CliResult wide = run_cli({"run", grid, "--param", "G=1000000000000"});
  EXPECT_EQ(wide.exit_code, 1) << describe(wide);
  EXPECT_NE(wide.out.find("the model runs 1 to 64 program instances"), std::string::npos)
      << describe(wide);
  const CliResult refuted = run_cli({"prove", grid});
  EXPECT_EQ(refuted.exit_code, 1) << describe(refuted);
  EXPECT_NE(refuted.out.find("grid in [1, 64]"), std::string::npos) << describe(refuted);
}

}  // namespace
}  // namespace ncv::cli_test
