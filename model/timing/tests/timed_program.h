// Shared by the timing tests: a program run trace-only and scheduled, a cost table with round
// constants for hand-computed schedules, the two-loads-then-add program whose every number
// those tests work out by hand, and the tile loop with a choice of buffer counts.
#pragma once

#include <gtest/gtest.h>

#include <functional>

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

// N/128 tiles of x: load (queue 0), exp on the Scalar engine, a Vector copy, store (queue 1).
// `extra` adds an independent memset on a buffer nothing else touches.
// `sequential`: a sequential_range, whose buffers the compiler does not multi-buffer.
inline Program tile_loop(int64_t bufs, bool extra = false, bool sequential = false) {
  Builder b("tile_loop");
  Expr N = b.param("N", 128, 4096, 128);
  auto x = b.input("x", DType::bf16, {N, 512});
  auto y = b.output("y", DType::bf16, {N, 512});
  const std::function<void(Expr)> body = [&](Expr i) {
    auto t = b.sbuf("t", DType::bf16, {128, 512}, {.bufs = bufs});
    auto u = b.sbuf("u", DType::bf16, {128, 512}, {.bufs = bufs});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}), 0);
    b.activation(t(), t(), {.func = ActFunc::exp});
    b.tensor_copy(u(), t());
    b.dma_copy(y({ds(i * 128, 128), all()}), u(), 1);
  };
  if (sequential) {
    b.sequential_range("i", Expr::floordiv(N, 128), body);
  } else {
    b.affine_range("i", Expr::floordiv(N, 128), body);
  }
  if (extra) {
    auto z = b.sbuf("z", DType::fp32, {128, 64});
    b.memset(z(), 0.0f);
  }
  return b.finish();
}

}  // namespace ncv::timing_test
