// Initialization obligations: every registered kernel reads only SBUF/PSUM it wrote; a read that
// some shape or iteration leaves uncovered is the smallest counterexample and the interpreter's
// shadow check confirms it (uninitialized_read); writes the encoding does not model, and tiles that
// overlap, give unknown, never proved.
#include "solver/initialization.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "kernels/tests/registry_slices.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;

// y[128, N] = exp(x) with the SBUF tile t[128, N] filled by DMA tiles of 128 columns:
// i in [first, N // 128 - drop_last) — so first = 1 or drop_last = 1 leaves a tile unwritten —
// then read whole by one activation.
Program tiled_fill(int64_t first, int64_t drop_last) {
  Builder b("tiled_fill");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {128, N});
  auto y = b.output("y", DType::fp32, {128, N});
  auto t = b.sbuf("t", DType::fp32, {128, N});
  auto e = b.sbuf("e", DType::fp32, {128, N});
  b.affine_range("i", Expr(first), Expr::floordiv(N, 128) - drop_last, 1, [&](Expr i) {
    b.dma_copy(t({all(), ds(i * 128, 128)}), x({all(), ds(i * 128, 128)}));
  });
  b.activation(e(), t(), {.func = ActFunc::exp});
  b.dma_copy(y(), e());
  return b.finish();
}

// A running sum over tiles in a sequential loop: acc = acc + x tile. `zero_first`: a memset
// before the loop; without it the first iteration adds onto nothing.
Program running_sum(bool zero_first) {
  Builder b("running_sum");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {128, N});
  auto y = b.output("y", DType::fp32, {128, 128});
  auto acc = b.sbuf("acc", DType::fp32, {128, 128});
  if (zero_first) b.memset(acc(), 0.0f);
  b.sequential_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto xt = b.sbuf("xt", DType::fp32, {128, 128});
    b.dma_copy(xt(), x({all(), ds(i * 128, 128)}));
    b.tensor_tensor(acc(), acc(), xt(), AluOp::add);
  });
  b.dma_copy(y(), acc());
  return b.finish();
}

// Each iteration i >= 1 reads the 64 columns iteration i - 1 wrote; `seed`: the pre-loop write of
// columns [0, 64) that the first iteration reads.
Program carried_window(bool seed) {
  Builder b("carried_window");
  Expr N = b.param("N", 128, 1024, 64);
  auto x = b.input("x", DType::fp32, {128, N});
  auto y = b.output("y", DType::fp32, {128, N});
  auto t = b.sbuf("t", DType::fp32, {128, N});
  if (seed) b.dma_copy(t({all(), ds(0, 64)}), x({all(), ds(0, 64)}));
  b.sequential_range("i", Expr(1), Expr::floordiv(N, 64), 1, [&](Expr i) {
    b.tensor_copy(t({all(), ds(i * 64, 64)}), t({all(), ds((i - 1) * 64, 64)}));
  });
  b.dma_copy(y(), t());
  return b.finish();
}

std::vector<Obligation> uncovered(const Program& p) {
  return not_proved(prove_initialization(p));
}

// Registry-wide (README.md "Tests"): one kernel per family at the option sets covering every value
// in the default tier (PerFamily/), every kernel at every option set in the deep tier (Deep/).
class InitializationRegistry : public ::testing::TestWithParam<std::string> {};

TEST_P(InitializationRegistry, EveryOptionSetIsProvedForItsWholeDomain) {
  const kernels::Variant& v = *kernels::find_variant(GetParam());
  size_t programs = 0;
  for (const kernels::LabelledProgram& lp :
       kernels::testing::tier_programs(v, kernels::testing::in_deep_test())) {
    ++programs;
    const auto all =
        prove_initialization(lp.program, {.hw = find_hw_config(kernels::default_generation(v))});
    EXPECT_FALSE(all.empty()) << lp.label;
    for (const Obligation& o : not_proved(all)) ADD_FAILURE() << lp.label << ": " << o.describe();
  }
  EXPECT_GE(programs, 1u);
}

