#include "tools/report_sweeps.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "model/ir/expr.h"
#include "model/ir/memory_peak.h"
#include "solver/frontier.h"

namespace ncv::cli {

namespace {

// The least multiple of m at or above x, and the largest at or below it.
int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}
int64_t round_down(int64_t x, int64_t m) {
  return x / m * m;
}

// Every legal seqlen of the domain that the sweep policy picks, up to `cap` (no cap: hi).
std::vector<int64_t> domain_points(const Param& s, int64_t cap) {
  const int64_t m = std::max<int64_t>(1, s.multiple_of);
  const int64_t lo = round_up(s.lo, m);
  const int64_t top = round_down(std::min(s.hi, cap), m);
  if (top < lo) return {lo};
  // Shorter sequences than one 128-row tile say little about a kernel's cost.
  const int64_t start = s.hi >= 128 ? std::max(lo, round_up(128, m)) : lo;
  std::set<int64_t> points{std::min(start, top), top};
  for (int64_t p = 1; p <= top && p > 0; p *= 2) {
    if (p > start && p % m == 0) points.insert(p);
  }
  return {points.begin(), points.end()};
}

nlohmann::json params_without_seqlen(ParamValues params) {
  params.erase("seqlen");
  return params;
}

}  // namespace

ParamValues report_params(const Program& p, int64_t seqlen) {
  ParamValues pv;
  for (const Param& prm : p.params) {
    const int64_t m = std::max<int64_t>(1, prm.multiple_of);
    int64_t want = prm.name == "seqlen"   ? seqlen
                   : prm.name == "d_head" ? 64
                   : prm.name == "group"  ? 2
                   : prm.name == "window" ? std::max<int64_t>(1, seqlen / 4)
                                          : prm.lo;
    want = std::clamp(want, prm.lo, prm.hi);
    pv[prm.name] = std::max(round_up(prm.lo, m), round_down(want, m));
  }
  return pv;
}

std::vector<int64_t> sweep_seqlens(const Param& seqlen, int64_t cap) {
  return domain_points(seqlen, cap);
}

TimelineShape timeline_shape(const Program& p, const HwConfig& hw, int64_t seqlen,
                             int64_t max_instances) {
  TimelineShape out;
  out.params = report_params(p, seqlen);
  const InstanceCount full = count_instances(p, out.params, hw);
  out.instances = full.instances;
  const Param* s = p.find_param("seqlen");
  // A shape that does not run keeps its error for the timeline; no seqlen: nothing to reduce.
  if (!full.error.empty() || full.instances <= max_instances || s == nullptr) return out;
  const int64_t at = out.params.at("seqlen");
  std::vector<int64_t> smaller = sweep_seqlens(*s, at);
  std::erase_if(smaller, [&](int64_t x) { return x >= at; });
  if (smaller.empty()) return out;
  ParamValues chosen;
  int64_t count = 0;
  for (auto it = smaller.rbegin(); it != smaller.rend(); ++it) {
    chosen = report_params(p, *it);
    const InstanceCount c = count_instances(p, chosen, hw);
    if (!c.error.empty()) continue;
    count = c.instances;
    if (count <= max_instances) break;
  }
  if (chosen.empty() || chosen == out.params) return out;
  out.reduced_from = out.params;
  const bool fits = count <= max_instances;
  out.note = "the report shape (seqlen " + std::to_string(at) + ") records " +
             std::to_string(full.instances) +
             " instruction instances, over the timeline's cap of " + std::to_string(max_instances) +
             ": timeline and trace at " + (fits ? "seqlen " : "the sweep's smallest seqlen ") +
             std::to_string(chosen.at("seqlen")) + " (" + std::to_string(count) + " instances" +
             (fits ? "" : ", still over the cap") + "; `ncverify bench --trace` traces any shape)";
  out.params = chosen;
  out.instances = count;
  return out;
}

nlohmann::json latency_series(const kernels::Variant& v, const HwConfig& hw,
                              const SweepLimits& limits, LatencyCache& cache) {
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  const Param* seqlen = p.find_param("seqlen");
  if (seqlen == nullptr) return nullptr;
  nlohmann::json points = nlohmann::json::array(), skipped = nlohmann::json::array();
  nlohmann::json fixed;
  for (int64_t s : sweep_seqlens(*seqlen, limits.max_seqlen)) {
    const ParamValues params = report_params(p, s);
    if (fixed.is_null()) fixed = params_without_seqlen(params);
    const Latency& l = cache.get(v, o, params, hw, limits.max_instances);
    if (l.us) {
      points.push_back({{"seqlen", s}, {"latency_us", *l.us}});
    } else {
      skipped.push_back({{"seqlen", s}, {"reason", l.error}});
    }
  }
  return {{"family", v.family}, {"kernel", v.name}, {"rewrites", v.rewrites}, {"gen", hw.name},
          {"options", o},       {"fixed", fixed},   {"points", points},       {"skipped", skipped}};
}

