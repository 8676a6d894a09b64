// New-API (`import nki`) views end to end (label frontend): `ncverify import` traces kernels that
// reach their tensors through nl.ds, `.ap(...)` and the NkiTensor view methods for every shape
// (frontend/tests/kernels/newapi_views.py), the traced programs run, and a view the IR cannot
// address is refused at the kernel's line with exit 2; a buffer's or an argument's dim stepped
// twice is declared split.
#include <gtest/gtest.h>

#include <sstream>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kFile = fs::path(NCV_FRONTEND_KERNELS_DIR) / "newapi_views.py";

std::string target(const std::string& function) {
  return kFile.string() + ":" + function;
}

int line_of(const std::string& needle) {
  std::istringstream in(read_file(kFile));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return -1;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// nl.ds with loop variables and an `.ap` whose offset is i * 128 * m + j * 64 on an [n, m] HBM
// tensor: one access per storage dim, for every n and m.
TEST(FrontendNewApiViews, DsAndApOffsetsOfLoopVariablesAreSymbolicAccesses) {
  const CliResult r = run_cli({"import", target("column_blocks")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "input a : hbm fp32 [n, m]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :], a[i * 128:+128, j * 64:+64]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy out[i * 128:+128, j * 64:+64], u[:, :]")) << r.out;
  const CliResult run =
      run_cli({"run", target("column_blocks"), "--param", "n=256", "--param", "m=128"});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_TRUE(contains(run.out, "result: ok")) << run.out;
}

// A slice of a merged dim (reshape of an argument) and an `.ap` whose count is a symbolic size.
TEST(FrontendNewApiViews, MergedDimsAndSymbolicCountsAreAccessesForEveryShape) {
  const CliResult r = run_cli({"import", target("batches_flattened")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "input a : hbm fp32 [b, n, m]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :], a[i, :, :]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy out[i * 128:+128, :], t[:, :]")) << r.out;
  const CliResult run =
      run_cli({"run", target("batches_flattened"), "--param", "b=2", "--param", "m=96"});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// `.ap` counts that depend on a loop variable: one that is the same for every value of the loop
// is that constant, one whose last index stays inside the dim for every value is the access's
// size (a loop-dependent size of the IR's access).
TEST(FrontendNewApiViews, ApCountsOfLoopVariablesAreAccessesWhereTheyFit) {
  const CliResult r =
      run_cli({"import", target("counts_of_loop_variables"), "--param", "m=64..4096/64"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "for i in affine_range(m // 64) {")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :], a[0:+128, i * 64:+64]")) << r.out;
  EXPECT_TRUE(contains(r.out, "tensor_copy u[:, i:+i * -1 + 64], t[:, i:+i * -1 + 64]")) << r.out;
  const CliResult run = run_cli({"run", target("counts_of_loop_variables"), "--param", "m=256"});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// select / expand_dim / flatten_dims are accesses of the tensors' own dims.
TEST(FrontendNewApiViews, ViewMethodsAreAccessesOfTheStorageDims) {
  const CliResult r = run_cli({"import", target("halves_swapped")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "tensor_copy u[:, 0, :], t[:, 1, :]")) << r.out;
  EXPECT_TRUE(contains(r.out, "tensor_copy u[:, 1, :], t[:, 0, :]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy out[:, :], u[:, :, :]")) << r.out;
  const CliResult run = run_cli({"run", target("halves_swapped")});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// A view stepping twice through one free dim of an SBUF buffer: the buffer is declared with the
// dim split, and the program runs.
TEST(FrontendNewApiViews, ABufferDimSteppedTwiceIsDeclaredSplit) {
  const CliResult r = run_cli({"import", target("blocks_transposed")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "buffer t : sbuf fp32 [128, 4, 16]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :, :], a[:, :]")) << r.out;
  EXPECT_TRUE(contains(r.out, "t[:, :, :].perm(0, 2, 1)")) << r.out;
  const CliResult run = run_cli({"run", target("blocks_transposed")});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// The same for a kernel argument (HBM is flat bytes, row-major): the program declares it split
// and its header says which shape the kernel gave it.
TEST(FrontendNewApiViews, AKernelArgumentsDimSteppedTwiceIsDeclaredSplit) {
  const CliResult r = run_cli({"import", target("split_argument_dim")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(
      contains(r.out, "# a is the kernel's [p, f], the same bytes declared with other dims"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "input a : hbm fp32 [p, 4, 16]")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :, :], a[0:+128, :, 0:+8]")) << r.out;
  const CliResult run = run_cli({"run", target("split_argument_dim")});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

TEST(FrontendNewApiViews, SplittingAnArgumentAnEarlierAccessStraddlesIsRefusedAtItsLine) {
  const CliResult r = run_cli({"import", target("split_argument_straddled")});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const std::string where = "newapi_views.py:" + std::to_string(line_of("[:, :, 8:16]")) + ": ";
  EXPECT_TRUE(contains(r.err, where)) << r.err;
  EXPECT_TRUE(contains(r.err, "the earlier access a[0:+128, 8:+32] is not one access")) << r.err;
  EXPECT_FALSE(contains(r.err, "Traceback")) << r.err;
}

}  // namespace
}  // namespace ncv::cli_test
