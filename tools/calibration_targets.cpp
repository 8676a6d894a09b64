// Evaluating and printing the timing model's accuracy targets (calibration_targets.h).
#include "tools/calibration_targets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "workloads/workload.h"

namespace ncv::cli {

namespace {

double rel_error(double predicted, double measured) {
  return (predicted - measured) / measured;
}

const char* verdict(bool met) {
  return met ? "met" : "NOT MET";
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// The points of one file, in file order: a chain of measurements.
std::vector<std::pair<size_t, size_t>> chains(const std::vector<CalibrationPoint>& pts) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < pts.size();) {
    size_t end = i;
    while (end < pts.size() && pts[end].file == pts[i].file) ++end;
    out.emplace_back(i, end);
    i = end;
  }
  return out;
}

bool counter_within(const CounterRow& c, double tolerance) {
  return std::abs(rel_error(c.predicted, c.measured)) <= tolerance;
}

}  // namespace

double median_abs_error_pct(const std::vector<CalibrationPoint>& pts,
                            const std::vector<double>& predicted) {
  std::vector<double> e;
  for (size_t i = 0; i < pts.size(); ++i) {
    e.push_back(100.0 * std::abs(rel_error(predicted[i], pts[i].measured_us)));
  }
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  return e.size() % 2 ? e[e.size() / 2] : (e[e.size() / 2 - 1] + e[e.size() / 2]) / 2;
}

TargetReport evaluate_targets(const std::vector<CalibrationPoint>& pts,
                              const std::vector<double>& predicted, const CostTable& t,
                              const AccuracyTargets& targets) {
  TargetReport r;
  r.points = static_cast<int>(pts.size());
  r.median_error_pct = median_abs_error_pct(pts, predicted);
  for (size_t i = 0; i < pts.size(); ++i) {
    const double e = 100.0 * rel_error(predicted[i], pts[i].measured_us);
    if (std::abs(e) <= 100.0 * targets.point) ++r.points_within;
    if (std::abs(e) > std::abs(r.worst_error_pct) || r.worst_point.empty()) {
      r.worst_error_pct = e;
      r.worst_point = pts[i].kernel;
    }
  }
  for (const auto& [begin, end] : chains(pts)) {
    std::vector<double> m, p;
    bool all_kernels = true;
    for (size_t k = begin; k < end; ++k) {
      m.push_back(pts[k].measured_us);
      p.push_back(predicted[k]);
      all_kernels = all_kernels && workloads::find_workload(pts[k].kernel) == nullptr;
    }
    const OrderAgreement a = order_agreement(m, p, targets.order);
    r.order_pairs += a.pairs;
    r.order_misordered += a.misordered;
    // The first/last ratio is the speed-up a rewrite chain of attention kernels claims.
    if (all_kernels && m.size() >= 2) {
      r.chain_ratios.push_back({pts[begin].file, m.front() / m.back(), p.front() / p.back()});
    }
  }
  for (size_t i = 0; i < pts.size(); ++i) {
    const CalibrationPoint& pt = pts[i];
    if (pt.counters.empty() && std::isnan(pt.vector_active_pct)) continue;
    const ProfileSummary prof = profile_of(pt, t);
    size_t first = i;  // the point's position in its file, as the tables number it
    while (first > 0 && pts[first - 1].file == pt.file) --first;
    const std::string where = pt.file + " #" + std::to_string(i - first) + " " + pt.kernel;
    for (const auto& [name, measured] : pt.counters) {
      const std::optional<double> v = profile_field(prof, name);
      if (v) r.counters.push_back({where, name, measured, *v});
    }
    if (!std::isnan(pt.vector_active_pct)) {
      r.vector_utilisation.push_back({where, "vector_engine_active_time_percent",
                                      pt.vector_active_pct, prof.vector.active_time_percent});
    }
  }
  return r;
}

