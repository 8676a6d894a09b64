// Calibrating the timing model against measured latencies: the cost table's uncertain constants
// with their plausible ranges, the model's predictions for a set of measured points, and the fit
// of those constants within their ranges (one global set for all points). `ncverify calibrate`
// loads the points (calibration/latencies/*.json) and prints what this computes.
#pragma once

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/interp/trace.h"
#include "model/ir/program.h"
#include "model/timing/cost_table.h"
#include "model/timing/profile.h"

namespace ncv {
inline namespace timing {

// One measured latency: a kernel at a shape, its trace-only run and the measurement.
struct CalibrationPoint {
  std::string file, kernel;  // where the measurement comes from, the registered kernel
  ParamValues params;
  double measured_us = 0;
  // What was measured, as a time field (µs) of the model's ProfileSummary::fields():
  // "total_time" for a kernel's latency, or e.g. "vector_engine_instruction_time" for the
  // duration of one instruction read off a profile (a single-instruction anchor).
  std::string measure = "total_time";
  // Profile counters published with the measurement, under the model's field names and units
  // (e.g. vector_engine_instruction_count, vector_engine_instruction_time in µs).
  std::vector<std::pair<std::string, double>> counters;
  // The published share of the kernel's time the Vector engine was active, in percent (NaN: none).
  double vector_active_pct = std::numeric_limits<double>::quiet_NaN();
  Program program;
  Trace trace;
};

// The model's profile of the point under table t (its trace scheduled), and the value of one of
// its fields (nullopt: no such field).
ProfileSummary profile_of(const CalibrationPoint& point, const CostTable& t);
std::optional<double> profile_field(const ProfileSummary& s, const std::string& name);

// A constant of the cost table that no public source pins down: where it lives and its
// plausible range (cost_table.cpp says where each range comes from).
struct FittedConstant {
  const char* name;
  double CostTable::*field;
  double lo, hi;
};
extern const std::array<FittedConstant, 5> kFittedConstants;

// The model's value of every point's measure under table t (µs).
std::vector<double> predict(const std::vector<CalibrationPoint>& points, const CostTable& t);

// Mean squared log error of predictions against the measurements: relative errors count alike
// for fast and slow kernels.
double calibration_loss(const std::vector<CalibrationPoint>& points,
                        const std::vector<double>& predicted);

// Positions of `us` ordered by latency, fastest first (ties keep their order).
std::vector<size_t> latency_order(const std::vector<double>& us);

// Within one chain of measurements: the pairs whose measured latencies differ by more than
// `tolerance` (relative to the faster) and how many of them the prediction orders the other way.
struct OrderAgreement {
  int pairs = 0, misordered = 0;
};
OrderAgreement order_agreement(const std::vector<double>& measured,
                               const std::vector<double>& predicted, double tolerance);

// How far to trust the model's latencies on a generation: the committed cost table's error
// against the measured latencies of calibration/latencies/, as `ncverify calibrate` printed it
// when the constants were committed (the CliCalibrate test keeps the two equal). A generation
// without measured latencies has points == 0: its latencies are not validated.
struct CalibrationBand {
  int points = 0;
  double median_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};
CalibrationBand calibration_band(const std::string& generation);
// What `bench` prints about it, e.g. "trn1 model vs 20 measured latencies: median |error| 8.1%,
// worst 29.7% (ncverify calibrate)".
std::string trust_line(const std::string& generation);

// The fitted constants: coordinate descent over kFittedConstants on a shrinking grid, from
// `start`, each constant clamped to its range. The other fields of `start` are kept.
CostTable fit_constants(const std::vector<CalibrationPoint>& points, CostTable start);

}  // namespace timing
}  // namespace ncv
