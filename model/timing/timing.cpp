// The scheduler of the timing model (timing.h).
#include "model/timing/timing.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "model/compiler/compiler_choices.h"
#include "model/timing/internal.h"
#include "model/timing/interval_map.h"

namespace ncv {
inline namespace timing {

namespace {

// Who last wrote and who read since then, for one byte range of one partition range.
struct Segment {
  double write_end = 0;
  int64_t writer = -1;
  double read_end = 0;
  int64_t reader = -1;
};

// Busy intervals of a resource: a core's DMA bandwidth, or a compute engine whose instruction
// stream the compiler orders (model/compiler reorders_across_iterations). Instances are scheduled
// in program order but may start in any time order, so one that is ready early fills an idle gap
// before one reserved later in program order. Touching intervals are merged, so an engine that
// runs back to back keeps one interval.
class Timeline {
 public:
  // A free slot: its start, and the instance whose busy interval ends there (-1 when the slot
  // starts at the time asked for): what the critical path follows back (TimedInstance::after).
  struct Slot {
    double start = 0;
    int64_t after = -1;
  };
  // The earliest s >= t with [s, s + d) free.
  Slot find(double t, double d) const {
    Slot s{t, -1};
    auto it = busy_.upper_bound(s.start);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > s.start) s = Slot{prev->second.end, prev->second.owner};
    }
    while (it != busy_.end() && it->first < s.start + d) {
      if (it->second.end > s.start) s = Slot{it->second.end, it->second.owner};
      ++it;
    }
    return s;
  }
  // Reserves [s, s + d) for instance `owner`; it must be free (find).
  void reserve_at(double s, double d, int64_t owner) {
    if (d <= 0) return;
    double b = s;
    Busy e{s + d, owner};
    auto it = busy_.lower_bound(b);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end == b) {
        b = prev->first;
        busy_.erase(prev);
      }
    }
    it = busy_.find(e.end);
    if (it != busy_.end()) {
      e = it->second;
      busy_.erase(it);
    }
    busy_.emplace(b, e);
  }

 private:
  // An interval's end and the instance that ends it (merging keeps the later one's).
  struct Busy {
    double end = 0;
    int64_t owner = -1;
  };
  std::map<double, Busy> busy_;  // start -> end, disjoint
};

// The access history of one memory space (an on-chip memory of one core, or one HBM tensor):
// partition range -> byte range -> Segment. Exact in both dimensions, since DMA transfers and
// partition-offset accesses need not start on a quadrant boundary.
using Space = IntervalMap<int, IntervalMap<int64_t, Segment>>;

// The space of a region. A buffer the compiler multi-buffers beyond what the kernel declares
// (model/compiler compiler_buffers) gets a space of its own per copy: iteration i of the
// declaring loop uses copy i mod n, so iteration i+1's writes need not wait for iteration i's
// readers, and the allocator that makes the copies places them apart from the other buffers
// (rotating_copies checks that they all fit). Every other on-chip buffer shares its memory's
// physical space, as the trace's addresses place it.
// Bits: memory 60-63, rotated 59, copy 48-54, tensor 16-47 (every 32-bit TensorId: a traced
// kernel may declare more than 2^20 tensors), core 0-15 (Region::core is 16 bits).
uint64_t space_key(const Region& r, bool rotated, int64_t copy) {
  if (r.memory == Memory::HBM) return (uint64_t{3} << 60) | r.tensor;
  uint64_t k = (static_cast<uint64_t>(r.memory) << 60) | r.core;
  if (rotated) {
    k |= (uint64_t{1} << 59) | ((static_cast<uint64_t>(copy) & 0x7f) << 48) |
         (static_cast<uint64_t>(r.tensor) << 16);
  }
  return k;
}

// HBM has no partitions: one band covers the tensor.
std::pair<int, int> partition_range(const Region& r) {
  if (r.memory == Memory::HBM) return {0, 1};
  return {r.partition_begin, r.partition_end};
}

struct Dep {
  double ready = 0;
  int64_t from = -1;
  void take(double t, int64_t who) {
    if (who >= 0 && t > ready) {
      ready = t;
      from = who;
    }
  }
};

constexpr int kEngineTracks = 4;  // Tensor, Vector, Scalar, GpSimd

