// `ncverify calibrate [--data DIR] [--json]`: reads every JSON file of measured latencies in DIR
// (default: the repository's calibration/latencies/; format in calibration/README.md), runs the
// named kernels trace-only at the given shape, and prints what the timing model's calibration
// (model/timing/calibration.h) computes: measured, predicted and error % with the committed cost
// table, the uncertain constants fitted within their plausible ranges (one global set for all
// kernels), and the table again with the fitted values. The fitted values are meant to be
// committed in model/timing/cost_table.cpp. Exit 0; 1 when a kernel fails a dynamic check at a
// measured shape; 2 on bad input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "kernels/registry.h"
#include "model/interp/interpreter.h"
#include "model/timing/calibration.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

struct CalibrateOptions {
  std::string data = repository_path("calibration/latencies");
  bool json = false;
};

using Point = CalibrationPoint;

std::vector<Point> load_points(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw UsageError("--data: '" + dir + "' is not a directory");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("--data: no .json files in '" + dir + "'");
  std::vector<Point> points;
  for (const fs::path& f : files) {
    nlohmann::json j;
    try {
      std::ifstream in(f);
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw UsageError(f.string() + ": not valid JSON: " + e.what());
    }
    if (!j.contains("steps") || !j["steps"].is_array()) {
      throw UsageError(f.string() + ": needs a \"steps\" array");
    }
    if (j.value("generation", "trn1") != "trn1") continue;  // only trn1 is fitted
    for (const auto& step : j["steps"]) {
      Point pt;
      pt.file = f.filename().string();
      pt.kernel = step.value("kernel", "");
      const kernels::Variant* v = kernels::find_variant(pt.kernel);
      if (v == nullptr) {
        throw UsageError(f.string() + ": step names unknown kernel '" + pt.kernel + "'");
      }
      const nlohmann::json params = j.value("params", nlohmann::json::object());
      const nlohmann::json shape = j.value("shape", nlohmann::json::object());
      for (const auto& [name, value] : params.items()) {
        if (!value.is_number_integer()) {
          throw UsageError(f.string() + ": params." + name + " must be an integer");
        }
        pt.params[name] = value.get<int64_t>();
      }
      kernels::Options o;
      for (const auto& [name, value] : shape.items()) {
        if (!value.is_boolean()) continue;
        for (const auto& spec : v->options) {
          if (spec.name == name) o[name] = value.get<bool>() ? "true" : "false";
        }
      }
      if (!step.contains("latency_ms") || !step["latency_ms"].is_number()) {
        throw UsageError(f.string() + ": step '" + pt.kernel + "' needs a numeric latency_ms");
      }
      pt.measured_us = step["latency_ms"].get<double>() * 1000.0;
      pt.program = v->build(v->resolve(o));
      RunOptions ro;
      ro.compute_values = false;
      RunResult r = run_program(pt.program, pt.params, {}, ro);
      if (r.error) {
        throw VerificationFailure(
            pt.kernel + ": the trace-only run at the measured shape failed: " + r.error->message);
      }
      pt.trace = std::move(r.trace);
      points.push_back(std::move(pt));
    }
  }
  return points;
}

void print_table(const char* title, const std::vector<Point>& pts,
                 const std::vector<double>& pred) {
  std::cout << title << "\n"
            << std::left << std::setw(24) << "kernel" << std::right << std::setw(14)
            << "measured_us" << std::setw(14) << "predicted_us" << std::setw(10) << "error_%"
            << "\n";
  for (size_t i = 0; i < pts.size(); ++i) {
    std::cout << std::left << std::setw(24) << pts[i].kernel << std::right << std::fixed
              << std::setprecision(1) << std::setw(14) << pts[i].measured_us << std::setw(14)
              << pred[i] << std::setw(10)
              << 100.0 * (pred[i] - pts[i].measured_us) / pts[i].measured_us << "\n";
  }
  if (pts.size() >= 2) {
    std::cout << "first/last ratio: measured " << std::setprecision(3)
              << pts.front().measured_us / pts.back().measured_us << ", predicted "
              << pred.front() / pred.back() << "\n";
  }
}

int run_calibrate(const CalibrateOptions& opts) {
  const std::vector<Point> pts = load_points(opts.data);
  const CostTable& committed = cost_table_trn1();
  const std::vector<double> before = predict(pts, committed);
  const CostTable fitted = fit_constants(pts, committed);
  const std::vector<double> after = predict(pts, fitted);
  if (opts.json) {
    nlohmann::json j;
    j["points"] = nlohmann::json::array();
    for (size_t i = 0; i < pts.size(); ++i) {
      j["points"].push_back({{"file", pts[i].file},
                             {"kernel", pts[i].kernel},
                             {"params", pts[i].params},
                             {"measured_us", pts[i].measured_us},
                             {"predicted_us", before[i]},
                             {"fitted_us", after[i]}});
    }
    for (const FittedConstant& k : kFittedConstants) {
      j["committed"][k.name] = committed.*k.field;
      j["fitted"][k.name] = fitted.*k.field;
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  print_table("trn1, committed constants:", pts, before);
  std::cout << "\nfitted within plausible ranges (commit in model/timing/cost_table.cpp):\n";
  for (const FittedConstant& k : kFittedConstants) {
    std::cout << "  " << std::left << std::setw(24) << k.name << std::right << std::setw(10)
              << std::setprecision(1) << fitted.*k.field << "   range [" << k.lo << ", " << k.hi
              << "], committed " << committed.*k.field << "\n";
  }
  std::cout << "\n";
  print_table("trn1, fitted constants:", pts, after);
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
  cmd->callback([opts, &action] { action = [opts] { return run_calibrate(*opts); }; });
}

}  // namespace ncv::cli
