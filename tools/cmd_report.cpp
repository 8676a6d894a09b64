// `ncverify report [--cases N] [--seqlen N] [--json]`: the main job (ci/report). Every
// registered kernel, with its default options and, where it offers one, its causal mask, is
// checked against the oracle at one shape (seqlen clamped into its domain, d_head 64 where
// allowed, one batch entry); one row per check. Exit 0 when all pass, 1 otherwise.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "kernels/check.h"
#include "kernels/registry.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

struct ReportOptions {
  int cases = 2;
  int64_t seqlen = 1024;
  bool json = false;
};

// The report shape: every param at its smallest legal value, seqlen near `seqlen`, d_head 64.
ParamValues report_params(const Program& p, int64_t seqlen) {
  ParamValues pv;
  for (const Param& prm : p.params) {
    const int64_t m = prm.multiple_of;
    int64_t want = prm.name == "seqlen" ? seqlen : prm.name == "d_head" ? 64 : prm.lo;
    want = std::clamp(want, prm.lo, prm.hi);
    pv[prm.name] = std::max((prm.lo + m - 1) / m * m, want / m * m);
  }
  return pv;
}

bool offers_causal(const kernels::Variant& v) {
  for (const kernels::OptionSpec& o : v.options) {
    if (o.name == "use_causal_mask") {
      return std::find(o.values.begin(), o.values.end(), "true") != o.values.end();
    }
  }
  return false;
}

int run_report(const ReportOptions& opts) {
  nlohmann::json rows = nlohmann::json::array();
  bool all_pass = true;
  if (!opts.json) {
    std::printf("%-24s %-22s %-6s %-30s %-22s %10s  %-4s %11s\n", "kernel", "rewrites", "mask",
                "shape", "contract", "worst", "", "time");
  }
  for (const kernels::Variant& v : kernels::registry()) {
    for (bool causal : {false, true}) {
      if (causal && !offers_causal(v)) continue;
      kernels::Options given;
      if (causal) given["use_causal_mask"] = "true";
      const kernels::Options o = v.resolve(given);
      const Program p = v.build(o);
      const ParamValues params = report_params(p, opts.seqlen);
      kernels::CheckOptions co;
      co.cases = opts.cases;
      co.run.record_trace = false;
      const auto t0 = std::chrono::steady_clock::now();
      const kernels::CheckResult r = kernels::check_kernel(v, p, o, params, co);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      all_pass = all_pass && r.pass;
      nlohmann::json row = r.to_json();
      row["rewrites"] = v.rewrites;
      row["ms"] = ms;
      rows.push_back(row);
      if (!opts.json) {
        std::string shape;
        for (const auto& [name, value] : params) {
          shape += (shape.empty() ? "" : " ") + name + "=" + std::to_string(value);
        }
        std::printf("%-24s %-22s %-6s %-30s %-22s %10.3g  %-4s %8.0f ms\n", v.name.c_str(),
                    v.rewrites.empty() ? "-" : v.rewrites.c_str(), causal ? "causal" : "none",
                    shape.c_str(), r.contract.name.c_str(), r.worst_normalized,
                    r.pass ? "PASS" : "FAIL", ms);
        if (!r.pass) std::cout << r.summary();
      }
    }
  }
  if (opts.json) {
    std::cout << nlohmann::json{{"checks", rows}, {"pass", all_pass}}.dump(2) << "\n";
  } else {
    std::printf(
        "\n%s: every registered kernel vs the oracle under its precision contract (%d "
        "seeded cases each; worst = max |err| / bound, pass <= 1)\n",
        all_pass ? "PASS" : "FAIL", opts.cases);
  }
  return all_pass ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Check every registered kernel against the oracle and print one row per check");
  cmd->add_option("--cases", opts->cases, "Seeded input sets per check")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--seqlen", opts->seqlen, "Sequence length (clamped into each kernel's domain)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the table");
  cmd->callback([opts, &action] { action = [opts] { return run_report(*opts); }; });
}

}  // namespace ncv::cli