INSTANTIATE_TEST_SUITE_P(PerFamily, InitializationRegistry,
                         ::testing::ValuesIn(kernels::testing::family_representatives()),
                         kernels::testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, InitializationRegistry,
                         ::testing::ValuesIn(kernels::testing::all_kernels()),
                         kernels::testing::kernel_param_name);

TEST(Initialization, TilesCoveringTheWholeReadAreProved) {
  const auto all = prove_initialization(tiled_fill(0, 0));
  // The activation reads t; the DMA out reads e.
  ASSERT_EQ(all.size(), 2u) << describe_all(all);
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(all);
  for (const Obligation& o : all) EXPECT_EQ(o.cls, ObligationClass::initialization);
}

TEST(Initialization, MissingLastTileIsTheSmallestCounterexampleAndReplays) {
  const auto bad = uncovered(tiled_fill(0, 1));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  const Obligation& o = bad[0];
  EXPECT_EQ(o.verdict, Verdict::counterexample) << o.describe();
  EXPECT_EQ(o.tensor, "t");
  EXPECT_NE(o.instruction_text.find("activation"), std::string::npos);
  ASSERT_TRUE(o.counterexample);
  // The least N (one tile, which the loop never writes) and the first element read.
  EXPECT_EQ(o.counterexample->params.at("N"), 128);
  EXPECT_NE(o.counterexample->violated.find("element [0, 0] of 't'"), std::string::npos)
      << o.counterexample->violated;
  ASSERT_TRUE(o.replay);
  EXPECT_TRUE(o.replay->reproduced) << o.replay->detail;
  EXPECT_NE(o.replay->detail.find("uninitialized_read at the same instruction"), std::string::npos)
      << o.replay->detail;
}

TEST(Initialization, MissingFirstTileFailsAtItsFirstColumn) {
  const auto bad = uncovered(tiled_fill(1, 0));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  ASSERT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 128);
  EXPECT_NE(bad[0].counterexample->violated.find("element [0, 0]"), std::string::npos);
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

// nc_stream_shuffle into a fresh tile with 255 entries: the kept partitions stay unwritten. A
// read of the written ones is proved; a read that reaches a kept one (lane 5 of the second
// quadrant: partition 37) is a counterexample the interpreter replays.
Program shuffle_with_kept_lane(int64_t rows_read) {
  Builder b("shuffle_kept");
  auto x = b.input("x", DType::fp32, {64, 8});
  auto y = b.output("y", DType::fp32, {64, 8});
  auto a = b.sbuf("a", DType::fp32, {64, 8});
  auto d = b.sbuf("d", DType::fp32, {64, 8});
  b.dma_copy(a(), x());
  std::vector<int64_t> mask(32);
  for (int64_t i = 0; i < 32; ++i) mask[i] = i >= 5 ? kShuffleKeep : 31 - i;
  b.emit(StreamShuffle{d(), a(), mask});
  b.dma_copy(y(), a());
  b.dma_copy(y({ds(32, rows_read), all()}), d({ds(32, rows_read), all()}));
  b.dma_copy(y({ds(0, rows_read), all()}), d({ds(0, rows_read), all()}));
  return b.finish();
}

TEST(Initialization, AStreamShuffleLeavesItsKeptPartitionsUnwritten) {
  EXPECT_TRUE(uncovered(shuffle_with_kept_lane(5)).empty())
      << describe_all(uncovered(shuffle_with_kept_lane(5)));
  const auto bad = uncovered(shuffle_with_kept_lane(6));
  ASSERT_EQ(bad.size(), 2u) << describe_all(bad);
  ASSERT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
  EXPECT_NE(bad[0].counterexample->violated.find("element [37, "), std::string::npos)
      << bad[0].counterexample->violated;
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

TEST(Initialization, RunningSumNeedsItsZeroingAndFailsAtTheFirstIteration) {
  EXPECT_TRUE(uncovered(running_sum(true)).empty()) << describe_all(uncovered(running_sum(true)));
  const auto bad = uncovered(running_sum(false));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].tensor, "acc");
  ASSERT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
  // Later iterations read what the previous one wrote; only i = 0 reads nothing.
  EXPECT_EQ(bad[0].counterexample->loop_indices.at(0), (std::pair<std::string, int64_t>{"i", 0}));
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

