// How much work a run does, judged from its trace and its HBM tensors, and the budgets
// fuzz_program and fuzz_timing keep to. The trace-only run comes first (it costs microseconds even
// for a kernel); the value runs follow only when its trace is within budget.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/interp/interpreter.h"
#include "model/interp/trace.h"

namespace ncv::fuzz {

// Element operations of a run, roughly: a matmul counts partitions x free size x contraction,
// any other instance partitions x free size. The per-element reference path costs about this
// many steps, the fast paths a few times less.
inline uint64_t element_work(const Trace& t) {
  uint64_t w = 0;
  for (const TraceEvent& e : t.events) {
    const uint64_t elems = uint64_t{e.partitions} * static_cast<uint64_t>(e.free_elems);
    w += e.engine == Engine::Tensor
             ? elems * static_cast<uint64_t>(std::max<int64_t>(e.stationary_cols, 1))
             : elems;
  }
  return w;
}

// What a value run costs beyond the trace-only one, roughly: its element work plus filling
// every HBM tensor (inputs are drawn one element at a time). Throws InputError on overflow.
inline uint64_t value_run_work(const Program& p, const ParamValues& params, const Trace& t) {
  return element_work(t) + static_cast<uint64_t>(hbm_bytes(p, params));
}

// Value runs (fast path) above this are skipped; the trace-only oracles still run. A mutant of a
// registered kernel at seqlen 1024 does ~10^8 element operations, tens of ms per exec, and a few
// such inputs dominated a replay of the corpus; at this budget a few percent of the corpus skip
// the value runs (figures: bench/README.md, "Measurements behind the code").
inline constexpr uint64_t kMaxValueWork = uint64_t{1} << 21;

// The per-element reference run is compared only below this: higher, the reference transposes
// and matmuls of the few programs near the budget took a noticeable share of the fuzzer's time.
// A structured program's largest matmul, K = M = 128 and N = 8, is 2^17.
inline constexpr uint64_t kMaxReferenceWork = uint64_t{1} << 18;

}  // namespace ncv::fuzz
