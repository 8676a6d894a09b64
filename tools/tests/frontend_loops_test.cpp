// Loops of the new API (label frontend; frontend/README.md "Loops of the new API"): a kernel that
// imports `nki` has Python loops. Its kernels (frontend/tests/kernels/python_loops.py) are traced
// by `ncverify import`: a body with no Python effect stays one loop of the program; a body whose
// Python effects depend on the iteration is unrolled, and runs the same bits as a twin written
// without that effect (a wrong unrolling, e.g. a list grown once, changes them); an unrolled loop
// with symbolic bounds, a register used as a Python value and nl.while_loop are errors at the
// kernel's line; the header says which --param values the trace used and where.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kFile = fs::path(NCV_FRONTEND_KERNELS_DIR) / "python_loops.py";

std::string kernel(const std::string& function) {
  return kFile.string() + ":" + function;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int line_of(const std::string& needle) {
  std::istringstream in(read_file(kFile));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return -1;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string checksum_of(const std::vector<std::string>& args) {
  const CliResult r = run_cli(cat(cat({"run"}, args), {"--json"}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (r.exit_code != 0) return "(run failed)";
  return nlohmann::json::parse(r.out)["outputs"][0]["checksum"].get<std::string>();
}

struct UnrollCase {
  std::string name, function, twin;
  std::string why;  // in the header's "loops unrolled" line
};

void PrintTo(const UnrollCase& c, std::ostream* os) {
  *os << c.name;
}

class FrontendPythonLoops : public ::testing::TestWithParam<UnrollCase> {};

// 10 and 16 tiles: more than the 8 iterations a loop with known bounds unrolls at once
// (unrolling.SMALL_TRIP_COUNT), so the body's effects decide.
TEST_P(FrontendPythonLoops, UnrollsAndRunsAsItsTwin) {
  const UnrollCase& c = GetParam();
  for (const char* n : {"n=1280", "n=2048"}) {
    const std::vector<std::string> shape = {"--param", n, "--param", "m=64"};
    const CliResult imp = run_cli(cat({"import", kernel(c.function)}, shape));
    ASSERT_EQ(imp.exit_code, 0) << describe(imp);
    EXPECT_EQ(imp.out.find("\nfor "), std::string::npos) << imp.out;
    EXPECT_NE(imp.out.find("# loops unrolled"), std::string::npos) << imp.out;
    EXPECT_NE(imp.out.find(c.why), std::string::npos) << imp.out;
    EXPECT_EQ(checksum_of(cat({kernel(c.function)}, shape)),
              checksum_of(cat({kernel(c.twin)}, shape)))
        << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, FrontendPythonLoops,
    ::testing::Values(
        UnrollCase{"AppendsToAList", "appends_to_a_list", "appends_to_a_list_twin",
                   "changes the Python list `tiles`, made before the loop"},
        UnrollCase{"CountsIterations", "counts_iterations", "counts_iterations_twin",
                   "updates `count`, bound before the loop"},
        UnrollCase{"ListOfTensorsByLoopVariable", "rotating_buffers", "rotating_buffers_twin",
                   "needs the loop variable's Python value"},
        UnrollCase{"CarriedRebinding", "carried_rebinding", "carried_in_place",
                   "rebinds `acc`, bound before the loop, and the value is read in a later "
                   "iteration"},
        UnrollCase{"WritesAConfigThroughAMethod", "writes_a_config", "counts_iterations_twin",
                   "changes `cfg` (a Python Progress made before the loop)"}),
    [](const ::testing::TestParamInfo<UnrollCase>& p) { return p.param.name; });

// A body with no Python effect: one symbolic loop (not copies), proved for the whole domain.
TEST(FrontendPythonLoops, ABodyWithoutPythonEffectsStaysALoop) {
  const CliResult imp = run_cli({"import", kernel("stays_a_loop")});
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  EXPECT_NE(imp.out.find("param n in [128, 4096] multiple_of 128"), std::string::npos) << imp.out;
  EXPECT_EQ(count(imp.out, "\nfor j in affine_range("), 1u) << imp.out;
  EXPECT_EQ(count(imp.out, "dma_copy"), 2u) << imp.out;
  EXPECT_EQ(imp.out.find("# loops unrolled"), std::string::npos) << imp.out;
  const CliResult rebinds = run_cli({"import", kernel("rebinds_before_reading")});
  ASSERT_EQ(rebinds.exit_code, 0) << describe(rebinds);
  EXPECT_EQ(count(rebinds.out, "\nfor j in sequential_range("), 1u) << rebinds.out;
  const CliResult causal = run_cli({"import", kernel("causal_prefix_sums")});
  ASSERT_EQ(causal.exit_code, 0) << describe(causal);
  EXPECT_NE(causal.out.find("\nfor q in affine_range(n // 128) {"), std::string::npos)
      << causal.out;
  EXPECT_NE(causal.out.find("\n  for k in sequential_range(q + 1) {"), std::string::npos)
      << causal.out;
  const CliResult prove = run_cli({"prove", kernel("stays_a_loop")});
  EXPECT_EQ(prove.exit_code, 0) << describe(prove);
  EXPECT_NE(prove.out.find("PROVED"), std::string::npos) << prove.out;
}

// `break` at the third tile: Python runs three iterations, the program has three stores.
TEST(FrontendPythonLoops, ABreakUnrollsTheLoop) {
  const CliResult imp =
      run_cli({"import", kernel("breaks_early"), "--param", "n=2048", "--param", "m=64"});
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  EXPECT_EQ(count(imp.out, "dma_copy out["), 3u) << imp.out;
  EXPECT_NE(imp.out.find("leaves the loop early"), std::string::npos) << imp.out;
}

// Python's range counting down over known values runs as Python's range.
TEST(FrontendPythonLoops, ACountdownIsPythonsRange) {
  const CliResult imp = run_cli({"import", kernel("counts_down"), "--input", "a=fp32[4,8]"});
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  EXPECT_NE(imp.out.find("operand0=30"), std::string::npos) << imp.out;
}

// nl.fori_loop with bounds the params express: one sequential loop of the program.
TEST(FrontendPythonLoops, AnOnDeviceLoopIsASequentialLoop) {
  const CliResult imp = run_cli({"import", kernel("on_device_loop")});
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  EXPECT_EQ(count(imp.out, "\nfor j in sequential_range("), 1u) << imp.out;
  const std::vector<std::string> shape = {"--param", "n=1280", "--param", "m=64"};
  EXPECT_EQ(checksum_of(cat({kernel("on_device_loop")}, shape)),
            checksum_of(cat({kernel("rebinds_before_reading")}, shape)));
}

// The header names each --param value a Python decision used, and the line; or that none did.
TEST(FrontendPythonLoops, TheHeaderSaysWhichParamsTheTraceUsed) {
  const CliResult unrolled =
      run_cli({"import", kernel("appends_to_a_list"), "--param", "n=2048", "--param", "m=64"});
  ASSERT_EQ(unrolled.exit_code, 0) << describe(unrolled);
  const std::string used = "# param n fixed to 2048; its value was used by: line " +
                           std::to_string(line_of("tiles.append") - 1) + " (loop unrolled";
  EXPECT_NE(unrolled.out.find(used), std::string::npos) << used << "\n" << unrolled.out;
  EXPECT_NE(unrolled.out.find("param n in [2048, 2048]"), std::string::npos) << unrolled.out;
  const CliResult loop = run_cli({"import", kernel("stays_a_loop"), "--param", "n=2048"});
  ASSERT_EQ(loop.exit_code, 0) << describe(loop);
  EXPECT_NE(loop.out.find("# param n fixed to 2048 by --param; no Python decision needed it"),
            std::string::npos)
      << loop.out;
}

struct LoopError {
  std::string function;
  int line;
  std::string why;
};

// Errors at the kernel's line, exit 2: a loop that must unroll over a symbolic bound names the
// param to fix; a register used as a Python value; nl.while_loop.
TEST(FrontendPythonLoops, WhatCannotBeTracedIsAnErrorAtItsLine) {
  const std::vector<LoopError> cases = {
      {"appends_to_a_list", line_of("tiles.append") - 1, "--param n=VALUE"},
      {"on_device_loop_python_index", line_of("b = bufs[j % 2]"), "the index of an on-device loop"},
      {"while_on_device", line_of("nl.while_loop(1, body)"), "nl.while_loop is not modelled"},
  };
  for (const LoopError& c : cases) {
    SCOPED_TRACE(c.function);
    const CliResult r = run_cli({"import", kernel(c.function)});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    const std::string where = "python_loops.py:" + std::to_string(c.line) + ": ";
    EXPECT_NE(r.err.find(where), std::string::npos) << where << "\n" << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ncv::cli_test
