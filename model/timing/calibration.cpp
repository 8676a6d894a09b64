#include "model/timing/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

// Each range brackets what the sources document (keys: docs/SOURCES.md): a static overhead of
// ~60 cycles per access request (ARCH2); ~1300 ns fixed latency per cross-engine DMA (DMABW) and
// ~600 ns per hardware-DGE DMA (DGE); 14 ns per contiguous chunk, which makes 2 KiB chunks reach
// ~90% of peak (DMABW); a semaphore wait of 10-30 ns (evt_wait 1-25 ns when the producer is done,
// ~30 ns beyond the producer's duration when waiting on it: PERF-FIG16/17/18, PROF-OLD); an
// element-wise (transposing) DMA at "much lower DMA bandwidth compared to nl.load" (PERF), at
// most the 90% of the plain rate that trn2's DMA transpose reaches (ARCH3: 0.9 x 17 B/ns) and at
// least the ~4 B/ns per engine below which the SD tutorial's Q/K transposing loads could not
// hide behind its compute (an inference from the step 0 -> 1 latencies of
// calibration/latencies/trn1-sd-attention-autocomp.json, Autocomp's measured chain).
namespace {
// The trn1 band (calibration_band); update with the constants.
constexpr int kTrn1BandPoints = 28;
constexpr double kTrn1BandMedianPct = 15.0;
constexpr double kTrn1BandMaxPct = 59.7;
}  // namespace

const std::array<FittedConstant, 5> kFittedConstants = {{
    {"static_overhead_cycles", &CostTable::static_overhead_cycles, 0, 200},
    {"dma_fixed_ns", &CostTable::dma_fixed_ns, 600, 2000},
    {"dma_chunk_overhead_ns", &CostTable::dma_chunk_overhead_ns, 2, 60},
    {"semaphore_ns", &CostTable::semaphore_ns, 10, 30},
    {"dma_transpose_bytes_per_ns", &CostTable::dma_transpose_bytes_per_ns, 4, 15.3},
}};

CalibrationBand calibration_band(const std::string& generation) {
  // Recorded from `ncverify calibrate` with the constants committed in cost_table.cpp (the
  // "committed" table over every file of calibration/latencies/, all trn1).
  if (generation == "trn1") return {kTrn1BandPoints, kTrn1BandMedianPct, kTrn1BandMaxPct};
  return {};
}

std::string trust_line(const std::string& generation) {
  const CalibrationBand b = calibration_band(generation);
  char line[256];
  if (b.points == 0) {
    std::snprintf(line, sizeof line,
                  "%s model not validated: no measured latencies on %s (trn1's rules with %s's "
                  "documented clocks and widths)",
                  generation.c_str(), generation.c_str(), generation.c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "%s model vs %d measured latencies: median |error| %.1f%%, worst %.1f%% "
                  "(ncverify calibrate)",
                  generation.c_str(), b.points, b.median_abs_error_pct, b.max_abs_error_pct);
  }
  return line;
}

ProfileSummary profile_of(const CalibrationPoint& point, const CostTable& t) {
  return summarize(point.program, point.trace, schedule_trace(point.program, point.trace, t), t);
}

std::optional<double> profile_field(const ProfileSummary& s, const std::string& name) {
  for (const auto& [field, value] : s.fields()) {
    if (field == name) return value;
  }
  return std::nullopt;
}

std::vector<double> predict(const std::vector<CalibrationPoint>& points, const CostTable& t) {
  std::vector<double> out;
  out.reserve(points.size());
  for (const CalibrationPoint& p : points) {
    if (p.measure == "total_time") {
      out.push_back(schedule_trace(p.program, p.trace, t).latency_us());
    } else {
      const std::optional<double> v = profile_field(profile_of(p, t), p.measure);
      if (!v) throw std::invalid_argument(p.file + ": no profile field '" + p.measure + "'");
      out.push_back(*v);
    }
  }
  return out;
}

double calibration_loss(const std::vector<CalibrationPoint>& points,
                        const std::vector<double>& predicted) {
  double s = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double e = std::log(predicted[i] / points[i].measured_us);
    s += e * e;
  }
  return s / static_cast<double>(points.size());
}

std::vector<size_t> latency_order(const std::vector<double>& us) {
  std::vector<size_t> idx(us.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return us[a] < us[b]; });
  return idx;
}

OrderAgreement order_agreement(const std::vector<double>& measured,
                               const std::vector<double>& predicted, double tolerance) {
  OrderAgreement a;
  for (size_t i = 0; i < measured.size(); ++i) {
    for (size_t j = i + 1; j < measured.size(); ++j) {
      const double lo = std::min(measured[i], measured[j]);
      if (std::abs(measured[i] - measured[j]) <= tolerance * lo) continue;
      ++a.pairs;
      if ((measured[i] < measured[j]) != (predicted[i] < predicted[j])) ++a.misordered;
    }
  }
  return a;
}

CostTable fit_constants(const std::vector<CalibrationPoint>& points, CostTable t) {
  double best = calibration_loss(points, predict(points, t));
  for (int round = 0; round < 4; ++round) {
    for (const FittedConstant& k : kFittedConstants) {
      const double span = (k.hi - k.lo) / std::pow(4.0, round);
      const double center = t.*k.field;
      for (int i = -4; i <= 4; ++i) {
        CostTable c = t;
        c.*k.field = std::clamp(center + span * i / 8.0, k.lo, k.hi);
        const double l = calibration_loss(points, predict(points, c));
        if (l < best) {
          best = l;
          t = c;
        }
      }
    }
  }
  return t;
}

}  // namespace timing
}  // namespace ncv
