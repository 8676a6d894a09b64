// The NKI front end records where each instruction came from (label frontend): every traced
// instruction carries the line of the kernel file that made the call (`@line N`, the file in
// `source "FILE"`), a call inside a helper module is attributed to the kernel line that called
// the helper, and a dynamic-check failure of a traced kernel names that line.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// Line numbers matter: the test names them. The load reads one row past the end at the last tile.
constexpr const char* kKernel =
    "import neuronxcc.nki.language as nl\n"                                      // 1
    "import lines_helper\n"                                                      // 2
    "\n"                                                                         // 3
    "def shifted_copy(a):\n"                                                     // 4
    "    rows, cols = a.shape\n"                                                 // 5
    "    assert rows % 128 == 0 and cols <= 512\n"                               // 6
    "    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)\n"  // 7
    "    for i in nl.affine_range(rows // 128):\n"                               // 8
    "        t = nl.load(a[nl.ds(i * 128 + 1, 128), :])\n"                       // 9
    "        u = lines_helper.double(t)\n"                                       // 10
    "        nl.store(out[nl.ds(i * 128, 128), :], value=u)\n"                   // 11
    "    return out\n";                                                          // 12

constexpr const char* kHelper =
    "import neuronxcc.nki.language as nl\n"
    "\n"
    "def double(t):\n"
    "    return nl.add(t, t)\n";

fs::path write_kernel() {
  const fs::path dir = temp_dir() / "source_lines";
  fs::create_directories(dir);
  std::ofstream(dir / "lines_kernel.py") << kKernel;
  std::ofstream(dir / "lines_helper.py") << kHelper;
  return dir / "lines_kernel.py";
}

TEST(FrontendSourceLines, EachInstructionNamesTheKernelLineThatMadeIt) {
  const fs::path file = write_kernel();
  const CliResult r = run_cli({"import", file.string() + ":shifted_copy"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("kernel shifted_copy\nsource \"lines_kernel.py\"\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dma_copy t[:, :], a[i * 128 + 1:+128, :] @line 9\n"), std::string::npos)
      << r.out;
  // nl.add runs in lines_helper.py: the kernel line that called the helper.
  EXPECT_NE(r.out.find("tensor_tensor t_2[:, :], t[:, :], t[:, :], op=add @line 10\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dma_copy out[i * 128:+128, :], t_2[:, :], queue=1 @line 11\n"),
            std::string::npos)
      << r.out;
}

TEST(FrontendSourceLines, ADynamicCheckFailureNamesTheLine) {
  const fs::path file = write_kernel();
  const CliResult r = run_cli(
      {"run", file.string() + ":shifted_copy", "--param", "rows=256", "--param", "cols=64"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("out_of_bounds"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("` (lines_kernel.py:9), at i=1"), std::string::npos) << describe(r);
  // --json gives the location as fields of its own.
  const CliResult j = run_cli({"run", file.string() + ":shifted_copy", "--param", "rows=256",
                               "--param", "cols=64", "--json"});
  EXPECT_EQ(j.exit_code, 1) << describe(j);
  const nlohmann::json e = nlohmann::json::parse(j.out).at("error");
  EXPECT_EQ(e.at("source").at("file"), "lines_kernel.py") << j.out;
  EXPECT_EQ(e.at("source").at("line"), 9) << j.out;
}

// The Perfetto trace of a traced kernel names each slice's source line after its loop indices
// (and in args.source).
constexpr const char* kCopyKernel =
    "import neuronxcc.nki.language as nl\n"                                 // 1
    "\n"                                                                    // 2
    "def copy_tiles(a):\n"                                                  // 3
    "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"  // 4
    "    for i in nl.affine_range(a.shape[0] // 128):\n"                    // 5
    "        t = nl.load(a[nl.ds(i * 128, 128), :])\n"                      // 6
    "        nl.store(out[nl.ds(i * 128, 128), :], value=t)\n"              // 7
    "    return out\n";                                                     // 8

TEST(FrontendSourceLines, TraceSlicesNameTheLine) {
  const fs::path dir = temp_dir() / "source_lines";
  fs::create_directories(dir);
  std::ofstream(dir / "copy_kernel.py") << kCopyKernel;
  const fs::path trace = dir / "trace.json";
  fs::remove(trace);
  const CliResult r = run_cli({"bench", (dir / "copy_kernel.py").string() + ":copy_tiles",
                               "--input", "a=fp32[256,64]", "--trace", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::ifstream in(trace);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"name\": \"dma_copy [i=1] copy_kernel.py:6\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\": \"dma_copy [i=0] copy_kernel.py:7\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"source\": \"copy_kernel.py:7\""), std::string::npos) << text;
}

}  // namespace
}  // namespace ncv::cli_test
