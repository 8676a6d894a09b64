// One check row of `ncverify report`: the check of a kernel at one shape and option set
// (check/check.h), and beside its verdict what a reader needs to act on it: the kernel's
// modelled latency on the row's generation (tools/report_latency.h), for a rewrite its
// predecessor's latency at the same options and shape and the speed-up, the normalized error of
// every case, and for each failing case the `ncverify check` command line that reproduces it.
// The JSON fields are the contract with the HTML page (tools/report_page/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/variant.h"
#include "model/hw/hw_config.h"
#include "tools/report_latency.h"

namespace ncv::cli {

// Per case: max |err| / bound over the output and (when checked) the log-sum-exp, the number
// behind CheckResult::worst_normalized; nullopt for a case the model refused (a run error) or
// whose ratio is not finite.
std::vector<std::optional<double>> normalized_errors(const kernels::CheckResult& r);

// A predecessor's latency beside a rewrite's: the variant v rewrites, at v's option request
// `given` (resolved by the predecessor) and the same params and generation. `name` is empty when
// v rewrites nothing; `latency.error` says why there is no number (the predecessor does not
// offer those options, does not take those params or does not run on that generation).
struct PredecessorLatency {
  std::string name;
  Latency latency;
};
PredecessorLatency predecessor_latency(const kernels::Variant& v, const kernels::Options& given,
                                       const ParamValues& params, const HwConfig& hw,
                                       LatencyCache& cache);

// Adds latency_us (or null and latency_error), predecessor, predecessor_latency_us (and
// predecessor_latency_error when null) and speedup (predecessor / this, or null) to `row`.
void add_latency_fields(nlohmann::json& row, const Latency& own, const PredecessorLatency& pred);

// "1.18x", or "-" when either latency is missing.
std::string speedup_text(const Latency& own, const PredecessorLatency& pred);

struct CheckRowRequest {
  std::string target;  // how `ncverify check` names the kernel (the replay line's first word)
  const kernels::Variant* variant = nullptr;  // its layout, spec, contract (a bug: its base)
  const Program* program = nullptr;           // what runs: variant->build(options) or an edit
  kernels::Options given;    // the option request of the row (its mask), before defaults
  kernels::Options options;  // variant->resolve(given)
  ParamValues params;
  std::string mask;             // the row's label: none, causal, window, ...
  kernels::CheckOptions check;  // check.run.hw: the row's generation (required)
};

struct CheckRow {
  kernels::CheckResult result;
  Latency latency;
  PredecessorLatency predecessor;
  double ms = 0;        // wall time of the check (not of the latency run)
  nlohmann::json json;  // CheckResult::to_json() plus the report's fields
};

// Runs the check and the latency runs. Throws what check_kernel throws for bad params.
CheckRow run_check_row(const CheckRowRequest& req, LatencyCache& cache);

}  // namespace ncv::cli