void print_targets(std::ostream& out, const TargetReport& r, const AccuracyTargets& targets) {
  out << "targets:\n";
  out << "  every point within " << fmt("%.0f%%", 100 * targets.point) << ": " << r.points_within
      << " of " << r.points << " (worst " << r.worst_point << fmt(" %+.1f%%", r.worst_error_pct)
      << ")  " << verdict(r.points_within == r.points) << "\n";
  out << "  median |error| within " << fmt("%.0f%%", 100 * targets.median) << ": "
      << fmt("%.1f%%", r.median_error_pct) << "  "
      << verdict(r.median_error_pct <= 100 * targets.median) << "\n";
  out << "  order kept where measured more than " << fmt("%.0f%%", 100 * targets.order)
      << " apart: " << r.order_misordered << " of " << r.order_pairs << " pairs misordered  "
      << verdict(r.order_misordered == 0) << "\n";
  for (const TargetReport::ChainRatio& c : r.chain_ratios) {
    const double e = rel_error(c.predicted, c.measured);
    out << "  " << c.file << " first/last ratio within " << fmt("%.0f%%", 100 * targets.chain_ratio)
        << ": measured " << fmt("%.3f", c.measured) << ", predicted " << fmt("%.3f", c.predicted)
        << fmt(" (%+.1f%%)  ", 100 * e) << verdict(std::abs(e) <= targets.chain_ratio) << "\n";
  }
  auto table = [&](const char* title, const std::vector<CounterRow>& rows, bool points) {
    out << "  " << title << "\n";
    char head[200];
    std::snprintf(head, sizeof head, "    %-50s %-34s %10s %10s %8s\n", "point", "counter",
                  "measured", "predicted", points ? "diff_pt" : "error_%");
    out << head;
    for (const CounterRow& c : rows) {
      const double d = points ? c.predicted - c.measured : 100 * rel_error(c.predicted, c.measured);
      const bool ok =
          points ? std::abs(d) <= targets.vector_points : counter_within(c, targets.counters);
      char line[256];
      std::snprintf(line, sizeof line, "    %-50s %-34s %10.1f %10.1f %+8.1f  %s\n",
                    c.point.c_str(), c.counter.c_str(), c.measured, c.predicted, d, verdict(ok));
      out << line;
    }
  };
  table(("profile counters within " + fmt("%.0f%%:", 100 * targets.counters)).c_str(), r.counters,
        false);
  table(("Vector-engine utilisation within " + fmt("%.0f points:", targets.vector_points)).c_str(),
        r.vector_utilisation, true);
}

nlohmann::json targets_json(const TargetReport& r, const AccuracyTargets& targets) {
  nlohmann::json j;
  j["points"] = {{"within_pct", 100 * targets.point},
                 {"count", r.points},
                 {"within", r.points_within},
                 {"worst", r.worst_point},
                 {"worst_error_pct", r.worst_error_pct}};
  j["median"] = {{"target_pct", 100 * targets.median}, {"error_pct", r.median_error_pct}};
  j["order"] = {{"tolerance_pct", 100 * targets.order},
                {"pairs", r.order_pairs},
                {"misordered", r.order_misordered}};
  j["chain_ratios"] = nlohmann::json::array();
  for (const TargetReport::ChainRatio& c : r.chain_ratios) {
    j["chain_ratios"].push_back({{"file", c.file},
                                 {"measured", c.measured},
                                 {"predicted", c.predicted},
                                 {"target_pct", 100 * targets.chain_ratio}});
  }
  auto rows = [](const std::vector<CounterRow>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const CounterRow& c : v) {
      a.push_back({{"point", c.point},
                   {"counter", c.counter},
                   {"measured", c.measured},
                   {"predicted", c.predicted}});
    }
    return a;
  };
  j["counters"] = {{"target_pct", 100 * targets.counters}, {"rows", rows(r.counters)}};
  j["vector_utilisation"] = {{"target_points", targets.vector_points},
                             {"rows", rows(r.vector_utilisation)}};
  return j;
}

}  // namespace ncv::cli