std::string track_name(int core, Engine e, int queue) {
  const std::string c = "core" + std::to_string(core) + " ";
  switch (e) {
    case Engine::Tensor:
      return c + "tensor";
    case Engine::Vector:
      return c + "vector";
    case Engine::Scalar:
      return c + "scalar";
    case Engine::GpSimd:
      return c + "gpsimd";
    case Engine::Dma:
      return c + "dma q" + std::to_string(queue);
  }
  return c;
}

// The Tensor engine's state on one core: the stationary operand it holds, the last
// MultiplyMoving, and the dI/dt ramp.
struct TensorState {
  Region stationary;
  bool loaded = false;
  double last_mm_ns = 0;
  double warm_since = 0, last_end = -1e300;
};

// The cost of a Tensor-engine instance starting at `start`: `cost` plus the part of
// LoadStationary that does not hide behind the previous matmul, stretched by the throttling ramp
// on generations that have one. Updates the engine's state.
double tensor_engine_ns(TensorState& ts, const CostTable& costs, const Instruction& ins,
                        const TraceEvent& ev, const Trace& trace, double start, double cost) {
  if (std::holds_alternative<Matmul>(ins) || std::holds_alternative<MatmulMx>(ins)) {
    // LoadStationary runs in the background during the previous MultiplyMoving; only the part
    // that does not fit behind it delays this one.
    const Region& st = trace.regions.at(ev.region_begin);
    if (!ts.loaded || !(st == ts.stationary)) {
      cost += std::max(0.0, load_stationary_ns(costs, ev) - ts.last_mm_ns);
      ts.stationary = st;
      ts.loaded = true;
    }
    ts.last_mm_ns = matmul_ns(costs, ev);
  } else {
    ts.loaded = false;  // a transpose replaces the stationary operand
  }
  if (costs.tensor_throttle) {
    // dI/dt ramp: after an idle window the engine restarts at a fraction of its rate.
    if (start - ts.last_end > costs.throttle_ramp_ns) ts.warm_since = start;
    const double warm = std::clamp((start - ts.warm_since) / costs.throttle_ramp_ns, 0.0, 1.0);
    cost /= costs.throttle_start_rate + (1.0 - costs.throttle_start_rate) * warm;
  }
  ts.last_end = start + cost;
  return cost;
}

}  // namespace

// The copies per tensor the scheduler rotates (indexed by TensorId; 0: not rotated): the
// compiler's buffer count (model/compiler compiler_buffers) for a buffer the kernel
// single-buffers. Copies the kernel declares itself are already apart in the trace's addresses.
// The rotation is only given when it fits: per memory, the highest byte the other buffers reach
// plus every rotated buffer's copies (PSUM copies in whole banks, as the allocator places them)
// must stay within the usable bytes per partition; otherwise that memory gets none.
std::vector<int64_t> rotating_copies(const Program& p, const Trace& trace, const HwConfig& hw) {
  const std::vector<int64_t> wanted = compiler_buffers(p);
  auto rotates = [&](const Tensor& t) { return t.on_chip() && t.bufs == 1 && wanted[t.id] > 1; };
  std::vector<uint64_t> lo(p.tensors.size(), UINT64_MAX), hi(p.tensors.size(), 0);
  uint64_t need[2] = {0, 0};  // SBUF, PSUM
  for (const Region& r : trace.regions) {
    if (r.memory == Memory::HBM || r.tensor >= p.tensors.size()) continue;
    lo[r.tensor] = std::min(lo[r.tensor], r.byte_begin);
    hi[r.tensor] = std::max(hi[r.tensor], r.byte_end);
    const int m = r.memory == Memory::SBUF ? 0 : 1;
    if (!rotates(p.tensor(r.tensor))) need[m] = std::max(need[m], r.byte_end);
  }
  for (const Tensor& t : p.tensors) {
    if (!rotates(t) || hi[t.id] <= lo[t.id]) continue;
    const int m = t.memory == Memory::SBUF ? 0 : 1;
    uint64_t span = hi[t.id] - lo[t.id];
    if (m == 1 && hw.psum_bank_bytes > 0) {
      const auto bank = static_cast<uint64_t>(hw.psum_bank_bytes);
      span = (span + bank - 1) / bank * bank;
    }
    need[m] += span * static_cast<uint64_t>(wanted[t.id]);
  }
  const int64_t cap[2] = {hw.sbuf_bytes_per_partition - hw.sbuf_reserved_bytes_per_partition,
                          hw.psum_bytes_per_partition};
  std::vector<int64_t> copies(p.tensors.size(), 0);
  for (const Tensor& t : p.tensors) {
    const int m = t.memory == Memory::SBUF ? 0 : 1;
    if (rotates(t) && need[m] <= static_cast<uint64_t>(std::max<int64_t>(cap[m], 0))) {
      copies[t.id] = wanted[t.id];
    }
  }
  return copies;
}

