// The critical path (critical_path.h).
#include "model/timing/critical_path.h"

#include <algorithm>

namespace ncv {
inline namespace timing {

CriticalPath critical_path(const Trace& trace, const Schedule& s, const CostTable& costs) {
  CriticalPath cp;
  cp.makespan_ns = s.makespan_ns;
  // The first instance to end at the makespan; its chain explains [0, makespan).
  int64_t k = -1;
  for (size_t i = 0; i < s.instances.size(); ++i) {
    if (s.instances[i].end_ns == s.makespan_ns) {
      k = static_cast<int64_t>(i);
      break;
    }
  }
  std::map<int, PathSegment> by_track;
  // `t`: the time explained so far is [t, makespan). An instance on the path covers
  // [start, min(end, t)): a DMA bound by the bandwidth another one held may start before that one's
  // transfer ends, so only the part before it counts.
  double t = s.makespan_ns;
  while (k >= 0) {
    const TimedInstance& ti = s.instances.at(static_cast<size_t>(k));
    const TraceEvent& ev = trace.events.at(static_cast<size_t>(k));
    cp.instances.push_back(k);
    const double start = std::min(ti.start_ns, t);
    const double ns = std::max(0.0, std::min(ti.end_ns, t) - start);
    PathSegment& seg = by_track[ti.track];
    seg.track = ti.track;
    seg.ns += ns;
    seg.instances++;
    cp.instruction_ns[ev.instruction] += ns;
    t = start;

    int64_t pred = -1;
    double lead = 0;  // what the instance waits beyond its predecessor's end, by design
    if (ti.bound == StartBound::Dependency) {
      pred = ti.waited_for;
      const bool other_track = s.instances.at(static_cast<size_t>(pred)).track != ti.track;
      const double wait = other_track ? costs.semaphore_ns : 0.0;
      const double latency = ev.engine == Engine::Dma ? costs.dma_fixed_ns : 0.0;
      cp.waits_ns += std::min(wait, t);
      cp.dma_latency_ns += std::min(latency, std::max(0.0, t - wait));
      lead = wait + latency;
    } else if (ti.bound == StartBound::Stream || ti.bound == StartBound::DmaBandwidth) {
      pred = ti.after;
    } else if (ev.engine == Engine::Dma) {
      // Nothing before it: its fixed latency from time 0.
      lead = std::min(costs.dma_fixed_ns, t);
      cp.dma_latency_ns += lead;
    }
    const double pred_end = pred >= 0 ? s.instances.at(static_cast<size_t>(pred)).end_ns : 0.0;
    // Whatever the bound above does not explain (none in a schedule that keeps its invariants).
    const double gap = t - lead - pred_end;
    if (gap > 0) cp.gaps_ns += gap;
    t = std::max(0.0, std::min(t - lead, pred_end));
    k = pred;  // always an earlier instance: the walk ends
  }
  for (const auto& [track, seg] : by_track) cp.segments.push_back(seg);
  std::stable_sort(cp.segments.begin(), cp.segments.end(),
                   [](const PathSegment& a, const PathSegment& b) { return a.ns > b.ns; });
  if (!cp.segments.empty()) cp.bounded_by = cp.segments.front().track;
  return cp;
}

}  // namespace timing
}  // namespace ncv
