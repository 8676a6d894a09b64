#include "tools/report_rows.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "check/check_sweep.h"
#include "check/replay.h"
#include "kernels/registry.h"

namespace ncv::cli {

std::vector<std::optional<double>> normalized_errors(const kernels::CheckResult& r) {
  std::vector<std::optional<double>> out;
  for (const kernels::CaseResult& c : r.cases) {
    // As check_kernel_with's worst_normalized: the output's ratio and the lse's.
    const double ratio = std::fmax(c.comparison.max_normalized, c.lse ? c.lse->max_normalized : 0);
    if (c.run_error || !std::isfinite(ratio)) {
      out.emplace_back(std::nullopt);
    } else {
      out.emplace_back(ratio);
    }
  }
  return out;
}

PredecessorLatency predecessor_latency(const kernels::Variant& v, const kernels::Options& given,
                                       const ParamValues& params, const HwConfig& hw,
                                       LatencyCache& cache) {
  PredecessorLatency out;
  out.name = v.rewrites;
  if (v.rewrites.empty()) return out;
  const kernels::Variant* pred = kernels::find_variant(v.rewrites);
  if (pred == nullptr) {
    out.latency.error = "no registered variant " + v.rewrites;
    return out;
  }
  if (!kernels::supports_generation(*pred, hw.name)) {
    out.latency.error = kernels::generation_refusal(*pred, hw.name);
    return out;
  }
  kernels::Options o;
  try {
    o = pred->resolve(given);
  } catch (const std::invalid_argument& e) {
    out.latency.error = pred->name + " does not offer these options: " + e.what();
    return out;
  }
  out.latency = cache.get(*pred, o, params, hw);
  return out;
}

void add_latency_fields(nlohmann::json& row, const Latency& own, const PredecessorLatency& pred) {
  row["latency_us"] = own.us ? nlohmann::json(*own.us) : nlohmann::json(nullptr);
  if (!own.us) row["latency_error"] = own.error;
  row["predecessor"] = pred.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(pred.name);
  row["predecessor_latency_us"] =
      pred.latency.us ? nlohmann::json(*pred.latency.us) : nlohmann::json(nullptr);
  if (!pred.name.empty() && !pred.latency.us) {
    row["predecessor_latency_error"] = pred.latency.error;
  }
  row["speedup"] = own.us && pred.latency.us && *own.us > 0
                       ? nlohmann::json(*pred.latency.us / *own.us)
                       : nlohmann::json(nullptr);
}

std::string speedup_text(const Latency& own, const PredecessorLatency& pred) {
  if (!own.us || !pred.latency.us || *own.us <= 0) return "-";
  char s[32];
  std::snprintf(s, sizeof s, "%.2fx", *pred.latency.us / *own.us);
  return s;
}

CheckRow run_check_row(const CheckRowRequest& req, LatencyCache& cache) {
  if (req.variant == nullptr || req.program == nullptr || req.check.run.hw == nullptr) {
    throw std::logic_error("run_check_row: variant, program and check.run.hw are required");
  }
  const kernels::Variant& v = *req.variant;
  const HwConfig& hw = *req.check.run.hw;
  CheckRow row;
  const auto t0 = std::chrono::steady_clock::now();
  row.result = kernels::check_kernel(v, *req.program, req.options, req.params, req.check);
  row.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  row.latency = cache.get(req.target, req.options, req.params, hw, [&] { return *req.program; });
  // A catalogue entry's base is not the entry's predecessor: only a registered kernel's own
  // link counts.
  if (req.target == v.name) {
    row.predecessor = predecessor_latency(v, req.given, req.params, hw, cache);
  }
  nlohmann::json& j = row.json;
  j = row.result.to_json();
  j["family"] = v.family;
  j["rewrites"] = req.target == v.name ? v.rewrites : "";
  j["mask"] = req.mask;
  j["ms"] = row.ms;
  j["gen"] = hw.name;
  add_latency_fields(j, row.latency, row.predecessor);
  nlohmann::json errors = nlohmann::json::array();
  for (const std::optional<double>& e : normalized_errors(row.result)) {
    errors.push_back(e ? nlohmann::json(*e) : nlohmann::json(nullptr));
  }
  j["normalized_errors"] = errors;
  // Each failing case's `ncverify check` line (check/replay.h): the target at the row's shape
  // with every option, on the row's generation, with the row's determinism runs when they are
  // not check's default for the kernel.
  kernels::CheckInvocation inv;
  inv.target = req.target;
  inv.rebuilds = true;
  inv.gen = hw.name;
  inv.determinism_runs = req.check.determinism_runs;
  inv.default_determinism_runs = v.determinism_runs;
  inv.apriori = req.check.apriori;
  nlohmann::json replay = nlohmann::json::array();
  for (const kernels::CaseResult& c : row.result.cases) {
    if (c.pass) continue;
    replay.push_back(kernels::check_replay_line(inv, req.options, req.params, c));
  }
  j["replay"] = replay;
  return row;
}

}  // namespace ncv::cli
