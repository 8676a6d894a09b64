// New-API (`import nki`) views end to end (label frontend): `ncverify import` traces kernels that
// reach their tensors through nl.ds, `.ap(...)` and the NkiTensor view methods for every shape
// (frontend/tests/kernels/newapi_views.py), the traced programs run, and a view the IR cannot
// address is refused at the kernel's line with exit 2; a buffer's or an argument's dim stepped
// twice is declared split.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/interp/npy.h"
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
// and its `interface` clause says which shape the kernel gave it.
TEST(FrontendNewApiViews, AKernelArgumentsDimSteppedTwiceIsDeclaredSplit) {
  const CliResult r = run_cli({"import", target("split_argument_dim")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "input a : hbm fp32 [p, 4, 16] interface [p, f]\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "dma_copy t[:, :, :], a[0:+128, :, 0:+8]")) << r.out;
  const CliResult run = run_cli({"run", target("split_argument_dim")});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// A kernel argument and an output both declared split: `run --inputs-from` takes the argument's
// .npy in the kernel's shape [128, 64] or the declared [128, 4, 16], refuses another shape naming
// both, and `--outputs-to` writes the output in the kernel's shape, the same bytes row-major.
TEST(FrontendNewApiViews, SplitArgumentsAndOutputsTravelInTheKernelsShape) {
  // Traced once; the runs take the written program (the clause survives the file).
  const fs::path program = temp_dir() / "split_argument_and_output.nkir";
  fs::remove(program);
  const CliResult r =
      run_cli({"import", target("split_argument_and_output"), "-o", program.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string text = read_file(program);
  EXPECT_TRUE(contains(text, "input a : hbm fp32 [p, 4, 16] interface [p, f]\n")) << text;
  EXPECT_TRUE(contains(text, "output out : hbm fp32 [128, 4, 16] interface [128, 64]\n")) << text;
  HostTensor a(DType::fp32, {128, 64});
  for (int64_t i = 0; i < a.num_elements(); ++i) a.set(i, static_cast<float>(i));
  int run_no = 0;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{128, 64}, {128, 4, 16}}) {
    const fs::path in = temp_dir() / ("split_in" + std::to_string(run_no));
    const fs::path out = temp_dir() / ("split_out" + std::to_string(run_no++));
    fs::remove_all(in);
    fs::remove_all(out);
    fs::create_directories(in);
    HostTensor given = a;
    given.shape = shape;
    std::ofstream(in / "a.npy", std::ios::binary) << encode_npy(given);
    const CliResult run = run_cli({"run", program.string(), "--param", "p=128", "--param", "f=64",
                                   "--inputs-from", in.string(), "--outputs-to", out.string()});
    ASSERT_EQ(run.exit_code, 0) << describe(run);
    EXPECT_TRUE(contains(run.out, "output out: shape=[128, 64]")) << run.out;
    // decode_npy refuses any shape but the kernel's [128, 64]
    const HostTensor got =
        decode_npy(read_file(out / "out.npy"), DType::fp32, {128, 64}, "out.npy");
    for (int64_t row = 0; row < 128; ++row) {
      for (int64_t col = 0; col < 64; ++col) {
        const int64_t from = row * 64 + col / 16 * 16 + (col % 16 + 8) % 16;
        ASSERT_EQ(got.get(row * 64 + col), static_cast<float>(from)) << row << ", " << col;
      }
    }
  }
  const fs::path bad = temp_dir() / "split_in_bad";
  fs::create_directories(bad);
  HostTensor wrong = a;
  wrong.shape = {64, 128};
  std::ofstream(bad / "a.npy", std::ios::binary) << encode_npy(wrong);
  expect_exit(run_cli({"run", program.string(), "--param", "p=128", "--param", "f=64",
                       "--inputs-from", bad.string()}),
              2,
              {"a.npy: .npy shape (64, 128), the program's tensor is [128, 4, 16] (the kernel's "
               "[128, 64], the same elements)"});
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
