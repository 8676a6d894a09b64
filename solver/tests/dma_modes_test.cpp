// What `prove` claims about dma_copy's oob_skip and dst_rmw (ISA-OLD dma_copy): a row skipped
// because its run-time index leaves the tensor is no out-of-bounds obligation, nor a write that
// covers the rows it skips; a DMA that pairs rows (skip, read-modify-write) has the rule
// "dma rows paired", whose counterexample replays on the interpreter.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "model/ir/builder.h"
#include "solver/bounds.h"
#include "solver/initialization.h"
#include "solver/isa_rules.h"
#include "solver/prove.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// g = cache[table[r]] row by row, any int32 index declared; `fill`: g is set first.
Program gather(bool skip, bool fill) {
  Builder b("gather");
  auto cache = b.input("cache", DType::fp32, {8, 16});
  auto table = b.input("table", DType::int32, {4, 1});
  auto y = b.output("y", DType::fp32, {4, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto g = b.sbuf("g", DType::fp32, {4, 16});
  b.dma_copy(ts(), table());
  if (fill) b.memset(g(), -1.0f);
  DmaCopy d{g(), indirect(cache({ds(0, 4, 0), all()}), 0, ts(), kInt32Min, kInt32Max)};
  d.oob_skip = skip;
  b.emit(d);
  b.dma_copy(y(), g());
  return b.finish();
}

TEST(DmaModes, ASkippingGatherHasNoBoundsObligationOnItsIndirectDim) {
  const auto skipping = prove_bounds(gather(true, true));
  EXPECT_TRUE(not_proved(skipping).empty()) << describe_all(not_proved(skipping));
  for (const Obligation& o : skipping) EXPECT_FALSE(o.indirect_dim) << o.describe();
  // Without oob_skip every int32 index may be read: a counterexample on that dim.
  const auto strict = not_proved(prove_bounds(gather(false, true)));
  ASSERT_EQ(strict.size(), 1u) << describe_all(strict);
  EXPECT_EQ(strict[0].verdict, Verdict::counterexample) << strict[0].describe();
  EXPECT_TRUE(strict[0].indirect_dim);
  EXPECT_EQ(strict[0].tensor, "cache");
}

TEST(DmaModes, ASkippingGatherDoesNotCoverTheRowsItMaySkip) {
  // g read after a skipping gather alone: not proved (the skipped rows stay unwritten).
  const auto alone = not_proved(prove_initialization(gather(true, false)));
  ASSERT_EQ(alone.size(), 1u) << describe_all(alone);
  EXPECT_EQ(alone[0].tensor, "g");
  EXPECT_NE(alone[0].verdict, Verdict::proved);
  EXPECT_NE(alone[0].unknown_reason.find("oob_skip"), std::string::npos) << alone[0].describe();
  // The same gather without oob_skip writes every row; and a memset before it covers them.
  EXPECT_TRUE(not_proved(prove_initialization(gather(false, false))).empty());
  EXPECT_TRUE(not_proved(prove_initialization(gather(true, true))).empty());
}

// A read-modify-write of y[table[r]] += x row by row, x of `src_rows` rows.
Program accumulate(int64_t src_rows) {
  Builder b("scatter_add");
  auto x = b.input("x", DType::fp32, {src_rows, 64 / src_rows});
  auto table = b.input("table", DType::int32, {4, 1}, ValueRange{0, 5});
  auto y = b.output("y", DType::fp32, {6, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto xs = b.sbuf("xs", DType::fp32, {src_rows, 64 / src_rows});
  auto zs = b.sbuf("zs", DType::fp32, {6, 16});
  b.dma_copy(ts(), table());
  b.dma_copy(xs(), x());
  b.memset(zs(), 0.0f);
  b.dma_copy(y(), zs());
  DmaCopy d{indirect(y({ds(0, 4, 0), all()}), 0, ts(), 0, 5), xs()};
  d.dst_rmw = AluOp::add;
  b.emit(d);
  return b.finish();
}

TEST(DmaModes, RowsPairedIsProvedOrACounterexampleThatReplays) {
  const std::string rule = "dma rows paired (oob_skip, dst_rmw)";
  size_t seen = 0;
  for (const Obligation& o : prove_isa_rules(accumulate(4))) {
    if (o.rule != rule) continue;
    ++seen;
    EXPECT_EQ(o.verdict, Verdict::proved) << o.describe();
  }
  EXPECT_EQ(seen, 1u);
  bool refuted = false;
  for (const Obligation& o : prove_isa_rules(accumulate(2))) {
    if (o.rule != rule) continue;
    EXPECT_EQ(o.verdict, Verdict::counterexample) << o.describe();
    ASSERT_TRUE(o.replay) << o.describe();
    EXPECT_TRUE(o.replay->reproduced) << o.describe();
    refuted = true;
  }
  EXPECT_TRUE(refuted);
}

// A DMA that transposes an SBUF tile (its source viewed across partitions, as
// nisa.dma_transpose from SBUF) is proved like any DMA: bounds, element counts, allocation and
// initialization; reading partitions nobody wrote is refuted.
Program transpose_on_chip(int64_t rows_written) {
  Builder b("sbuf_transpose");
  auto x = b.input("x", DType::fp16, {16, 128});
  auto y = b.output("y", DType::fp16, {128, 16});
  auto a = b.sbuf("a", DType::fp16, {16, 128});
  auto t = b.sbuf("t", DType::fp16, {128, 16});
  b.dma_copy(a({ds(0, rows_written), all()}), x({ds(0, rows_written), all()}));
  Access across = a();
  across.perm = {1, 0};
  b.dma_copy(t(), across);
  b.dma_copy(y(), t());
  return b.finish();
}

TEST(DmaModes, ATransposingDmaFromSbufIsProved) {
  const auto all = prove_program(transpose_on_chip(16));
  EXPECT_FALSE(all.empty());
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(not_proved(all));
  const auto half = not_proved(prove_initialization(transpose_on_chip(8)));
  ASSERT_EQ(half.size(), 1u) << describe_all(half);
  EXPECT_EQ(half[0].verdict, Verdict::counterexample) << half[0].describe();
  EXPECT_EQ(half[0].tensor, "a");
}

}  // namespace
}  // namespace ncv::solver
