// Reads of bytes a buffer never wrote: harmless when no output depends on them (padding a kernel
// reads with a whole tile and drops), a failure when one does, and always a failure under
// RunOptions::strict_reads (interpreter.h).
#include <gtest/gtest.h>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

// t is written in its first 4 columns only; u = t (the whole tile, padding included); y gets
// u's first `stored` columns, and with `reduce` the row sums of all of u instead.
Program padded_kernel(int64_t stored, bool reduce = false) {
  Builder b("padded");
  auto x = b.input("x", DType::fp32, {128, 4});
  auto y = b.output("y", DType::fp32, {128, reduce ? 1 : stored});
  auto t = b.sbuf("t", DType::fp32, {128, 8});
  auto u = b.sbuf("u", DType::fp32, {128, 8});
  b.dma_copy(t({ds(0, 128), ds(0, 4)}), x());
  b.tensor_copy(u(), t());
  if (reduce) {
    auto s = b.sbuf("s", DType::fp32, {128, 1});
    b.tensor_reduce(s(), u(), AluOp::add);
    b.dma_copy(y(), s());
  } else {
    b.dma_copy(y(), u({ds(0, 128), ds(0, stored)}));
  }
  return b.finish();
}

TEST(UnwrittenReads, PaddingNoOutputDependsOnRunsAndIsNoted) {
  const RunResult r = interptest::run_random(padded_kernel(4), {});
  ASSERT_FALSE(r.error) << r.error->message;
  ASSERT_TRUE(r.unwritten_read);
  EXPECT_EQ(r.unwritten_read->kind, CheckKind::uninitialized_read);
  EXPECT_NE(r.unwritten_read->message.find("'t'"), std::string::npos) << r.unwritten_read->message;
  EXPECT_EQ(r.outputs.at("y").num_elements(), 128 * 4);
}

TEST(UnwrittenReads, PaddingThatReachesAnOutputFailsAndSaysWhere) {
  for (const Program& p : {padded_kernel(5), padded_kernel(8, /*reduce=*/true)}) {
    const RunResult r = interptest::run_random(p, {});
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read);
    EXPECT_NE(r.error->message.find("'t'"), std::string::npos) << r.error->message;
    EXPECT_NE(r.error->message.find("output 'y' depends on them"), std::string::npos)
        << r.error->message;
    EXPECT_FALSE(r.unwritten_read);
    EXPECT_TRUE(r.outputs.empty());
  }
}

TEST(UnwrittenReads, StrictReadsFailAtTheReadItself) {
  RunOptions strict;
  strict.strict_reads = true;
  const RunResult r = interptest::run_random(padded_kernel(4), {}, 1, strict);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read);
  EXPECT_EQ(r.error->message.find("depends on them"), std::string::npos) << r.error->message;
}

TEST(UnwrittenReads, AKernelThatWritesWhatItReadsHasNoNote) {
  const RunResult r = interptest::run_random(padded_kernel(4), {});
  Builder b("clean");
  auto x = b.input("x", DType::fp32, {128, 4});
  auto y = b.output("y", DType::fp32, {128, 4});
  auto t = b.sbuf("t", DType::fp32, {128, 4});
  b.dma_copy(t(), x());
  b.dma_copy(y(), t());
  const RunResult clean = interptest::run_random(b.finish(), {});
  ASSERT_FALSE(clean.error);
  EXPECT_FALSE(clean.unwritten_read);
  // The padded kernel's stored columns are the clean kernel's: the reruns left them alone.
  EXPECT_EQ(r.outputs.at("y").bytes, clean.outputs.at("y").bytes);
}

}  // namespace
}  // namespace ncv