TEST(Initialization, EarlierIterationsCoverAWindowThatMovesWithTheLoop) {
  EXPECT_TRUE(uncovered(carried_window(true)).empty())
      << describe_all(uncovered(carried_window(true)));
  const auto bad = uncovered(carried_window(false));
  ASSERT_FALSE(bad.empty());
  EXPECT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 128);
  EXPECT_EQ(bad[0].counterexample->loop_indices.at(0), (std::pair<std::string, int64_t>{"i", 1}));
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

// A rotating buffer of `slots` one-column slots used the way a software pipeline uses it:
// iteration i reads slot i % slots and writes the tile `slots - 1` ahead into slot
// (i + slots - 1) % slots; the prologue fills slots [0, prologue). Covered exactly when the
// prologue fills every slot the first iterations read before the loop wrote it.
Program pipelined_slots(int64_t slots, int64_t prologue) {
  Builder b("pipelined_slots");
  Expr N = b.param("N", 2, 64);
  auto x = b.input("x", DType::fp32, {128, N + slots});
  auto y = b.output("y", DType::fp32, {128, N});
  auto t = b.sbuf("t", DType::fp32, {128, slots});
  auto o = b.sbuf("o", DType::fp32, {128, N});
  for (int64_t s = 0; s < prologue; ++s) b.dma_copy(t({all(), ds(s, 1)}), x({all(), ds(s, 1)}));
  b.sequential_range("i", N, [&](Expr i) {
    b.tensor_copy(o({all(), ds(i, 1)}), t({all(), ds(Expr::mod(i, slots), 1)}));
    b.dma_copy(t({all(), ds(Expr::mod(i + (slots - 1), slots), 1)}),
               x({all(), ds(i + (slots - 1), 1)}));
  });
  b.dma_copy(y(), o());
  return b.finish();
}

TEST(Initialization, RotatingSlotsOfASoftwarePipelineAreProvedWhenThePrologueFillsThem) {
  for (int64_t slots : {2, 3}) {
    SCOPED_TRACE("slots " + std::to_string(slots));
    EXPECT_TRUE(uncovered(pipelined_slots(slots, slots - 1)).empty())
        << describe_all(uncovered(pipelined_slots(slots, slots - 1)));
    // One slot short: iteration slots - 2 reads the slot nothing has written yet.
    const auto bad = uncovered(pipelined_slots(slots, slots - 2));
    ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
    EXPECT_EQ(bad[0].tensor, "t");
    ASSERT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
    EXPECT_EQ(bad[0].counterexample->loop_indices.at(0),
              (std::pair<std::string, int64_t>{"i", slots - 2}));
    ASSERT_TRUE(bad[0].replay);
    EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
  }
}

// Two iterations write the two halves of t, but which half is (i + 1) % 2: a write index the
// encoding does not solve for its loop variable. The read is covered, yet not provably so here.
TEST(Initialization, WriteThroughModuloIsUnknownNeverProved) {
  Builder b("modulo_halves");
  auto x = b.input("x", DType::fp32, {128, 128});
  auto y = b.output("y", DType::fp32, {128, 128});
  auto t = b.sbuf("t", DType::fp32, {128, 128});
  b.affine_range("i", 2, [&](Expr i) {
    b.dma_copy(t({all(), ds(Expr::mod(i + 1, 2) * 64, 64)}),
               x({all(), ds(Expr::mod(i + 1, 2) * 64, 64)}));
  });
  b.dma_copy(y(), t());
  const auto bad = uncovered(b.finish());
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].verdict, Verdict::unknown);
  EXPECT_FALSE(bad[0].counterexample);
  EXPECT_NE(bad[0].unknown_reason.find("loop variable 'i'"), std::string::npos)
      << bad[0].unknown_reason;
}

