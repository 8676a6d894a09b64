// Shared by the timing tests: a program run trace-only and scheduled, a cost table with round
// constants for hand-computed schedules, and the two-loads-then-add program whose every number
// those tests work out by hand.
#pragma once

#include <gtest/gtest.h>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/timing/timing.h"

namespace ncv::timing_test {

struct TimedRun {
  Program program;
  Trace trace;
  Schedule schedule;
};

inline TimedRun run_and_schedule(Program p, const ParamValues& params,
                                 const CostTable& costs = cost_table_trn1()) {
  RunOptions ro;
  ro.compute_values = false;
  RunResult r = run_program(p, params, {}, ro);
  EXPECT_FALSE(r.error) << r.error->message;
  Schedule s = schedule_trace(p, r.trace, costs);
  return TimedRun{std::move(p), std::move(r.trace), std::move(s)};
}

// trn1 with round DMA, semaphore and overhead constants, so schedules can be worked out by hand.
inline CostTable round_table() {
  CostTable c = cost_table_trn1();
  c.dma_fixed_ns = 1000;
  c.dma_chunk_overhead_ns = 100;
  c.dma_engine_bytes_per_ns = 16;
  c.dma_transpose_bytes_per_ns = 8;
  c.semaphore_ns = 20;
  c.static_overhead_cycles = 0;
  return c;
}

// Two 32 KiB loads on queue 0 (8 partitions: one DMA engine), then a Vector add of the second.
inline Program two_loads_then_add() {
  Builder b("dma_latency");
  auto x = b.input("x", DType::fp32, {8, 1024});
  auto t = b.sbuf("t", DType::fp32, {8, 1024});
  auto u = b.sbuf("u", DType::fp32, {8, 1024});
  auto v = b.sbuf("v", DType::fp32, {8, 1024});
  b.dma_copy(t(), x(), 0);
  b.dma_copy(u(), x(), 0);
  b.tensor_tensor(v(), u(), u(), AluOp::add);
  return b.finish();
}

}  // namespace ncv::timing_test
