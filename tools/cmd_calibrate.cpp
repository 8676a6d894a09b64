// `ncverify calibrate [--data DIR] [--json]`: reads every JSON file of measured latencies in DIR
// (default ../shared/calibration; format of trn1-sd-attention-autocomp.json), runs the named
// kernels trace-only at the given shape, and compares the timing model's latency with the
// measurement. Then it fits the cost table's uncertain constants (CostTable: static overhead,
// DMA fixed cost, DMA per-chunk overhead, semaphore wait) within their plausible ranges, one
// global set for all kernels, and prints both tables: measured, predicted, error %. The fitted
// values are meant to be committed in model/cost_table.cpp. Exit 0, or 2 on bad input.
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
#include "model/timing/timing.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

struct CalibrateOptions {
  std::string data = "../shared/calibration";
  bool json = false;
};

struct Point {
  std::string file, kernel;
  ParamValues params;
  double measured_us = 0;
  Program program;
  Trace trace;
};

// A fitted constant: where it lives in the table and its plausible range.
struct Knob {
  const char* name;
  double CostTable::*field;
  double lo, hi;
};
constexpr Knob kKnobs[] = {
    {"static_overhead_cycles", &CostTable::static_overhead_cycles, 0, 200},
    {"dma_fixed_ns", &CostTable::dma_fixed_ns, 600, 2000},
    {"dma_chunk_overhead_ns", &CostTable::dma_chunk_overhead_ns, 2, 60},
    {"semaphore_ns", &CostTable::semaphore_ns, 0, 300},
};

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
      if (r.error) throw UsageError(pt.kernel + ": trace-only run failed: " + r.error->message);
      pt.trace = std::move(r.trace);
      points.push_back(std::move(pt));
    }
  }
  return points;
}

std::vector<double> predict(const std::vector<Point>& pts, const CostTable& t) {
  std::vector<double> out;
  for (const Point& p : pts) out.push_back(schedule_trace(p.program, p.trace, t).latency_us());
  return out;
}

// Mean squared log error: relative errors count alike for fast and slow kernels.
double loss(const std::vector<Point>& pts, const std::vector<double>& pred) {
  double s = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    const double e = std::log(pred[i] / pts[i].measured_us);
    s += e * e;
  }
  return s / static_cast<double>(pts.size());
}

// Coordinate descent over the knobs on a shrinking grid, from the committed values.
CostTable fit(const std::vector<Point>& pts, CostTable t) {
  double best = loss(pts, predict(pts, t));
  for (int round = 0; round < 4; ++round) {
    for (const Knob& k : kKnobs) {
      const double span = (k.hi - k.lo) / std::pow(4.0, round);
      const double center = t.*k.field;
      for (int i = -4; i <= 4; ++i) {
        CostTable c = t;
        c.*k.field = std::clamp(center + span * i / 8.0, k.lo, k.hi);
        const double l = loss(pts, predict(pts, c));
        if (l < best) {
          best = l;
          t = c;
        }
      }
    }
  }
  return t;
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
  const CostTable fitted = fit(pts, committed);
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
    for (const Knob& k : kKnobs) {
      j["committed"][k.name] = committed.*k.field;
      j["fitted"][k.name] = fitted.*k.field;
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  print_table("trn1, committed constants:", pts, before);
  std::cout << "\nfitted within plausible ranges (commit in model/cost_table.cpp):\n";
  for (const Knob& k : kKnobs) {
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
