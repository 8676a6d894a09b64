// The timing model's invariants on small programs (simulated time, deterministic): streams are
// in order and never overlap, every instance starts after what it waited for, the makespan
// bounds every engine's busy time, identical traces give identical schedules, double buffering
// pays off on a load -> compute -> store loop, and an extra independent instruction never makes
// the schedule shorter. Each property is also shown to fail on a schedule broken on purpose.
#include "model/timing/timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/timing/profile.h"
#include "model/timing/tests/timed_program.h"

namespace ncv {
namespace {

using timing_test::tile_loop;

// A matmul chain across engines: load, matmul into PSUM, copy out, store.
Program matmul_loop() {
  Builder b("matmul_loop");
  Expr N = b.param("N", 128, 2048, 128);
  auto a = b.input("a", DType::bf16, {128, N});
  auto w = b.input("w", DType::bf16, {128, 128});
  auto y = b.output("y", DType::fp32, {128, N});
  auto ws = b.sbuf("ws", DType::bf16, {128, 128});
  b.dma_copy(ws(), w(), 2);
  b.affine_range("j", Expr::floordiv(N, 128), [&](Expr j) {
    auto as = b.sbuf("as", DType::bf16, {128, 128}, {.bufs = 2});
    auto ps = b.psum("ps", DType::fp32, {128, 128}, {.bufs = 2});
    auto os = b.sbuf("os", DType::fp32, {128, 128}, {.bufs = 2});
    b.dma_copy(as(), a({all(), ds(j * 128, 128)}), 0);
    b.matmul(ps(), ws(), as());
    b.tensor_copy(os(), ps());
    b.dma_copy(y({all(), ds(j * 128, 128)}), os(), 1);
  });
  return b.finish();
}

using Timed = timing_test::TimedRun;
using timing_test::round_table;

Timed timed(Program p, const ParamValues& params, const CostTable& costs = cost_table_trn1()) {
  return timing_test::run_and_schedule(std::move(p), params, costs);
}

// "" when the schedule keeps its invariants, else what breaks.
std::string broken_invariant(const Schedule& s) {
  std::map<int, double> track_end;
  std::map<int, double> busy;
  for (size_t k = 0; k < s.instances.size(); ++k) {
    const TimedInstance& ti = s.instances[k];
    if (ti.end_ns < ti.start_ns) return "instance " + std::to_string(k) + " ends before it starts";
    if (ti.end_ns > s.makespan_ns + 1e-9) return "instance " + std::to_string(k) + " ends late";
    auto it = track_end.find(ti.track);
    if (it != track_end.end() && ti.start_ns < it->second - 1e-9) {
      return "instance " + std::to_string(k) + " overlaps the previous one on its track";
    }
    track_end[ti.track] = ti.end_ns;
    busy[ti.track] += ti.end_ns - ti.start_ns;
    if (ti.waited_for >= 0 &&
        ti.start_ns < s.instances.at(static_cast<size_t>(ti.waited_for)).end_ns - 1e-9) {
      return "instance " + std::to_string(k) + " starts before its dependency ends";
    }
  }
  for (const auto& [track, b] : busy) {
    if (b > s.makespan_ns + 1e-9) return "track " + std::to_string(track) + " busier than makespan";
  }
  return "";
}

TEST(Timing, SchedulesKeepTheirInvariants) {
  for (int64_t bufs : {1, 2, 3}) {
    const Timed t = timed(tile_loop(bufs), {{"N", 1024}});
    EXPECT_EQ(broken_invariant(t.schedule), "") << "bufs " << bufs;
    EXPECT_GT(t.schedule.makespan_ns, 0);
  }
  const Timed m = timed(matmul_loop(), {{"N", 1024}});
  EXPECT_EQ(broken_invariant(m.schedule), "");
  // The check itself finds a broken schedule: move one instance before its dependency.
  Schedule broken = m.schedule;
  for (TimedInstance& ti : broken.instances) {
    if (ti.waited_for >= 0) {
      ti.start_ns = broken.instances[static_cast<size_t>(ti.waited_for)].start_ns;
      break;
    }
  }
  EXPECT_NE(broken_invariant(broken), "");
}

TEST(Timing, MakespanCoversTheLongestDependencyChain) {
  const Timed t = timed(matmul_loop(), {{"N", 1024}});
  // Longest chain along waited-for links and track order, each link adding its duration.
  std::vector<double> chain(t.schedule.instances.size(), 0);
  std::map<int, size_t> last_on_track;
  double longest = 0;
  for (size_t k = 0; k < chain.size(); ++k) {
    const TimedInstance& ti = t.schedule.instances[k];
    double before = 0;
    if (ti.waited_for >= 0) before = chain[static_cast<size_t>(ti.waited_for)];
    if (auto it = last_on_track.find(ti.track); it != last_on_track.end()) {
      before = std::max(before, chain[it->second]);
    }
    chain[k] = before + (ti.end_ns - ti.start_ns);
    last_on_track[ti.track] = k;
    longest = std::max(longest, chain[k]);
  }
  EXPECT_GE(t.schedule.makespan_ns + 1e-6, longest);
  EXPECT_GT(longest, 0);
}

TEST(Timing, IdenticalTracesGiveIdenticalSchedules) {
  const Timed a = timed(matmul_loop(), {{"N", 512}});
  const Timed b = timed(matmul_loop(), {{"N", 512}});
  ASSERT_EQ(a.schedule.instances.size(), b.schedule.instances.size());
  for (size_t k = 0; k < a.schedule.instances.size(); ++k) {
    EXPECT_EQ(a.schedule.instances[k].start_ns, b.schedule.instances[k].start_ns) << k;
    EXPECT_EQ(a.schedule.instances[k].end_ns, b.schedule.instances[k].end_ns) << k;
  }
  EXPECT_EQ(a.schedule.makespan_ns, b.schedule.makespan_ns);
}

TEST(Timing, DoubleBufferingOverlapsLoadsWithCompute) {
  // A sequential loop keeps the declared single buffer; in an affine loop the compiler double
  // buffers it (model/compiler compiler_buffers), which schedules like a declared bufs = 2.
  const double one = timed(tile_loop(1, false, true), {{"N", 2048}}).schedule.makespan_ns;
  const double two = timed(tile_loop(2, false, true), {{"N", 2048}}).schedule.makespan_ns;
  const double three = timed(tile_loop(3, false, true), {{"N", 2048}}).schedule.makespan_ns;
  const double auto_two = timed(tile_loop(1), {{"N", 2048}}).schedule.makespan_ns;
  EXPECT_LT(two, one) << "bufs = 2 must let the next load overlap this tile's compute";
  EXPECT_LE(three, two) << "a third buffer must not slow the loop down";
  EXPECT_EQ(auto_two, timed(tile_loop(2), {{"N", 2048}}).schedule.makespan_ns);
  EXPECT_LT(auto_two, one);
}

// Found by fuzz_timing: dependencies used to be tracked per 32-partition quadrant, so a DMA into
// partitions 17..20 waited for one into 0..3 of the same buffer. Partitions are tracked exactly.
TEST(Timing, DependenciesFollowExactPartitionRanges) {
  Builder b("partition_slices");
  auto x = b.input("x", DType::fp32, {4, 64});
  auto t = b.sbuf("t", DType::fp32, {32, 64});
  b.dma_copy(t({ds(0, 4), all()}), x(), 0);
  b.dma_copy(t({ds(17, 4), all()}), x(), 1);  // same quadrant, no shared partition
  b.dma_copy(t({ds(3, 4), all()}), x(), 2);   // shares partition 3 with the first
  const Timed r = timed(b.finish(), {});
  ASSERT_EQ(r.schedule.instances.size(), 3u);
  const double fixed = cost_table_trn1().dma_fixed_ns;
  EXPECT_EQ(r.schedule.instances[1].waited_for, -1);
  EXPECT_LT(r.schedule.instances[1].start_ns, r.schedule.instances[0].end_ns + fixed);
  EXPECT_EQ(r.schedule.instances[2].waited_for, 0);
  EXPECT_GE(r.schedule.instances[2].start_ns, r.schedule.instances[0].end_ns + fixed);
}

TEST(Timing, AnIndependentInstructionNeverShortensTheSchedule) {
  for (int64_t bufs : {1, 2}) {
    const double base = timed(tile_loop(bufs), {{"N", 1024}}).schedule.makespan_ns;
    const double more = timed(tile_loop(bufs, true), {{"N", 1024}}).schedule.makespan_ns;
    EXPECT_GE(more, base) << "bufs " << bufs;
  }
}

TEST(Timing, CostsFollowTheDocumentedFormulas) {
  const Timed t = timed(matmul_loop(), {{"N", 128}});
  const CostTable& c = cost_table_trn1();
  for (size_t k = 0; k < t.trace.events.size(); ++k) {
    const TraceEvent& ev = t.trace.events[k];
    if (ev.engine != Engine::Tensor) continue;
    // bf16 [K=128, M=128] x [128, N=128]: max(min(64, 128), 128) = 128 cycles at 2.8 GHz
    // (the first matmul also loads its stationary operand).
    const double mm = 128 / c.hw->tensor_ghz;
    const double took = t.schedule.instances[k].end_ns - t.schedule.instances[k].start_ns;
    EXPECT_GE(took, mm - 1e-9);
    EXPECT_LE(took, mm + 128.0 / 4 / c.hw->tensor_ghz + 1e-9);
  }
}

// The duration of the last instance of a program that sets t [128, n] and then runs `last`.
double last_instance_ns(int64_t n,
                        const std::function<void(Builder&, TensorRef&, TensorRef&)>& last,
                        const CostTable& costs = cost_table_trn1()) {
  Builder b("one");
  auto t = b.sbuf("t", DType::fp32, {128, n});
  auto u = b.sbuf("u", DType::fp32, {128, n});
  b.memset(t(), 4.0f);
  last(b, t, u);
  const Timed r = timed(b.finish(), {}, costs);
  const TimedInstance& in = r.schedule.instances.back();
  return in.end_ns - in.start_ns;
}

// A tensor_scalar costs the same whatever its operators (the tensor_scalar page: "performing one
// operator has the same performance cost as performing two operators"; no per-operator cost is
// documented), so a unary op0 costs what add does on the same engine; the one exception, rsqrt
// on GpSimd, is the next test's.
TEST(Timing, UnaryAluOpsCostWhatBinaryOnesDo) {
  auto one = [](AluOp op, std::optional<AluOp> op1, Engine e) {
    return last_instance_ns(512, [&](Builder& b, TensorRef& t, TensorRef& u) {
      b.tensor_scalar(u(), t(), op, Imm{0.0f}, false, op1, Imm{1.0f}, false, e);
    });
  };
  for (Engine e : {Engine::Vector, Engine::GpSimd}) {
    const double add = one(AluOp::add, std::nullopt, e);
    EXPECT_GT(add, 0);
    for (AluOp op : {AluOp::abs, AluOp::square, AluOp::relu, AluOp::rsqrt, AluOp::reciprocal}) {
      if (op == AluOp::rsqrt && e == Engine::GpSimd) continue;
      EXPECT_DOUBLE_EQ(one(op, std::nullopt, e), add) << alu_op_name(op);
      EXPECT_DOUBLE_EQ(one(op, AluOp::multiply, e), add) << alu_op_name(op);
    }
  }
}

// Reverse square root "on GpSIMD Engine is 4x lower [throughput] than Scalar Engine" (SHARED,
// "NKI Engine Selection"): past GpSimd's start, tensor_scalar(op0=rsqrt) on GpSimd streams its
// elements in 4x the time activation(rsqrt) takes on the Scalar engine, on every generation; on
// the Vector engine rsqrt costs what add does.
TEST(Timing, GpSimdRsqrtHasAQuarterOfTheScalarEnginesThroughput) {
  for (const CostTable* gen : {&cost_table_trn1(), &cost_table_trn2(), &cost_table_trn3()}) {
    CostTable c = *gen;
    c.static_overhead_cycles = 0;  // the fitted per-instruction constant, out of the ratio
    const double gpsimd_start_ns = c.gpsimd_start_cycles / c.hw->gpsimd_ghz;
    for (int64_t n : {512, 2048}) {
      const double gpsimd = last_instance_ns(
          n,
          [](Builder& b, TensorRef& t, TensorRef& u) {
            b.tensor_scalar(u(), t(), AluOp::rsqrt, Imm{0.0f}, false, std::nullopt, Imm{0.0f},
                            false, Engine::GpSimd);
          },
          c);
      const double scalar = last_instance_ns(
          n,
          [](Builder& b, TensorRef& t, TensorRef& u) {
            b.activation(u(), t(), {.func = ActFunc::rsqrt});
          },
          c);
      const double gpsimd_add = last_instance_ns(
          n,
          [](Builder& b, TensorRef& t, TensorRef& u) {
            b.tensor_scalar(u(), t(), AluOp::add, Imm{1.0f}, false, std::nullopt, Imm{0.0f}, false,
                            Engine::GpSimd);
          },
          c);
      EXPECT_NEAR(gpsimd - gpsimd_start_ns, 4 * scalar, 1e-6) << c.hw->name << " n=" << n;
      EXPECT_NEAR(gpsimd - gpsimd_start_ns,
                  4 * (gpsimd_add - gpsimd_start_ns) * c.hw->gpsimd_ghz / c.hw->scalar_ghz, 1e-6)
          << c.hw->name << " n=" << n;
      const double vector_rsqrt = last_instance_ns(
          n,
          [](Builder& b, TensorRef& t, TensorRef& u) {
            b.tensor_scalar(u(), t(), AluOp::rsqrt, Imm{0.0f}, false, std::nullopt, Imm{0.0f},
                            false, Engine::Vector);
          },
          c);
      const double vector_add = last_instance_ns(
          n,
          [](Builder& b, TensorRef& t, TensorRef& u) {
            b.tensor_scalar(u(), t(), AluOp::add, Imm{1.0f}, false, std::nullopt, Imm{0.0f}, false,
                            Engine::Vector);
          },
          c);
      EXPECT_DOUBLE_EQ(vector_rsqrt, vector_add) << c.hw->name;
    }
  }
}

TEST(Timing, ProfileCountsWhatRan) {
  const Timed t = timed(matmul_loop(), {{"N", 512}});
  const ProfileSummary p = summarize(t.program, t.trace, t.schedule, cost_table_trn1());
  EXPECT_EQ(p.total_time_ns, t.schedule.makespan_ns);
  EXPECT_EQ(p.matmul_instruction_count, 4);
  EXPECT_EQ(p.tensor.instruction_count, 4);
  // The unpinned PSUM evictions run on the Scalar engine (model/compiler).
  EXPECT_EQ(p.scalar.instruction_count, 4);
  EXPECT_EQ(p.vector.instruction_count, 0);
  EXPECT_EQ(p.dma_transfer_count, 1 + 4 + 4);
  EXPECT_EQ(p.hbm_write_bytes, 128 * 512 * 4);
  EXPECT_GT(p.mfu_estimated_percent, 0);
  EXPECT_LE(p.tensor.active_time_percent, 100);
  EXPECT_EQ(p.fields().front().first, "total_time");
}

TEST(Timing, LaterGenerationsHaveTheirOwnTables) {
  ASSERT_NE(find_cost_table("trn2"), nullptr);
  ASSERT_EQ(find_cost_table("trn9"), nullptr);
  const double t1 = timed(matmul_loop(), {{"N", 1024}}, cost_table_trn1()).schedule.makespan_ns;
  const double t2 = timed(matmul_loop(), {{"N", 1024}}, cost_table_trn2()).schedule.makespan_ns;
  EXPECT_NE(t1, t2);
}

// The DMA fixed cost is latency: a second transfer on the same queue moves its data right after
// the first one's, not a fixed cost later. The waiting compute instance pays the semaphore.
TEST(Timing, DmaFixedCostIsLatencyAndSemaphoresCost) {
  const Timed r = timed(timing_test::two_loads_then_add(), {}, round_table());
  ASSERT_EQ(r.schedule.instances.size(), 3u);
  // 8 partitions: one DMA engine; 32 KiB at 16 B/ns = 2048 ns, 8 contiguous rows of 4 KiB at
  // 100 ns = 800 ns.
  const auto& in = r.schedule.instances;
  EXPECT_DOUBLE_EQ(in[0].start_ns, 1000);
  EXPECT_DOUBLE_EQ(in[0].end_ns, 1000 + 2048 + 800);
  EXPECT_DOUBLE_EQ(in[1].start_ns, in[0].end_ns);
  EXPECT_DOUBLE_EQ(in[1].end_ns, in[0].end_ns + 2848);
  // tensor_tensor fp32 SBUF+SBUF: 2N = 2048 Vector cycles, after the semaphore.
  EXPECT_DOUBLE_EQ(in[2].start_ns, in[1].end_ns + 20);
  EXPECT_NEAR(in[2].end_ns - in[2].start_ns, 2048 / cost_table_trn1().hw->vector_ghz, 1e-9);
}

// An element-wise (transposing) load costs bytes / (engines x transpose rate), no per-element
// descriptor overhead.
TEST(Timing, TransposingLoadsHaveTheirOwnRate) {
  Builder b("transposing_load");
  auto q = b.input("q", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {64, 128});
  b.dma_copy(t(), transposed(q()), 0);
  const Timed r = timed(b.finish(), {}, round_table());
  ASSERT_EQ(r.schedule.instances.size(), 1u);
  // 64 partitions: 8 engines; 32 KiB / (8 x 8 B/ns) = 512 ns (with 100 ns per 4-byte chunk it
  // would be 8192 x 100 / 8 ns more).
  EXPECT_DOUBLE_EQ(r.schedule.instances[0].start_ns, 1000);
  EXPECT_DOUBLE_EQ(r.schedule.instances[0].end_ns, 1512);
}

// A compute engine runs a later, independent instance in the gap before an earlier one that
// waits (the compiler orders each engine's stream); a DMA queue stays in order.
TEST(Timing, ComputeEnginesRunAheadIntoIdleGaps) {
  Builder b("run_ahead");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  auto u = b.sbuf("u", DType::fp32, {128, 64});
  auto z = b.sbuf("z", DType::fp32, {128, 64});
  b.dma_copy(t(), x(), 0);
  b.reciprocal(u(), t());  // Vector, waits for the load
  b.memset(z(), 0.0f);     // Vector, independent
  const Timed r = timed(b.finish(), {}, round_table());
  const auto& in = r.schedule.instances;
  ASSERT_EQ(in.size(), 3u);
  EXPECT_DOUBLE_EQ(in[2].start_ns, 0);
  EXPECT_DOUBLE_EQ(in[1].start_ns, in[0].end_ns + 20);
}

// Rotating copies: in an affine loop the compiler double-buffers `t`, so iteration 1's write of
// t (copy 1) need not wait for iteration 0's reader of copy 0; iteration 2 writes copy 0 again
// and waits for it. In a sequential loop every write waits for the previous reader.
TEST(Timing, RotatingCopiesSeparateIterations) {
  auto build = [](bool sequential) {
    Builder b("rotation");
    auto y = b.output("y", DType::fp32, {128, 3 * 512});
    const std::function<void(Expr)> body = [&](Expr i) {
      auto t = b.sbuf("t", DType::fp32, {128, 512});
      auto u = b.sbuf("u", DType::fp32, {128, 512});
      b.memset(t(), 1.0f);                             // Vector, writes t
      b.activation(u(), t(), {.func = ActFunc::exp});  // Scalar, reads t
      b.dma_copy(y({all(), ds(i * 512, 512)}), u(), 0);
    };
    if (sequential) {
      b.sequential_range("i", Expr(3), body);
    } else {
      b.affine_range("i", Expr(3), body);
    }
    return b.finish();
  };
  const CostTable c = round_table();
  const Timed a = timed(build(false), {}, c);
  const Timed s = timed(build(true), {}, c);
  ASSERT_EQ(a.schedule.instances.size(), 9u);
  const double memset = 512 / c.hw->vector_ghz, exp = 512 / c.hw->scalar_ghz;
  // Affine: the memsets run back to back (copies 0, 1), the third waits for the first exp.
  EXPECT_DOUBLE_EQ(a.schedule.instances[3].start_ns, memset);
  EXPECT_NEAR(a.schedule.instances[6].start_ns, std::max(2 * memset, memset + 20 + exp + 20), 1e-9);
  // Sequential: the second memset waits for the first exp to read t.
  EXPECT_NEAR(s.schedule.instances[3].start_ns, memset + 20 + exp + 20, 1e-9);
  const std::vector<int64_t> copies = rotating_copies(a.program, a.trace, *c.hw);
  EXPECT_EQ(copies.at(a.program.find_tensor("t").value()), 2);
  EXPECT_EQ(rotating_copies(s.program, s.trace, *c.hw).at(s.program.find_tensor("t").value()), 0);
}

}  // namespace
}  // namespace ncv
