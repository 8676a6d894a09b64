// Schedule seeds (RunOptions::schedule_seed) and the determinism check over them: race-free SPMD
// programs give identical bytes under every core order within a step; a program where one core
// reads or writes what another writes in the same lockstep step does not.
#include "model/interp/determinism.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "model/ir/builder.h"

namespace ncv {
namespace {

TEST(ScheduleOrder, SeedZeroIsCoreOrderSeedOneReversesAndOthersPermute) {
  std::vector<int> order;
  schedule_order(0, 7, 4, order);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  schedule_order(1, 7, 4, order);
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 0}));
  // Seeds >= 2: a permutation per step, deterministic, and over a few steps more than one.
  std::set<std::vector<int>> seen;
  for (uint64_t step = 0; step < 64; ++step) {
    schedule_order(5, step, 4, order);
    std::vector<int> again;
    schedule_order(5, step, 4, again);
    EXPECT_EQ(order, again);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2, 3}));
    seen.insert(order);
  }
  EXPECT_GT(seen.size(), 8u);
  schedule_order(9, 3, 1, order);
  EXPECT_EQ(order, (std::vector<int>{0}));
}

// Two cores swap tiles through each other's `recv`: the send is one step, the store the next,
// so the lockstep orders them whatever the order within a step.
Program swap_kernel() {
  Builder b("swap");
  b.grid(2);
  Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {256, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  auto recv = b.sbuf("recv", DType::fp32, {128, 16});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  b.dma_copy(on_core(recv(), 1 - pid), mine());
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  return b.finish();
}

// Only core 0 sends (a loop with trip count 1 - program_id), so core 1 is one instruction
// ahead: it stores `recv` in the very step core 0 writes it. With `zero_first`, core 1 has
// zeroed its `recv` before; without, its store may read bytes nobody wrote yet.
Program racy_kernel(bool zero_first) {
  Builder b("racy");
  b.grid(2);
  Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {256, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  auto recv = b.sbuf("recv", DType::fp32, {128, 16});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  if (zero_first) b.memset(recv(), 0.0f);
  b.sequential_range("only_core0", 1 - pid,
                     [&](Expr) { b.dma_copy(on_core(recv(), 1 - pid), mine()); });
  // Core 0's own recv: its own copy of mine, so core 0's half is always defined.
  b.sequential_range("only_core0_own", 1 - pid, [&](Expr) { b.tensor_copy(recv(), mine()); });
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  return b.finish();
}

TEST(Determinism, RaceFreeExchangeIsIdenticalUnderEverySchedule) {
  Program p = swap_kernel();
  const auto in = random_inputs(p, {}, 3);
  const DeterminismResult r = run_schedules(p, {}, in, {}, 10);
  ASSERT_FALSE(r.first.error) << r.first.error->message;
  EXPECT_EQ(r.runs, 10);
  EXPECT_FALSE(r.mismatch) << r.mismatch->message;
}

TEST(Determinism, ASameStepCrossCoreReadIsReportedWithBothValues) {
  Program p = racy_kernel(/*zero_first=*/true);
  const auto in = random_inputs(p, {}, 3);
  // Run 0 alone cannot see it: core 0 goes first and core 1 stores what it received.
  const DeterminismResult one = run_schedules(p, {}, in, {}, 1);
  ASSERT_FALSE(one.first.error) << one.first.error->message;
  EXPECT_FALSE(one.mismatch);
  const DeterminismResult r = run_schedules(p, {}, in, {}, 10);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->run, 1);  // the reversed order stores the zeros
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.mismatch->output, "y");
  EXPECT_EQ(r.mismatch->element, 128 * 16);  // core 1's half starts there
  EXPECT_EQ(r.mismatch->index, "[128, 0]");
  EXPECT_EQ(r.mismatch->differing, 128 * 16) << r.mismatch->message;
  EXPECT_NE(r.mismatch->value.find("0 (bits 0x00000000)"), std::string::npos)
      << r.mismatch->message;
  EXPECT_NE(r.mismatch->message.find("run 1 (schedule seed 1) differs from run 0 in output 'y'"),
            std::string::npos)
      << r.mismatch->message;
}

TEST(Determinism, ARaceIntoUnwrittenBytesIsReportedAsDifferentEndings) {
  Program p = racy_kernel(/*zero_first=*/false);
  const auto in = random_inputs(p, {}, 3);
  const DeterminismResult r = run_schedules(p, {}, in, {}, 3);
  ASSERT_FALSE(r.first.error) << r.first.error->message;
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->output, "");
  EXPECT_NE(r.mismatch->message.find("uninitialized"), std::string::npos) << r.mismatch->message;
}

TEST(Determinism, TwoCoresWritingTheSameOutputInOneStepAreNondeterministic) {
  // Both cores store their own tile to the same rows of y: the last writer wins.
  Builder b("clash");
  b.grid(2);
  Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {128, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  b.dma_copy(y(), mine());
  Program p = b.finish();
  const auto in = random_inputs(p, {}, 4);
  const DeterminismResult r = run_schedules(p, {}, in, {}, 2);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->element, 0);
}

}  // namespace
}  // namespace ncv
