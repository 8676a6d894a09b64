// The critical path of a schedule: the chain of instances that sets the makespan, and where its
// time goes. Walked back from the instance that ends last: each instance's start was set by its
// dependency (after a semaphore wait from another track and, for a DMA, the fixed latency), by the
// instance before it on its stream or on the core's DMA bandwidth, or by nothing
// (TimedInstance::bound). The parts (instruction time per track, waits, DMA latency, gaps) sum to
// the makespan, so the track with the most time on the path is what bounds the kernel.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "model/interp/trace.h"
#include "model/timing/cost_table.h"
#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

struct PathSegment {
  int track = 0;  // index in Schedule::tracks
  double ns = 0;  // instruction time of this track on the path
  int64_t instances = 0;
};

struct CriticalPath {
  double makespan_ns = 0;
  std::vector<PathSegment> segments;  // tracks on the path, most time first
  double waits_ns = 0;                // semaphore waits between tracks
  double dma_latency_ns = 0;          // DMA fixed latency before a transfer's data
  double gaps_ns = 0;                 // idle time nothing above explains (e.g. a start at 0 + x)
  std::map<uint32_t, double> instruction_ns;  // InstrStmt id -> its instances' time on the path
  std::vector<int64_t> instances;             // the chain, last instance first
  int bounded_by = -1;                        // track with the most time on the path, or -1
  double bounded_ns() const { return segments.empty() ? 0 : segments.front().ns; }
};

// `costs` must be the table the schedule was made with (its semaphore and DMA fixed costs).
CriticalPath critical_path(const Trace& trace, const Schedule& s, const CostTable& costs);

}  // namespace timing
}  // namespace ncv
