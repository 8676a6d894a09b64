// The timing model (model/timing/README.md): schedules the interpreter's trace on the engines and
// DMA queues of each core and gives the latency.
//
// Each engine (Tensor, Vector, Scalar, GpSimd) and each DMA queue of each core is an in-order
// stream: an instance starts when its stream is free and every instance it depends on has
// finished (plus a semaphore wait when that instance ran on another stream). Dependencies are
// RAW, WAR and WAW on overlapping physical regions (partition range x byte range in SBUF/PSUM,
// byte range of an HBM tensor), so a buffer with bufs >= 2 lets the next iteration's load overlap
// this iteration's compute and bufs = 1 does not. DMA transfers also share the core's DMA
// engines' bandwidth. Costs come from a CostTable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/interp/trace.h"
#include "model/ir/program.h"
#include "model/timing/cost_table.h"

namespace ncv {
inline namespace timing {

// What set an instance's start (the critical path, critical_path.h, walks these back).
enum class StartBound : uint8_t {
  Nothing,       // starts at 0 (a DMA: after its fixed latency)
  Dependency,    // waited_for's end, plus a semaphore wait from another track, plus a DMA's fixed
                 // latency
  Stream,        // `after`'s end: the instance before it on its engine or DMA queue
  DmaBandwidth,  // `after`'s share of the core's DMA bandwidth ends then (a DMA on any queue)
};

struct TimedInstance {
  double start_ns = 0, end_ns = 0;
  int track = 0;
  StartBound bound = StartBound::Nothing;  // next to track: no padding of its own
  // The dependency that was ready last (the one the instance waited for), or -1; used for
  // flow arrows when it ran on another track.
  int64_t waited_for = -1;
  int64_t after = -1;  // Stream / DmaBandwidth: the instance whose end set the start
};

struct Track {
  std::string name;  // "core0 tensor", "core0 dma q3", ...
  int core = 0;
  Engine engine = Engine::Tensor;
  int queue = 0;  // DMA only
  double busy_ns = 0;
  int64_t instances = 0;
};

struct Schedule {
  std::vector<TimedInstance> instances;  // one per trace event, same order
  std::vector<Track> tracks;             // only tracks that ran something
  double makespan_ns = 0;
  double latency_us() const { return makespan_ns / 1000.0; }
};

// The copies the scheduler rotates per tensor (indexed by TensorId; 0: the buffer is not
// rotated and shares its memory's physical space): the compiler's buffer count
// (model/compiler compiler_buffers) for buffers the kernel declares single-buffered, when all
// of a memory's rotated copies fit it. Region r of a rotated buffer is copy r.iteration mod n, a
// space of its own. Exposed for the fuzz target and tests.
std::vector<int64_t> rotating_copies(const Program& p, const Trace& trace, const HwConfig& hw);

// Throws std::invalid_argument if the trace does not belong to the program.
Schedule schedule_trace(const Program& p, const Trace& trace, const CostTable& costs);

// The duration of one instance on its stream (DMA: the data time; the fixed cost is latency
// before it), without waits.
// Exposed for tests and the profile.
double instance_cost_ns(const CostTable& costs, const Instruction& ins, const TraceEvent& ev,
                        const Trace& trace);

}  // namespace timing
}  // namespace ncv