// Tiles of 128 columns every 64: they overlap, and together they cover t, but the column's
// last tile (the solved iteration) is past the loop for the last 64 columns. Unknown.
TEST(Initialization, OverlappingTilesAreUnknownNeverProved) {
  Builder b("overlapping_tiles");
  Expr N = b.param("N", 256, 1024, 64);
  auto x = b.input("x", DType::fp32, {128, N});
  auto y = b.output("y", DType::fp32, {128, N});
  auto t = b.sbuf("t", DType::fp32, {128, N});
  b.affine_range("i", Expr::floordiv(N, 64) - 1, [&](Expr i) {
    b.dma_copy(t({all(), ds(i * 64, 128)}), x({all(), ds(i * 64, 128)}));
  });
  b.dma_copy(y(), t());
  const auto bad = uncovered(b.finish());
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].verdict, Verdict::unknown);
  EXPECT_NE(bad[0].unknown_reason.find("overlap"), std::string::npos) << bad[0].unknown_reason;
}

// Two cores (grid 2) exchange tiles the way attention_tkg's LNC2 sendrecv does: each loads its
// half of x into `mine`, sends columns [0, N - drop) of it into the peer's `recv` (a DMA into the
// peer core's buffer, `on_core(recv, 1 - program_id)`), then stores all N columns of `recv`.
// `sender_trips`: the trip count of a loop around the send (1, or 1 - program_id: only core 0
// sends, so core 0's recv stays empty).
Program exchange(int64_t drop, const Expr& sender_trips) {
  Builder b("exchange");
  b.grid(2);
  const Expr pid = Builder::program_id();
  Expr N = b.param("N", 32, 64, 16);
  auto x = b.input("x", DType::fp32, {256, N});
  auto y = b.output("y", DType::fp32, {256, N});
  auto mine = b.sbuf("mine", DType::fp32, {128, N});
  auto recv = b.sbuf("recv", DType::fp32, {128, N});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  b.sequential_range("send", sender_trips, [&](Expr) {
    b.dma_copy(on_core(recv({all(), ds(0, N - drop)}), 1 - pid), mine({all(), ds(0, N - drop)}));
  });
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  return b.finish();
}

TEST(Initialization, APeerCoresWriteIntoThisCoresBufferIsProvedToCoverTheRead) {
  const auto all = prove_initialization(exchange(0, Expr(1)));
  // The send reads mine; the store reads recv, which only the peer writes.
  ASSERT_EQ(all.size(), 2u) << describe_all(all);
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(all);
}

TEST(Initialization, APeerWriteThatCoversTooLittleIsACounterexampleThatReplays) {
  const auto bad = uncovered(exchange(16, Expr(1)));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].tensor, "recv");
  ASSERT_EQ(bad[0].verdict, Verdict::counterexample) << bad[0].describe();
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 32);
  // The first column the peer did not send.
  EXPECT_NE(bad[0].counterexample->violated.find("element [0, 16] of 'recv'"), std::string::npos)
      << bad[0].counterexample->violated;
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

// Only core 0 sends: core 0's recv is never written. The rendezvous need not pair the iterations
// of a loop whose trip count depends on the program id, so the peer write is not modelled there:
// unknown, never proved.
TEST(Initialization, APeerWriteInsideAProgramIdDependentLoopIsUnknownNeverProved) {
  const auto bad = uncovered(exchange(0, 1 - Builder::program_id()));
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].verdict, Verdict::unknown) << bad[0].describe();
  EXPECT_NE(bad[0].unknown_reason.find("depend on the program id"), std::string::npos)
      << bad[0].unknown_reason;
}

// Every core sends into core 0's buffer: not a pairwise exchange (core 0's own send names core 0,
// not its writer), so when the writes land is not modelled and core 1's recv stays empty: unknown.
TEST(Initialization, APeerWriteThatIsNotAPairwiseExchangeIsUnknownNeverProved) {
  Builder b("gather_to_core0");
  b.grid(2);
  const Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {256, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  auto recv = b.sbuf("recv", DType::fp32, {128, 16});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  b.dma_copy(on_core(recv(), pid * 0), mine());
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  const auto bad = uncovered(b.finish());
  ASSERT_EQ(bad.size(), 1u) << describe_all(bad);
  EXPECT_EQ(bad[0].verdict, Verdict::unknown) << bad[0].describe();
}

}  // namespace
}  // namespace ncv::solver
