// `ncverify calibrate [--data DIR] [--json]`: reads every JSON file of measured latencies in DIR
// (default: the repository's calibration/latencies/; format in calibration/README.md), runs the
// named kernels or timing workloads trace-only at the given shape, and prints what the timing
// model's calibration (model/timing/calibration.h) computes: measured, predicted and error % with
// the committed cost table, the uncertain constants fitted within their plausible ranges (one
// global set for all kernels), and the table again with the fitted values. The fitted values are
// meant to be committed in model/timing/cost_table.cpp. Exit 0; 1 when a kernel fails a dynamic
// check at a measured shape; 2 on bad input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "kernels/registry.h"
#include "model/interp/interpreter.h"
#include "model/timing/calibration.h"
#include "tools/calibration_targets.h"
#include "tools/commands.h"
#include "tools/input_file.h"
#include "tools/progress.h"
#include "workloads/workload.h"

namespace ncv::cli {

namespace {

struct CalibrateOptions {
  std::string data = repository_path("calibration/latencies");
  bool json = false;
  RunLimits limits;
};

using Point = CalibrationPoint;

// The range a measured latency is taken in, in milliseconds. Below 1 ns is under three cycles of
// the fastest clock the model knows (trn1's Tensor engine, 2.8 GHz: model/hw/hw_config.cpp), not
// a kernel or instruction measurement (the shortest here, the instruction anchor, is 15 us);
// above one hour is 10^5 times the longest here (53 ms) and no kernel a trace-only run replays.
// Outside it lies a unit error or a typo, and 1e308 ms made the microseconds infinite and every
// error NaN. Inside it every derived number (us, error %, ratios, the fit's log error) is finite.
constexpr double kMinLatencyMs = 1e-6;
constexpr double kMaxLatencyMs = 3.6e6;
// A compared profile counter, at most: an hour at 2.8 GHz is 10^13 cycles, and an engine issues
// at most one instruction per cycle; an hour of instruction time is 3.6 * 10^9 us.
constexpr double kMaxCounter = 1e13;

[[noreturn]] void bad_field(const std::string& file, const std::string& path,
                            const std::string& want) {
  throw UsageError(file + ": " + path + " must be " + want);
}

const nlohmann::json* optional_field(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A kernel's boolean build options from the file's `shape` (its other fields describe the shape).
kernels::Options kernel_options(const std::string& file, const nlohmann::json& doc,
                                const kernels::Variant& v) {
  kernels::Options o;
  if (const nlohmann::json* shape = optional_field(doc, "shape")) {
    if (!shape->is_object()) bad_field(file, "shape", "an object");
    for (const auto& [name, value] : shape->items()) {
      if (!value.is_boolean()) continue;
      for (const auto& spec : v.options) {
        if (spec.name == name) o[name] = value.get<bool>() ? "true" : "false";
      }
    }
  }
  return o;
}

// One measured step of a latency file as a calibration point (the kernel run trace-only at the
// file's shape).
Point load_step(const std::string& file, const nlohmann::json& doc, const nlohmann::json& step,
                const std::string& path, const RunLimits& limits) {
  if (!step.is_object()) bad_field(file, path, "an object");
  Point pt;
  pt.file = std::filesystem::path(file).filename().string();
  // A step names a registered attention kernel (`kernel`) or a timing workload (`workload`).
  const nlohmann::json* kernel = optional_field(step, "kernel");
  const nlohmann::json* workload = optional_field(step, "workload");
  if ((kernel == nullptr) == (workload == nullptr)) {
    bad_field(file, path, "an object with exactly one of `kernel` and `workload`");
  }
  const nlohmann::json* named = kernel != nullptr ? kernel : workload;
  const char* field = kernel != nullptr ? ".kernel" : ".workload";
  if (!named->is_string()) bad_field(file, path + field, "a string");
  pt.kernel = named->get<std::string>();
  const kernels::Variant* v = kernel != nullptr ? kernels::find_variant(pt.kernel) : nullptr;
  const workloads::Workload* w =
      workload != nullptr ? workloads::find_workload(pt.kernel) : nullptr;
  if (v == nullptr && w == nullptr) {
    throw UsageError(file + ": " + path + field + " names unknown " +
                     (kernel != nullptr ? "kernel" : "workload") + " '" + pt.kernel + "'");
  }
  const nlohmann::json* latency = optional_field(step, "latency_ms");
  if (latency == nullptr || !latency->is_number() || !std::isfinite(latency->get<double>()) ||
      latency->get<double>() <= 0) {
    bad_field(file, path + ".latency_ms", "a positive finite number (milliseconds)");
  }
  if (latency->get<double>() < kMinLatencyMs || latency->get<double>() > kMaxLatencyMs) {
    bad_field(file, path + ".latency_ms",
              "a measured latency between 1e-06 ms (1 ns) and 3.6e+06 ms (one hour), got " +
                  latency->dump() + ": no NeuronCore measurement lies outside that range");
  }
  pt.measured_us = latency->get<double>() * 1000.0;
  if (const nlohmann::json* measure = optional_field(step, "measure")) {
    const bool time_field =
        measure->is_string() && (measure->get<std::string>() == "total_time" ||
                                 measure->get<std::string>().ends_with("_instruction_time"));
    if (!time_field || !profile_field(ProfileSummary{}, measure->get<std::string>())) {
      bad_field(file, path + ".measure",
                "a time field of the model's profile (total_time, vector_engine_instruction_time, "
                "...)");
    }
    pt.measure = measure->get<std::string>();
  }
  if (const nlohmann::json* active = optional_field(step, "vector_active_pct")) {
    if (!active->is_number() || active->get<double>() < 0 || active->get<double>() > 100) {
      bad_field(file, path + ".vector_active_pct", "a percentage in [0, 100]");
    }
    pt.vector_active_pct = active->get<double>();
  }
  // The file's params, then the step's own (a step measured at another shape overrides them).
  auto read_params = [&](const nlohmann::json& obj, const std::string& at) {
    const nlohmann::json* params = optional_field(obj, "params");
    if (params == nullptr) return;
    if (!params->is_object()) bad_field(file, at + "params", "an object of integer params");
    for (const auto& [name, value] : params->items()) {
      if (!value.is_number_integer()) bad_field(file, at + "params." + name, "an integer");
      if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) {
        bad_field(file, at + "params." + name, "an integer that fits int64");
      }
      pt.params[name] = value.get<int64_t>();
    }
  };
  read_params(doc, "");
  read_params(step, path + ".");
  try {
    pt.program = v != nullptr ? v->build(v->resolve(kernel_options(file, doc, *v))) : w->build({});
  } catch (const std::invalid_argument& e) {
    throw UsageError(file + ": shape: " + e.what());
  }
  RunOptions ro;
  ro.compute_values = false;
  limits.apply(ro);
  RunResult r;
  try {
    r = run_program(pt.program, pt.params, {}, ro);
  } catch (const InputError& e) {
    throw UsageError(file + ": " + path + " (" + pt.kernel + "): " + e.message);
  }
  if (r.error) {
    throw VerificationFailure(
        pt.kernel + ": the trace-only run at the measured shape failed: " + r.error->message);
  }
  pt.trace = std::move(r.trace);
  return pt;
}

// The per-engine counters of a file's `profile` (neuron-profile names) under the model's field
// names: `<engine>_engine_instruction_count` as is, `<engine>_engine_instruction_duration_us` as
// `<engine>_engine_instruction_time` (µs). Other counters (SBUF traffic) are not compared: the
// model counts compute instructions' bytes as bounding boxes (model/timing/profile.h).
std::string model_counter(const std::string& name) {
  for (const char* engine : {"tensor", "vector", "scalar", "gpsimd"}) {
    const std::string e = std::string(engine) + "_engine_instruction_";
    if (name == e + "count") return name;
    if (name == e + "duration_us") return e + "time";
  }
  return "";
}

// Attaches the counters of the file's `profile` ({fields: {name: [per step]}, steps: [positions
// in `steps`]}) to the points of this file, which start at `first`.
void attach_counters(const std::string& file, const nlohmann::json& doc, std::vector<Point>& pts,
                     size_t first) {
  const nlohmann::json* profile = optional_field(doc, "profile");
  if (profile == nullptr) return;
  const nlohmann::json* fields = optional_field(*profile, "fields");
  const nlohmann::json* steps = optional_field(*profile, "steps");
  if (fields == nullptr || !fields->is_object()) bad_field(file, "profile.fields", "an object");
  if (steps == nullptr || !steps->is_array()) bad_field(file, "profile.steps", "an array");
  const size_t n = pts.size() - first;
  for (size_t i = 0; i < steps->size(); ++i) {
    const nlohmann::json& s = (*steps)[i];
    if (!s.is_number_unsigned() || s.get<uint64_t>() >= n) {
      bad_field(file, "profile.steps[" + std::to_string(i) + "]",
                "a position in `steps` (0 to " + std::to_string(n - 1) + ")");
    }
  }
  for (const auto& [name, values] : fields->items()) {
    if (!values.is_array() || values.size() != steps->size()) {
      bad_field(file, "profile.fields." + name, "an array with one number per profile step");
    }
    const std::string counter = model_counter(name);
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string at = "profile.fields." + name + "[" + std::to_string(i) + "]";
      if (!values[i].is_number() || !std::isfinite(values[i].get<double>()) ||
          values[i].get<double>() < 0) {
        bad_field(file, at, "a finite number >= 0");
      }
      // A compared counter's error is relative to it, so it must be positive (and physical).
      if (!counter.empty() &&
          (values[i].get<double>() <= 0 || values[i].get<double>() > kMaxCounter)) {
        bad_field(file, at,
                  "a count or duration (us) in (0, 1e+13], got " + values[i].dump() +
                      ": the model's counter is compared with it relative to its value, and "
                      "an hour of a 2.8 GHz engine is 10^13 cycles");
      }
      if (!counter.empty()) {
        pts[first + (*steps)[i].get<size_t>()].counters.emplace_back(counter,
                                                                     values[i].get<double>());
      }
    }
  }
}

// Every point's file and step (`sources[i]`: "FILE: steps[i]"), for the errors found after
// loading.
std::vector<Point> load_points(const std::string& dir, const RunLimits& limits, Progress& progress,
                               std::vector<std::string>& sources) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError("--data: '" + dir + "' is not a directory");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  if (ec) throw UsageError("--data: cannot list '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("--data: no .json files in '" + dir + "'");
  std::vector<Point> points;
  for (const fs::path& f : files) {
    const std::string file = f.string();
    const nlohmann::json doc = parse_json_document(read_input_file(file), file);
    if (!doc.is_object()) bad_field(file, "the document", "an object");
    std::string generation = "trn1";
    if (const nlohmann::json* g = optional_field(doc, "generation")) {
      if (!g->is_string()) bad_field(file, "generation", "a string (trn1, trn2, trn3)");
      generation = g->get<std::string>();
    }
    const nlohmann::json* steps = optional_field(doc, "steps");
    if (steps == nullptr || !steps->is_array()) bad_field(file, "steps", "an array");
    if (generation != "trn1") continue;  // only trn1 is fitted
    const size_t first = points.size();
    progress.set_total(static_cast<int64_t>(points.size() + steps->size()) + 1);
    for (size_t i = 0; i < steps->size(); ++i) {
      const std::string where = f.filename().string() + " steps[" + std::to_string(i) + "]";
      progress.start(where);
      points.push_back(
          load_step(file, doc, (*steps)[i], "steps[" + std::to_string(i) + "]", limits));
      sources.push_back(file + ": steps[" + std::to_string(i) + "]");
      progress.update(static_cast<int64_t>(points.size()), where);
    }
    attach_counters(file, doc, points, first);
  }
  return points;
}

// The predictions every error, ratio and the fit's log error divide by: positive and finite, or
// the point is refused with its file, step and field. A `measure` of an engine the kernel never
// uses predicts 0 (and a 0 made the first/last ratio infinite).
void check_predictions(const std::vector<Point>& pts, const std::vector<std::string>& where,
                       const std::vector<double>& predicted, const char* constants) {
  for (size_t i = 0; i < pts.size(); ++i) {
    if (std::isfinite(predicted[i]) && predicted[i] > 0) continue;
    const bool total = pts[i].measure == "total_time";
    throw UsageError(where[i] + (total ? "" : ".measure") + ": the model predicts " +
                     std::to_string(predicted[i]) + " us of " + pts[i].measure + " for " +
                     pts[i].kernel + " with the " + constants +
                     " constants, so its error against latency_ms is undefined" +
                     (total ? "" : " (a measure of an engine the kernel does not use?)"));
  }
}

// One table per file (a chain of measurements): measured, predicted and error per point, the
// file's median error, and the latency order measured and predicted (positions in the file).
void print_table(const char* title, const std::vector<Point>& pts, const std::vector<double>& pred,
                 const CostTable& table) {
  std::cout << title << "\n";
  size_t i = 0;
  while (i < pts.size()) {
    size_t end = i;
    while (end < pts.size() && pts[end].file == pts[i].file) ++end;
    std::cout << pts[i].file << "\n"
              << "  " << std::left << std::setw(4) << "#" << std::setw(32) << "kernel/workload"
              << std::right << std::setw(14) << "measured_us" << std::setw(14) << "predicted_us"
              << std::setw(10) << "error_%"
              << "\n";
    std::vector<double> m, p;
    for (size_t k = i; k < end; ++k) {
      std::cout << "  " << std::left << std::setw(4) << k - i << std::setw(32) << pts[k].kernel
                << std::right << std::fixed << std::setprecision(1) << std::setw(14)
                << pts[k].measured_us << std::setw(14) << pred[k] << std::setw(10)
                << 100.0 * (pred[k] - pts[k].measured_us) / pts[k].measured_us << "\n";
      m.push_back(pts[k].measured_us);
      p.push_back(pred[k]);
    }
    const std::vector<Point> chain(pts.begin() + i, pts.begin() + end);
    std::cout << "  median |error| " << std::setprecision(1) << median_abs_error_pct(chain, p)
              << "%";
    if (m.size() >= 2) {
      std::cout << ", first/last ratio measured " << std::setprecision(3) << m.front() / m.back()
                << " predicted " << p.front() / p.back();
    }
    std::cout << "\n  order, fastest first: measured";
    for (size_t k : latency_order(m)) std::cout << " " << k;
    std::cout << "; predicted";
    for (size_t k : latency_order(p)) std::cout << " " << k;
    const OrderAgreement a = order_agreement(m, p, AccuracyTargets{}.order);
    std::cout << "\n  pairs more than 3% apart: " << a.pairs
              << ", predicted in the wrong order: " << a.misordered << "\n";
    i = end;
  }
  std::cout << "all points: median |error| " << std::setprecision(1)
            << median_abs_error_pct(pts, pred) << "%\n";
  print_targets(std::cout, evaluate_targets(pts, pred, table, AccuracyTargets{}),
                AccuracyTargets{});
}

int run_calibrate(const CalibrateOptions& opts) {
  // Steps: each point (a trace-only run of its kernel; the total grows file by file), then the
  // fit, which reruns them under trial constants and takes most of the time.
  Progress progress("calibrate", "steps", 0);
  std::vector<std::string> where;
  const std::vector<Point> pts = load_points(opts.data, opts.limits, progress, where);
  const CostTable& committed = cost_table_trn1();
  progress.start("predicting with the committed constants, fitting new ones");
  const std::vector<double> before = predict(pts, committed);
  check_predictions(pts, where, before, "committed");
  const CostTable fitted = fit_constants(pts, committed);
  const std::vector<double> after = predict(pts, fitted);
  check_predictions(pts, where, after, "fitted");
  progress.update(static_cast<int64_t>(pts.size()) + 1, "fit");
  if (opts.json) {
    nlohmann::json j;
    j["points"] = nlohmann::json::array();
    for (size_t i = 0; i < pts.size(); ++i) {
      j["points"].push_back({{"file", pts[i].file},
                             {"kernel", pts[i].kernel},
                             {"is_workload", workloads::find_workload(pts[i].kernel) != nullptr},
                             {"params", pts[i].params},
                             {"measured_us", pts[i].measured_us},
                             {"predicted_us", before[i]},
                             {"fitted_us", after[i]},
                             {"measure", pts[i].measure}});
    }
    j["targets"] = targets_json(evaluate_targets(pts, before, committed, AccuracyTargets{}),
                                AccuracyTargets{});
    for (const FittedConstant& k : kFittedConstants) {
      j["committed"][k.name] = committed.*k.field;
      j["fitted"][k.name] = fitted.*k.field;
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  print_table("trn1, committed constants:", pts, before, committed);
  std::cout << "\nfitted within plausible ranges (commit in model/timing/cost_table.cpp):\n";
  for (const FittedConstant& k : kFittedConstants) {
    std::cout << "  " << std::left << std::setw(24) << k.name << std::right << std::setw(10)
              << std::setprecision(1) << fitted.*k.field << "   range [" << k.lo << ", " << k.hi
              << "], committed " << committed.*k.field << "\n";
  }
  std::cout << "\n";
  print_table("trn1, fitted constants:", pts, after, fitted);
  return kExitOk;
}

}  // namespace

void register_calibrate(CLI::App& app, Action& action) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Compare the timing model with measured latencies and fit its uncertain constants");
  cmd->add_option("--data", opts->data, "Directory of calibration JSON files")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print JSON");
  opts->limits.add_options(cmd);
  cmd->callback([opts, &action] { action = [opts] { return run_calibrate(*opts); }; });
}

}  // namespace ncv::cli
