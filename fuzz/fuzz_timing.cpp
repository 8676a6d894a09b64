// fuzz_timing (fuzz/README.md): random programs (fuzz/support/program_decoder.h) -> interpreter
// trace -> schedule_trace (model/timing/timing.h), checked against invariants computed
// independently here:
//   - every instance has finite 0 <= start <= end, and its track matches its engine / queue;
//   - one instance at a time per stream: instances of one track never overlap in time (compute
//     engines may run them out of trace order: the compiler's reordering across iterations; DMA
//     queues run them in trace order);
//   - dependency order: for every pair of instances whose regions overlap (brute force over all
//     pairs: same memory and core, or the same HBM tensor; partition and byte ranges intersect;
//     for a buffer the scheduler rotates (rotating_copies), the same buffer and the same copy,
//     iteration mod n) with at least one write, the later starts no earlier than the earlier
//     ends: so a write to copy c of a rotated buffer never overlaps a read of copy c, while
//     different copies may overlap; a DMA also starts its data no earlier than the DMA fixed
//     latency after each of its producers ends;
//   - each compute-engine start is 0, or the end of an earlier instance (its stream or the
//     dependency it waited for), plus the semaphore cost at most: the schedule has no
//     unexplained gaps, which gives makespan <= sum of durations + semaphores;
//   - waited_for names an earlier instance whose regions conflict with this one's;
//   - makespan = the last end >= each track's busy time (sum of its durations);
//   - the start bound: `after` names an earlier instance on the same track (Stream) or a DMA of
//     the same core (DmaBandwidth); the critical path (model/timing/critical_path.h) splits the
//     makespan into parts that sum to it, with no unexplained gap;
//   - determinism: the same trace schedules identically; the trace of a trace-only run schedules
//     identically to that of a value run (within the work budget of fuzz/support/run_budget.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/support/fuzz_check.h"
#include "fuzz/support/program_decoder.h"
#include "fuzz/support/run_budget.h"
#include "model/interp/interpreter.h"
#include "model/ir/printer.h"
#include "model/timing/cost_table.h"
#include "model/timing/critical_path.h"
#include "model/timing/timing.h"

