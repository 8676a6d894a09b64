// The critical path (model/timing/critical_path.h) on small programs whose bound is known: a chain
// of Vector instructions is bound by the Vector engine, back-to-back loads by their DMA queue; the
// path follows a dependency across engines (paying the semaphore and the DMA fixed latency), its
// parts always sum to the makespan, and the per-instruction table accounts for every instance.
#include "model/timing/critical_path.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/timing/instruction_table.h"
#include "model/timing/profile.h"
#include "model/timing/tests/timed_program.h"

namespace ncv {
namespace {

struct Timed : timing_test::TimedRun {
  CriticalPath path;
};

Timed timed(Program p, const ParamValues& params, const CostTable& costs) {
  Timed t{timing_test::run_and_schedule(std::move(p), params, costs), {}};
  t.path = critical_path(t.trace, t.schedule, costs);
  return t;
}

using timing_test::round_table;

double parts_sum(const CriticalPath& cp) {
  double sum = cp.waits_ns + cp.dma_latency_ns + cp.gaps_ns;
  for (const PathSegment& seg : cp.segments) sum += seg.ns;
  return sum;
}

std::string bound_name(const Timed& t) {
  return t.path.bounded_by < 0 ? "" : t.schedule.tracks.at(t.path.bounded_by).name;
}

// A load, then `n` dependent Vector adds, then a store.
Program vector_chain(int n) {
  Builder b("vector_chain");
  auto x = b.input("x", DType::fp32, {128, 512});
  auto y = b.output("y", DType::fp32, {128, 512});
  auto t = b.sbuf("t", DType::fp32, {128, 512});
  b.dma_copy(t(), x(), 0);
  for (int i = 0; i < n; ++i) b.tensor_tensor(t(), t(), t(), AluOp::add, Engine::Vector);
  b.dma_copy(y(), t(), 1);
  return b.finish();
}

// `n` large independent loads on queue 0 and one small Vector op on the last one.
Program dma_heavy(int n) {
  Builder b("dma_heavy");
  auto x = b.input("x", DType::fp32, {128, 4096});
  auto z = b.sbuf("z", DType::fp32, {128, 8});
  for (int i = 0; i < n; ++i) {
    auto t = b.sbuf("t" + std::to_string(i), DType::fp32, {128, 4096});
    b.dma_copy(t(), x(), 0);
    if (i == n - 1) b.tensor_copy(z(), t({all(), ds(0, 8)}), Engine::Vector);
  }
  return b.finish();
}

using timing_test::tile_loop;

// Two loads on one queue, then a Vector add of the second: every number is known
// (timing_test.cpp DmaFixedCostIsLatencyAndSemaphoresCost).
TEST(CriticalPath, FollowsADependencyAcrossEnginesWithItsWaits) {
  const Timed r = timed(timing_test::two_loads_then_add(), {}, round_table());
  const auto& in = r.schedule.instances;
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].bound, StartBound::Nothing);
  EXPECT_EQ(in[1].bound, StartBound::Stream);
  EXPECT_EQ(in[1].after, 0);
  EXPECT_EQ(in[2].bound, StartBound::Dependency);
  EXPECT_EQ(r.path.instances, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(bound_name(r), "core0 dma q0");
  EXPECT_DOUBLE_EQ(r.path.bounded_ns(), 2 * 2848);
  EXPECT_DOUBLE_EQ(r.path.waits_ns, 20);
  EXPECT_DOUBLE_EQ(r.path.dma_latency_ns, 1000);
  EXPECT_DOUBLE_EQ(r.path.gaps_ns, 0);
  ASSERT_EQ(r.path.segments.size(), 2u);
  EXPECT_EQ(r.path.segments[1].instances, 1);
  EXPECT_NEAR(parts_sum(r.path), r.schedule.makespan_ns, 1e-6);
}

TEST(CriticalPath, AVectorChainIsBoundByTheVectorEngine) {
  const Timed r = timed(vector_chain(40), {}, cost_table_trn1());
  EXPECT_EQ(bound_name(r), "core0 vector");
  EXPECT_GT(r.path.bounded_ns(), 0.5 * r.schedule.makespan_ns);
  EXPECT_EQ(r.path.segments.front().instances, 40);
  // Load and store are on the path too: the chain starts with the load.
  EXPECT_EQ(r.path.instances.back(), 0);
  EXPECT_EQ(r.path.segments.size(), 3u);
  EXPECT_NEAR(parts_sum(r.path), r.schedule.makespan_ns, 1e-6);
}

TEST(CriticalPath, BackToBackLoadsAreBoundByTheirQueue) {
  const Timed r = timed(dma_heavy(8), {}, cost_table_trn1());
  EXPECT_EQ(bound_name(r), "core0 dma q0");
  EXPECT_GT(r.path.bounded_ns(), 0.5 * r.schedule.makespan_ns);
  EXPECT_NEAR(parts_sum(r.path), r.schedule.makespan_ns, 1e-6);
  const DmaTime d = dma_time(r.trace, r.schedule);
  EXPECT_GT(d.busy_ns, 0);
  EXPECT_LE(d.span_ns, d.busy_ns + 1e-6);
  EXPECT_LE(d.span_ns, r.schedule.makespan_ns + 1e-6);
}

// On loops with several queues, engines and buffer counts the parts still sum to the makespan,
// the chain goes back in time, and the table holds every instance and all the path's time.
TEST(CriticalPath, PartsSumToTheMakespanAndTheTableCoversEveryInstance) {
  for (int64_t bufs : {1, 2, 3}) {
    for (const CostTable& costs : {cost_table_trn1(), round_table()}) {
      const Timed r = timed(tile_loop(bufs), {{"N", 2048}}, costs);
      EXPECT_NEAR(parts_sum(r.path), r.schedule.makespan_ns, 1e-6) << "bufs " << bufs;
      ASSERT_FALSE(r.path.instances.empty());
      EXPECT_EQ(r.schedule.instances.at(r.path.instances.front()).end_ns, r.schedule.makespan_ns);
      for (size_t i = 1; i < r.path.instances.size(); ++i) {
        EXPECT_LT(r.path.instances[i], r.path.instances[i - 1]);
      }
      for (const PathSegment& seg : r.path.segments) {
        EXPECT_LE(seg.ns, r.path.bounded_ns());
      }
      const auto rows = instruction_table(r.program, r.trace, r.schedule, r.path);
      ASSERT_EQ(rows.size(), 4u);
      int64_t instances = 0;
      double critical = 0, busy_pct = 0;
      for (const InstructionRow& row : rows) {
        instances += row.instances;
        critical += row.critical_ns;
        busy_pct += row.busy_percent;
        EXPECT_FALSE(row.text.empty());
        EXPECT_LE(row.text.size(), 60u);
      }
      EXPECT_EQ(instances, static_cast<int64_t>(r.trace.events.size()));
      EXPECT_NEAR(critical,
                  parts_sum(r.path) - r.path.waits_ns - r.path.dma_latency_ns - r.path.gaps_ns,
                  1e-6);
      EXPECT_NEAR(busy_pct, 100.0, 1e-6);
      for (size_t i = 1; i < rows.size(); ++i) {
        EXPECT_GE(rows[i - 1].critical_ns, rows[i].critical_ns);
      }
    }
  }
}

TEST(CriticalPath, AnEmptyScheduleHasAnEmptyPath) {
  const CriticalPath cp = critical_path(Trace{}, Schedule{}, cost_table_trn1());
  EXPECT_EQ(cp.bounded_by, -1);
  EXPECT_TRUE(cp.segments.empty());
  EXPECT_EQ(parts_sum(cp), 0);
}

}  // namespace
}  // namespace ncv
