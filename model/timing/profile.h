// A profile summary of one scheduled run, with neuron-profile's summary field names (SCHEMA,
// SCHEMA), so that numbers from the model and from the hardware profiler line up.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

struct EngineProfile {
  int64_t instruction_count = 0;
  double instruction_time_ns = 0;  // sum of the instances' durations
  double active_time_percent = 0;  // busy time / total_time
};

struct ProfileSummary {
  double total_time_ns = 0;  // makespan
  EngineProfile tensor, vector, scalar, gpsimd;
  int64_t matmul_instruction_count = 0;
  // Bytes read and written: a DMA's exact byte count on each side; for compute instructions the
  // bounding box of each region (partitions x byte range), summed over instances.
  int64_t sbuf_read_bytes = 0, sbuf_write_bytes = 0, psum_read_bytes = 0, psum_write_bytes = 0;
  int64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  int64_t dma_transfer_count = 0;
  double dma_transfer_average_bytes = 0;
  // Model FLOPs of the matmuls (2 per multiply-add) over total_time, against the Tensor engine's
  // bf16 peak (128 x 128 PEs x 2 FLOP x clock).
  double mfu_estimated_percent = 0;

  double latency_us() const { return total_time_ns / 1000.0; }
  // (name, value) in a fixed order: total_time (us), the engine fields, ... as listed above.
  std::vector<std::pair<std::string, double>> fields() const;
};

// The DMA queues' time: the sum of their busy time (queues run side by side, so it may exceed the
// makespan) and the span during which at least one queue of any core moves data.
struct DmaTime {
  double busy_ns = 0;
  double span_ns = 0;
};
DmaTime dma_time(const Trace& trace, const Schedule& s);

ProfileSummary summarize(const Program& p, const Trace& trace, const Schedule& s,
                         const CostTable& costs);

}  // namespace timing
}  // namespace ncv
