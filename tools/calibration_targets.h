// The accuracy targets `ncverify calibrate` reports for the timing model (issue 26, item 4), each
// computed from the measured points and the model's predictions and printed with "met" or "NOT
// MET". Nothing here asserts them: they say how far the model is from the hardware.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "model/timing/calibration.h"

namespace ncv::cli {

// Relative error targets (fractions): every point, the median, the order tolerance within a
// chain, an attention chain's first/last ratio, the profile counters; Vector utilisation in
// percentage points.
struct AccuracyTargets {
  double point = 0.15, median = 0.08, order = 0.03, chain_ratio = 0.05, counters = 0.20;
  double vector_points = 10.0;
};

// Median |predicted - measured| / measured over the points, in percent (0 for none).
double median_abs_error_pct(const std::vector<CalibrationPoint>& pts,
                            const std::vector<double>& predicted);

// One row of the profile-counter comparison or the Vector-utilisation comparison.
struct CounterRow {
  std::string point;  // "file #k kernel"
  std::string counter;
  double measured = 0, predicted = 0;
};

// Every target evaluated on the points under table t, whose predictions are `predicted`.
struct TargetReport {
  int points = 0, points_within = 0;
  std::string worst_point;
  double worst_error_pct = 0, median_error_pct = 0;
  int order_pairs = 0, order_misordered = 0;
  struct ChainRatio {
    std::string file;
    double measured = 0, predicted = 0;
  };
  std::vector<ChainRatio> chain_ratios;  // chains of registered attention kernels
  std::vector<CounterRow> counters, vector_utilisation;
};
TargetReport evaluate_targets(const std::vector<CalibrationPoint>& pts,
                              const std::vector<double>& predicted, const CostTable& t,
                              const AccuracyTargets& targets);

void print_targets(std::ostream& out, const TargetReport& r, const AccuracyTargets& targets);
nlohmann::json targets_json(const TargetReport& r, const AccuracyTargets& targets);

}  // namespace ncv::cli
