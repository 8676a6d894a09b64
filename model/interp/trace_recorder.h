// Internal to the interpreter: builds the Trace of a run, one TraceEvent per executed instruction
// instance with the physical regions it read and wrote (trace.h says what each field means).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/interp/resolved.h"
#include "model/interp/trace.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace interp {

// What an instance did besides its regions, named field by field at the call site:
// record(..., {.partitions = K, .free_elems = N, .stationary_cols = M, ...}).
struct EventSizes {
  int64_t partitions = 0;
  int64_t free_elems = 0;
  int64_t stationary_cols = 0;
  int64_t contiguous_bytes = 0;
  uint64_t bytes = 0;
  bool reduce_readout = false;
  DType in = DType::fp32, out = DType::fp32;
  int queue = 0;
};

class TraceRecorder {
 public:
  explicit TraceRecorder(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // loop_values: the enclosing loops' values, outermost first (TraceEvent::loop_values_begin).
  void record(const InstrStmt& s, int core, Engine engine, std::span<const int64_t> loop_values,
              const std::vector<const Resolved*>& reads, const std::vector<const Resolved*>& writes,
              const EventSizes& sizes);
  Trace take() { return std::move(trace_); }

 private:
  void add_region(const Resolved& r);
  uint32_t loop_values_run(int core, std::span<const int64_t> values);

  bool enabled_;
  Trace trace_;
  // Per core, the last run of loop values recorded: the next instance of the same iteration (or
  // of an enclosing one, whose values are a prefix) reuses it. Per core because SPMD cores step
  // in lockstep and interleave their events.
  struct Run {
    uint32_t begin = 0, size = 0;
  };
  std::vector<Run> last_run_;
};

}  // namespace interp
}  // namespace ncv