Schedule schedule_trace(const Program& p, const Trace& trace, const CostTable& costs) {
  if (costs.hw == nullptr) throw std::invalid_argument("cost table without hardware config");
  std::vector<const Instruction*> by_id(p.num_instructions, nullptr);
  std::vector<const Loop*> loops;
  for_each_stmt(p.body, loops, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) by_id.at(i->id) = &i->ins;
  });
  const std::vector<int64_t> copies = rotating_copies(p, trace, *costs.hw);
  const int per_core = kEngineTracks + costs.hw->dma_queues;
  std::unordered_map<uint64_t, Space> spaces;
  std::map<int, int> track_index;    // global track number -> index in Schedule::tracks
  std::vector<double> track_free;    // in-order streams (DMA queues): when the last one ends
  std::vector<int64_t> track_last;   // the instance that ends at track_free, or -1
  std::vector<Timeline> track_busy;  // reordering streams (compute engines): busy intervals
  std::vector<Timeline> dma_pool;
  std::vector<TensorState> tensor_state;

  Schedule s;
  s.instances.resize(trace.events.size());
  for (size_t k = 0; k < trace.events.size(); ++k) {
    const TraceEvent& ev = trace.events[k];
    if (ev.instruction >= by_id.size() || by_id[ev.instruction] == nullptr) {
      throw std::invalid_argument("trace event " + std::to_string(k) +
                                  " names an instruction the program does not have");
    }
    const Instruction& ins = *by_id[ev.instruction];
    const int core = ev.core;
    const size_t cores_seen = static_cast<size_t>(core) + 1;
    if (cores_seen * static_cast<size_t>(per_core) > track_free.size()) {
      track_free.resize(cores_seen * static_cast<size_t>(per_core), 0.0);
      track_last.resize(cores_seen * static_cast<size_t>(per_core), -1);
      track_busy.resize(cores_seen * static_cast<size_t>(per_core));
      dma_pool.resize(cores_seen);
      tensor_state.resize(cores_seen);
    }
    const int local =
        ev.engine == Engine::Dma ? kEngineTracks + ev.queue : static_cast<int>(ev.engine);
    const int track = core * per_core + local;
    const auto tr = static_cast<size_t>(track);

    // Calls f(space, region, partitions, is_write) for every region of this event.
    auto for_each_region = [&](auto&& f) {
      for (int i = 0; i < ev.num_reads + ev.num_writes; ++i) {
        const Region& r = trace.regions.at(ev.region_begin + static_cast<uint32_t>(i));
        const int64_t n =
            r.memory == Memory::HBM || r.tensor >= copies.size() ? 0 : copies[r.tensor];
        f(spaces[space_key(r, n > 0, n > 0 ? r.iteration % n : 0)], r, partition_range(r),
          i >= ev.num_reads);
      }
    };
    // Dependencies: RAW for reads; WAW and WAR for writes.
    Dep dep;
    for_each_region(
        [&](const Space& space, const Region& r, std::pair<int, int> parts, bool write) {
          space.visit(parts.first, parts.second, [&](const IntervalMap<int64_t, Segment>& bytes) {
            bytes.visit(static_cast<int64_t>(r.byte_begin), static_cast<int64_t>(r.byte_end),
                        [&](const Segment& seg) {
                          dep.take(seg.write_end, seg.writer);
                          if (write) dep.take(seg.read_end, seg.reader);
                        });
          });
        });
    double ready = dep.ready;
    if (dep.from >= 0 && s.instances[static_cast<size_t>(dep.from)].track != track) {
      ready += costs.semaphore_ns;
    }
    const auto self = static_cast<int64_t>(k);
    double start = 0, end = 0;
    // What set the start, for the critical path: a slot found after `ready` (Timeline::Slot) or
    // the stream's last end; else the dependency, or nothing.
    StartBound bound = dep.from >= 0 ? StartBound::Dependency : StartBound::Nothing;
    int64_t after = -1;
    if (ev.engine == Engine::Dma) {
      // The fixed cost (descriptors, synchronisation, semaphore-to-start) is latency: it overlaps
      // the previous transfer's data on the queue, which moves transfers in order (DMA, DMABW).
      // The data then shares the core's DMA engines' bandwidth.
      const double dep_ready = ready + costs.dma_fixed_ns;
      const double data_ready = std::max(dep_ready, track_free[tr]);
      const double pool_ns = dma_pool_ns(costs, ev);
      Timeline& pool = dma_pool[static_cast<size_t>(core)];
      const Timeline::Slot slot = pool.find(data_ready, pool_ns);
      pool.reserve_at(slot.start, pool_ns, self);
      start = slot.start;
      end = start + dma_transfer_ns(costs, ev);
      if (slot.after >= 0) {
        bound = StartBound::DmaBandwidth;
        after = slot.after;
      } else if (track_free[tr] > dep_ready) {
        bound = StartBound::Stream;
        after = track_last[tr];
      }
      track_free[tr] = end;
      track_last[tr] = self;
    } else {
      double cost = instance_cost_ns(costs, ins, ev, trace);
      // The compiler orders each compute engine's stream: an instance runs in the first idle gap
      // after its dependencies (model/compiler reorders_across_iterations).
      Timeline& busy = track_busy[tr];
      Timeline::Slot slot{ready, -1};
      if (reorders_across_iterations(ev.engine)) {
        slot = busy.find(ready, cost);
      } else if (track_free[tr] > ready) {
        slot = Timeline::Slot{track_free[tr], track_last[tr]};
      }
      if (ev.engine == Engine::Tensor) {
        cost = tensor_engine_ns(tensor_state[static_cast<size_t>(core)], costs, ins, ev, trace,
                                slot.start, cost);
        if (reorders_across_iterations(ev.engine)) {
          const Timeline::Slot later = busy.find(slot.start, cost);
          if (later.after >= 0) slot = later;
        }
      }
      start = slot.start;
      if (slot.after >= 0) {
        bound = StartBound::Stream;
        after = slot.after;
      }
      busy.reserve_at(start, cost, self);
      end = start + cost;
      if (end >= track_free[tr]) track_last[tr] = self;
      track_free[tr] = std::max(track_free[tr], end);
    }
    TimedInstance& ti = s.instances[k];
    ti.start_ns = start;
    ti.end_ns = end;
    ti.track = track;
    ti.waited_for = dep.from;
    ti.bound = bound;
    ti.after = after;
    s.makespan_ns = std::max(s.makespan_ns, end);

    // Record this instance's reads and writes.
    for_each_region([&](Space& space, const Region& r, std::pair<int, int> parts, bool write) {
      space.update(parts.first, parts.second, [&](IntervalMap<int64_t, Segment>& bytes) {
        bytes.update(static_cast<int64_t>(r.byte_begin), static_cast<int64_t>(r.byte_end),
                     [&](Segment& seg) {
                       if (write) {
                         seg = Segment{end, static_cast<int64_t>(k), 0, -1};
                       } else if (end > seg.read_end) {
                         seg.read_end = end;
                         seg.reader = static_cast<int64_t>(k);
                       }
                     });
      });
    });
    auto [it, fresh] = track_index.emplace(track, static_cast<int>(s.tracks.size()));
    if (fresh) {
      s.tracks.push_back(Track{track_name(core, ev.engine, ev.queue), core, ev.engine, ev.queue});
    }
    Track& t = s.tracks[static_cast<size_t>(it->second)];
    t.busy_ns += end - start;
    t.instances++;
  }
  // Instances refer to tracks by their index in Schedule::tracks.
  for (TimedInstance& ti : s.instances) ti.track = track_index.at(ti.track);
  return s;
}

}  // namespace timing
}  // namespace ncv