namespace {

using namespace ncv;
constexpr const char* kTarget = "fuzz_timing";
constexpr size_t kMaxEvents = 3000;  // the pairwise check is quadratic

// `copies`: rotating_copies of the schedule (0: not rotated).
bool overlap(const Region& a, const Region& b, const std::vector<int64_t>& copies) {
  if (a.memory != b.memory) return false;
  if (a.memory == Memory::HBM) {
    if (a.tensor != b.tensor) return false;
  } else {
    if (a.core != b.core || a.partition_end <= b.partition_begin ||
        b.partition_end <= a.partition_begin) {
      return false;
    }
    const int64_t na = copies.at(a.tensor), nb = copies.at(b.tensor);
    if ((na > 0) != (nb > 0)) return false;  // a rotated buffer's copies are its own
    if (na > 0 && (a.tensor != b.tensor || a.iteration % na != b.iteration % nb)) return false;
  }
  return a.byte_begin < b.byte_end && b.byte_begin < a.byte_end;
}

std::vector<int64_t> g_copies;  // rotating_copies of the case being checked

// Whether instance k must wait for instance j (j < k): a shared byte written by either.
bool conflict(const Trace& t, size_t j, size_t k) {
  const TraceEvent& a = t.events[j];
  const TraceEvent& b = t.events[k];
  for (int x = 0; x < a.num_reads + a.num_writes; ++x) {
    for (int y = 0; y < b.num_reads + b.num_writes; ++y) {
      if (x < a.num_reads && y < b.num_reads) continue;  // read after read
      if (overlap(t.regions[a.region_begin + static_cast<uint32_t>(x)],
                  t.regions[b.region_begin + static_cast<uint32_t>(y)], g_copies)) {
        return true;
      }
    }
  }
  return false;
}

bool same_schedule(const Schedule& a, const Schedule& b) {
  if (a.makespan_ns != b.makespan_ns || a.instances.size() != b.instances.size() ||
      a.tracks.size() != b.tracks.size()) {
    return false;
  }
  for (size_t k = 0; k < a.instances.size(); ++k) {
    const TimedInstance &x = a.instances[k], &y = b.instances[k];
    if (x.start_ns != y.start_ns || x.end_ns != y.end_ns || x.track != y.track ||
        x.waited_for != y.waited_for) {
      return false;
    }
  }
  for (size_t k = 0; k < a.tracks.size(); ++k) {
    if (a.tracks[k].name != b.tracks[k].name || a.tracks[k].busy_ns != b.tracks[k].busy_ns) {
      return false;
    }
  }
  return true;
}

void check_schedule(const Program& p, const Trace& t, const Schedule& s, const CostTable& costs) {
  const auto where = [&] { return "\nprogram:\n" + print_program(p); };
  const size_t n = t.events.size();
  NCV_FUZZ_CHECK(s.instances.size() == n, kTarget, "one timed instance per trace event" + where());
  // Rounding slack: times are sums of doubles computed in different orders here and there.
  const auto eps = [](double x) { return 1e-9 * std::max(1.0, std::fabs(x)); };
  std::vector<double> busy(s.tracks.size(), 0.0);
  std::vector<double> last_end(s.tracks.size(), 0.0);  // DMA queues: in trace order
  std::vector<std::vector<std::pair<double, double>>> intervals(s.tracks.size());
  std::vector<double> ends;
  double makespan = 0;
  for (size_t k = 0; k < n; ++k) {
    const TimedInstance& ti = s.instances[k];
    const TraceEvent& ev = t.events[k];
    const std::string at =
        "instance " + std::to_string(k) + " (instruction " + std::to_string(ev.instruction) + ")";
    NCV_FUZZ_CHECK(std::isfinite(ti.start_ns) && std::isfinite(ti.end_ns) && ti.start_ns >= 0 &&
                       ti.end_ns >= ti.start_ns,
                   kTarget,
                   at + ": bad interval [" + std::to_string(ti.start_ns) + ", " +
                       std::to_string(ti.end_ns) + "]" + where());
    NCV_FUZZ_CHECK(ti.track >= 0 && static_cast<size_t>(ti.track) < s.tracks.size(), kTarget,
                   at + ": track out of range" + where());
    const Track& tr = s.tracks[static_cast<size_t>(ti.track)];
    NCV_FUZZ_CHECK(tr.core == ev.core && tr.engine == ev.engine &&
                       (ev.engine != Engine::Dma || tr.queue == ev.queue),
                   kTarget, at + " ran on track '" + tr.name + "'" + where());
    if (ev.engine == Engine::Dma) {
      NCV_FUZZ_CHECK(
          ti.start_ns + eps(ti.start_ns) >= last_end[static_cast<size_t>(ti.track)], kTarget,
          at + " starts before the previous transfer of '" + tr.name + "' ends" + where());
    }
    intervals[static_cast<size_t>(ti.track)].emplace_back(ti.start_ns, ti.end_ns);
    // No unexplained gap on a compute engine: the start is 0 or an earlier end, possibly plus a
    // semaphore wait. (A DMA's start also waits for the fixed latency and the shared bandwidth.)
    bool explained = ti.start_ns == 0 || ev.engine == Engine::Dma;
    for (size_t j = 0; j < k && !explained; ++j) {
      const double e = s.instances[j].end_ns;
      explained = std::fabs(ti.start_ns - e) <= eps(e) ||
                  std::fabs(ti.start_ns - (e + costs.semaphore_ns)) <= eps(e);
    }
    NCV_FUZZ_CHECK(explained, kTarget,
                   at + " starts at " + std::to_string(ti.start_ns) +
                       ", which is no earlier instance's end" + where());
    for (size_t j = 0; j < k; ++j) {
      if (!conflict(t, j, k)) continue;
      const double latency = ev.engine == Engine::Dma ? costs.dma_fixed_ns : 0.0;
      NCV_FUZZ_CHECK(ti.start_ns + eps(ti.start_ns) >= s.instances[j].end_ns + latency, kTarget,
                     at + " starts at " + std::to_string(ti.start_ns) + " before instance " +
                         std::to_string(j) + " it depends on ends (" +
                         std::to_string(s.instances[j].end_ns) + ", plus " +
                         std::to_string(latency) + " ns DMA latency)" + where());
    }
    if (ti.waited_for >= 0) {
      NCV_FUZZ_CHECK(static_cast<size_t>(ti.waited_for) < k &&
                         conflict(t, static_cast<size_t>(ti.waited_for), k),
                     kTarget,
                     at + " waited for instance " + std::to_string(ti.waited_for) +
                         ", which it does not depend on" + where());
    }
    last_end[static_cast<size_t>(ti.track)] = ti.end_ns;
    busy[static_cast<size_t>(ti.track)] += ti.end_ns - ti.start_ns;
    makespan = std::max(makespan, ti.end_ns);
  }
  for (size_t k = 0; k < intervals.size(); ++k) {
    auto& iv = intervals[k];
    std::sort(iv.begin(), iv.end());
    for (size_t i = 1; i < iv.size(); ++i) {
      NCV_FUZZ_CHECK(iv[i].first + eps(iv[i].first) >= iv[i - 1].second, kTarget,
                     "two instances overlap on '" + s.tracks[k].name + "' at " +
                         std::to_string(iv[i].first) + where());
    }
  }
  NCV_FUZZ_CHECK(s.makespan_ns == makespan, kTarget, "makespan is not the last end" + where());
  for (size_t k = 0; k < s.tracks.size(); ++k) {
    NCV_FUZZ_CHECK(std::fabs(s.tracks[k].busy_ns - busy[k]) <= eps(busy[k]) &&
                       s.tracks[k].busy_ns <= makespan + eps(makespan),
                   kTarget, "track '" + s.tracks[k].name + "' busy time is off" + where());
  }
}

void check_critical_path(const Trace& t, const Schedule& s, const CostTable& costs) {
  const auto eps = [](double x) { return 1e-9 * std::max(1.0, std::fabs(x)); };
  for (size_t k = 0; k < s.instances.size(); ++k) {
    const TimedInstance& ti = s.instances[k];
    const std::string at = "instance " + std::to_string(k);
    if (ti.bound == StartBound::Stream || ti.bound == StartBound::DmaBandwidth) {
      NCV_FUZZ_CHECK(ti.after >= 0 && static_cast<size_t>(ti.after) < k, kTarget,
                     at + ": `after` is no earlier instance");
      const TimedInstance& a = s.instances[static_cast<size_t>(ti.after)];
      const bool ok = ti.bound == StartBound::Stream
                          ? a.track == ti.track
                          : t.events[static_cast<size_t>(ti.after)].engine == Engine::Dma &&
                                t.events[static_cast<size_t>(ti.after)].core == t.events[k].core;
      NCV_FUZZ_CHECK(ok, kTarget, at + ": `after` is on the wrong stream");
    } else if (ti.bound == StartBound::Dependency) {
      NCV_FUZZ_CHECK(ti.waited_for >= 0, kTarget, at + ": bound by a dependency it has not");
    }
  }
  const CriticalPath cp = critical_path(t, s, costs);
  double sum = cp.waits_ns + cp.dma_latency_ns + cp.gaps_ns;
  for (const PathSegment& seg : cp.segments) sum += seg.ns;
  NCV_FUZZ_CHECK(std::fabs(sum - s.makespan_ns) <= 1e3 * eps(s.makespan_ns), kTarget,
                 "the critical path's parts sum to " + std::to_string(sum) + ", not the makespan");
  NCV_FUZZ_CHECK(cp.gaps_ns <= 1e3 * eps(s.makespan_ns), kTarget,
                 "the critical path has " + std::to_string(cp.gaps_ns) + " ns unexplained");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<fuzz::DecodedCase> c = fuzz::decode_case(data, size);
  if (!c) return 0;
  const Program& p = c->program;
  const HwConfig& hw = c->hw ? *c->hw : hw_config_trn1();
  const CostTable* costs = find_cost_table(hw.name);
  if (costs == nullptr) return 0;
  RunOptions o;
  o.hw = &hw;
  o.max_steps = 20'000;
  o.memory_budget_bytes = int64_t{64} << 20;
  RunResult values, shape_only;
  bool values_run = false;
  try {
    o.compute_values = false;  // a trace-only run reads no input values
    shape_only = run_program(p, c->params, {}, o);
    if (fuzz::value_run_work(p, c->params, shape_only.trace) <= fuzz::kMaxValueWork) {
      values_run = true;
      o.compute_values = true;
      values =
          run_program(p, c->params, random_inputs(p, c->params, c->seed, o.memory_budget_bytes), o);
    }
  } catch (const InputError&) {
    return 0;
  } catch (const DynamicError&) {
    return 0;  // a shape below 1 at these params (well_formed): no trace to schedule
  }
  if (shape_only.trace.events.size() > kMaxEvents) return 0;
  const Schedule s = schedule_trace(p, shape_only.trace, *costs);
  g_copies = rotating_copies(p, shape_only.trace, hw);
  check_schedule(p, shape_only.trace, s, *costs);
  check_critical_path(shape_only.trace, s, *costs);
  NCV_FUZZ_CHECK(same_schedule(s, schedule_trace(p, shape_only.trace, *costs)), kTarget,
                 "the same trace scheduled twice differs\n" + print_program(p));
  if (values_run && !values.error) {
    NCV_FUZZ_CHECK(same_schedule(s, schedule_trace(p, values.trace, *costs)), kTarget,
                   "trace-only and value runs schedule differently\n" + print_program(p));
  }
  return 0;
}