nlohmann::json footprint_series(const kernels::Variant& v, const HwConfig& hw) {
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  const Param* seqlen = p.find_param("seqlen");
  if (seqlen == nullptr) return nullptr;
  nlohmann::json points = nlohmann::json::array(), skipped = nlohmann::json::array();
  int64_t sbuf_cap = hw.sbuf_usable_bytes_per_partition(), psum_cap = hw.psum_bytes_per_partition;
  // The whole domain: the footprint costs no run.
  for (int64_t s : sweep_seqlens(*seqlen, seqlen->hi)) {
    const ParamValues params = report_params(p, s);
    try {
      const MemoryPeaks m = memory_peaks(p, hw, params);
      sbuf_cap = m.sbuf.capacity;
      psum_cap = m.psum.capacity;
      int64_t sbuf_explicit = 0, psum_explicit = 0;
      for (const LiveBuffer& b : m.sbuf.explicitly_placed) sbuf_explicit += b.bytes_per_partition;
      for (const LiveBuffer& b : m.psum.explicitly_placed) psum_explicit += b.bytes_per_partition;
      points.push_back({{"seqlen", s},
                        {"sbuf_bytes", m.sbuf.peak_bytes},
                        {"psum_bytes", m.psum.peak_bytes},
                        {"sbuf_explicit_bytes", sbuf_explicit},
                        {"psum_explicit_bytes", psum_explicit}});
    } catch (const EvalError& e) {
      skipped.push_back({{"seqlen", s}, {"reason", e.message}});
    }
  }
  return {{"family", v.family},
          {"kernel", v.name},
          {"gen", hw.name},
          {"options", o},
          {"fixed", params_without_seqlen(report_params(p, seqlen->lo))},
          {"unit", "bytes per partition"},
          {"sbuf_capacity_bytes", sbuf_cap},
          {"psum_capacity_bytes", psum_cap},
          {"points", points},
          {"skipped", skipped}};
}

FrontierEntry frontier_entry(const kernels::Variant& v, const std::string& gen,
                             unsigned timeout_ms) {
  FrontierEntry out;
  out.json = {{"gen", gen}, {"largest_fitting", nullptr}};
  if (!kernels::supports_generation(v, gen)) {
    out.json["status"] = "skipped";
    out.json["reason"] = kernels::generation_refusal(v, gen);
    out.text = "skipped";
    return out;
  }
  const Program p = v.build(v.resolve({}));
  const Param* seqlen = p.find_param("seqlen");
  if (seqlen == nullptr) {
    out.json["status"] = "skipped";
    out.json["reason"] = v.name + " has no seqlen param";
    out.text = "-";
    return out;
  }
  solver::FrontierQuery q;
  q.fixed = report_params(p, seqlen->lo);
  q.fixed.erase("seqlen");
  q.search_hi = std::max<int64_t>(65536, seqlen->hi);
  q.hw = find_hw_config(gen);
  q.timeout_ms = timeout_ms;
  out.json["searched_hi"] = q.search_hi;
  const solver::FrontierResult f = solver::capacity_frontier(p, q);
  using Status = solver::FrontierResult::Status;
  out.json["searched_hi"] = f.searched_hi;
  switch (f.status) {
    case Status::unknown:
      out.json["status"] = "unknown";
      out.json["reason"] = f.unknown_reason;
      out.text = "unknown";
      break;
    case Status::fits_nowhere:
      out.json["status"] = "fits_nowhere";
      out.json["reason"] = f.why_failing;
      out.text = "none";
      break;
    case Status::fits:
      out.json["largest_fitting"] = f.largest_fitting;
      if (f.first_failing) {
        out.json["status"] = "fits_below";
        out.json["first_failing"] = *f.first_failing;
        out.json["reason"] = f.why_failing;
        out.text = std::to_string(f.largest_fitting);
      } else {
        out.json["status"] = "fits_everywhere";
        out.text = ">=" + std::to_string(f.searched_hi);
      }
      break;
  }
  return out;
}

}  // namespace ncv::cli
