// `ncverify bugs [--json] [--only NAME]`: the catch table (properties/README.md) — for every entry
// of the bug catalogue (properties/bug_catalogue.h), whether the property suite catches it (and
// with which property) and whether the common baseline does (allclose(atol=1e-2) on 5 uniform
// inputs at one shape), ending with `properties caught X/N; baseline caught Y/N`. Exit 0 when the
// property suite catches every entry, 1 otherwise.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check_sweep.h"
#include "check/replay.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "properties/allclose_baseline.h"
#include "properties/bug_catalogue.h"
#include "properties/suite_runner.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

struct BugsCommandOptions {
  bool json = false;
  bool gate = false;
  double budget_s = 30;
  std::vector<std::string> only;
};

// One row of the gate table: the default check (the shape sweep, every open option set) of a
// kernel, stopped at its first failing case.
struct GateRow {
  std::string name, base;
  bool failed = false;
  std::string where;  // the first failing case: the `ncverify check` line that replays it
  double seconds = 0;
  int cases = 0;
  std::string error;    // the check could not run (an option set's program failed to build)
  std::string unknown;  // not failed, not passed: why (SweepResult::unknown)
};

GateRow gate_row(const std::string& name, const kernels::Variant& v, const kernels::Options& pinned,
                 const std::function<Program(const kernels::Options&)>& build, double budget_s) {
  // (the sweep builds each option set's program when it reaches it)
  const std::vector<kernels::Options> option_sets = kernels::resolved_combinations(v, pinned);
  kernels::SweepOptions so;
  so.budget_s = budget_s;
  so.check.stop_on_failure = true;
  so.check.exact_oracle_max_macs = 1e5;  // as `ncverify check` sweeps
  // As `ncverify check` without --gen and --determinism-runs: the kernel's own generation and
  // runs per case.
  so.check.run.hw = &generation_for(&v, "");
  so.check.determinism_runs = v.determinism_runs;
  kernels::SweepResult r;
  try {
    r = kernels::check_sweep(v, option_sets, build, {}, so);
  } catch (const std::invalid_argument& e) {
    // (a catalogue entry whose edit does not apply at some option set): this row, not the table
    GateRow row{name, v.name, false, "", 0, 0};
    row.error = e.what();
    return row;
  }
  // An unknown sweep (an undefined result, spills) neither catches a bug nor fails a kernel.
  GateRow row{name, v.name, !r.pass && !r.unknown, "", r.seconds, r.cases()};
  row.unknown = r.unknown.value_or("");
  for (const kernels::SweepRun& run : r.runs) {
    if (run.result.pass || (row.failed && run.result.unknown)) continue;
    for (const kernels::CaseResult& c : run.result.cases) {
      if (c.pass || (row.failed && c.unknown)) continue;
      // The `ncverify check` line that re-runs the case (check/replay.h): the entry or kernel at
      // the run's shape and options, on its own generation and determinism runs.
      kernels::CheckInvocation inv;
      inv.target = name;
      inv.rebuilds = true;
      inv.determinism_runs = inv.default_determinism_runs = v.determinism_runs;
      row.where =
          kernels::check_replay_line(inv, run.options, run.shape.params, c) +
          (c.unknown     ? " (undefined result: unknown)"
           : c.run_error ? " (model error)"
                         : " (max|err|/bound " + format_ratio(c.comparison.max_normalized) + ")");
      break;
    }
    break;
  }
  return row;
}

// `ncverify bugs --gate`: every catalogue entry and every registered kernel through the default
// check. Exit 0 when every entry is caught and no correct kernel fails.
int run_gate(const BugsCommandOptions& opts) {
  std::vector<GateRow> bugs, kernels_rows;
  Progress progress("bugs --gate", "kernels",
                    static_cast<int64_t>(opts.only.empty() ? props::bug_catalogue().size() +
                                                                 kernels::registry().size()
                                                           : opts.only.size()));
  int n = 0;
  for (const props::BugEntry& bug : props::bug_catalogue()) {
    if (!opts.only.empty() &&
        std::find(opts.only.begin(), opts.only.end(), bug.name) == opts.only.end()) {
      continue;
    }
    const kernels::Variant& base = *kernels::find_variant(bug.base);
    progress.start(bug.name);
    bugs.push_back(gate_row(
        bug.name, base, bug.options,
        [&](const kernels::Options& o) { return bug.edit(base.build(o)); }, opts.budget_s));
    progress.update(++n, bug.name);
  }
  if (opts.only.empty()) {
    for (const kernels::Variant& v : kernels::registry()) {
      progress.start(v.name);
      kernels_rows.push_back(gate_row(
          v.name, v, {}, [&](const kernels::Options& o) { return v.build(o); }, opts.budget_s));
      progress.update(++n, v.name);
    }
  }
  int caught = 0, false_failures = 0;
  double bug_s = 0, kernel_s = 0;
  for (const GateRow& r : bugs) {
    caught += r.failed ? 1 : 0;
    bug_s += r.seconds;
  }
  for (const GateRow& r : kernels_rows) {
    false_failures += r.failed || !r.error.empty() ? 1 : 0;
    kernel_s += r.seconds;
  }
  if (opts.json) {
    auto rows = [](const std::vector<GateRow>& rs) {
      nlohmann::json a = nlohmann::json::array();
      for (const GateRow& r : rs) {
        a.push_back(
            {{"name", r.name},
             {"base", r.base},
             {"failed", r.failed},
             {"unknown", r.unknown.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.unknown)},
             {"first_failure", r.where},
             {"error", r.error},
             {"seconds", r.seconds},
             {"cases", r.cases}});
      }
      return a;
    };
    std::cout << nlohmann::json{{"catalogue", rows(bugs)},
                                {"correct_kernels", rows(kernels_rows)},
                                {"caught", caught},
                                {"entries", bugs.size()},
                                {"false_failures", false_failures},
                                {"budget_s", opts.budget_s}}
                     .dump(2)
              << "\n";
  } else {
    print_stdout("%-34s %-24s %-8s %7s %6s  %s\n", "catalogue entry", "base kernel", "check",
                 "time s", "cases", "first failing case (the check that replays it)");
    for (const GateRow& r : bugs) {
      print_stdout("%-34s %-24s %-8s %7.2f %6d  %s\n", r.name.c_str(), r.base.c_str(),
                   r.failed             ? "caught"
                   : !r.error.empty()   ? "ERROR"
                   : !r.unknown.empty() ? "UNKNOWN"
                                        : "MISSED",
                   r.seconds, r.cases, (r.error.empty() ? r.where : r.error).c_str());
    }
    if (!kernels_rows.empty()) {
      print_stdout("\n%-34s %-8s %7s %6s\n", "correct kernel", "check", "time s", "cases");
      for (const GateRow& r : kernels_rows) {
        print_stdout("%-34s %-8s %7.2f %6d  %s\n", r.name.c_str(),
                     r.failed             ? "FAILED"
                     : !r.error.empty()   ? "ERROR"
                     : !r.unknown.empty() ? "UNKNOWN"
                                          : "pass",
                     r.seconds, r.cases, (r.error.empty() ? r.where : r.error).c_str());
      }
    }
    print_stdout(
        "default check caught %d/%zu catalogue entries in %.1f s; correct kernels failed "
        "%d/%zu (%.1f s); budget %.0f s per kernel\n",
        caught, bugs.size(), bug_s, false_failures, kernels_rows.size(), kernel_s, opts.budget_s);
  }
  return caught == static_cast<int>(bugs.size()) && false_failures == 0 ? kExitOk
                                                                        : kExitVerificationFailure;
}

int run_bugs(const BugsCommandOptions& opts) {
  for (const std::string& name : opts.only) {
    if (!props::find_bug(name)) throw UsageError("--only " + name + ": no such catalogue entry");
  }
  if (opts.gate) return run_gate(opts);
  const props::SuiteParams params = props::default_suite_params();
  nlohmann::json rows = nlohmann::json::array();
  int n = 0, by_props = 0, by_baseline = 0;
  int64_t visited = 0;             // entries run or listed as heavy (the progress count)
  std::vector<std::string> heavy;  // entries on heavy bases, not run
  if (!opts.json) {
    print_stdout("%-34s %-24s %-28s %s\n", "bug", "base kernel", "property suite",
                 "baseline allclose(atol=1e-2)");
  }
  Progress progress(
      "bugs", "catalogue entries",
      static_cast<int64_t>(opts.only.empty() ? props::bug_catalogue().size() : opts.only.size()));
  for (const props::BugEntry& bug : props::bug_catalogue()) {
    if (!opts.only.empty() &&
        std::find(opts.only.begin(), opts.only.end(), bug.name) == opts.only.end()) {
      continue;
    }
    if (kernels::heavy_check(*kernels::find_variant(bug.base))) {
      // The property suite runs dozens of cases per property and a case of a heavy base costs
      // about a minute: listed, not counted (`bugs --gate --only NAME` checks the entry).
      heavy.push_back(bug.name);
      progress.update(++visited, bug.name);
      if (!opts.json) {
        print_stdout("%-34s %-24s %-28s %s\n", bug.name.c_str(), bug.base.c_str(),
                     "not run (heavy base)", "not run");
      }
      continue;
    }
    progress.start(bug.name);
    const props::KernelUnderTest k = props::broken_kernel(bug);
    const props::SuiteVerdict suite = props::run_property_suite(k, params);
    const props::BaselineVerdict base = props::allclose_baseline(k);
    ++n;
    progress.update(++visited, bug.name);
    by_props += suite.caught;
    by_baseline += base.caught;
    const std::string suite_cell = suite.caught    ? "caught (" + suite.property + ")"
                                   : suite.gave_up ? "MISSED (" + suite.property + " gave up)"
                                                   : "MISSED";
    const std::string base_cell = !base.caught          ? "missed"
                                  : base.by_model_check ? "caught (model check)"
                                                        : "caught";
    if (opts.json) {
      rows.push_back({{"bug", bug.name},
                      {"what", bug.what},
                      {"base", bug.base},
                      {"properties_caught", suite.caught},
                      {"property", suite.property},
                      {"cases_before_failure", suite.cases_before},
                      {"property_message", suite.message},
                      {"baseline_caught", base.caught},
                      {"baseline_by_model_check", base.by_model_check},
                      {"baseline_detail", base.detail},
                      {"baseline_shape", base.shape}});
    } else {
      print_stdout("%-34s %-24s %-28s %s\n", bug.name.c_str(), bug.base.c_str(), suite_cell.c_str(),
                   base_cell.c_str());
    }
  }
  if (opts.json) {
    std::cout << nlohmann::json{{"rows", rows},
                                {"properties_caught", by_props},
                                {"baseline_caught", by_baseline},
                                {"entries", n},
                                {"not_run_heavy", heavy},
                                {"rc_seed", params.seed},
                                {"rc_max_success", params.max_success}}
                     .dump(2)
              << "\n";
  } else {
    print_stdout("properties caught %d/%d; baseline caught %d/%d\n", by_props, n, by_baseline, n);
    if (!heavy.empty()) {
      print_stdout(
          "%zu entries on heavy kernels not run (one check case costs most of a minute): "
          "`ncverify bugs --gate --only NAME` checks them\n",
          heavy.size());
    }
  }
  return by_props == n ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_bugs(CLI::App& app, Action& action) {
  auto opts = std::make_shared<BugsCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bugs",
      "Catch table: the bug catalogue against the property suite and the allclose baseline");
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the table");
  cmd->add_flag("--gate", opts->gate,
                "Instead: run the default `ncverify check` (shape sweep, every option set) on "
                "every catalogue entry and every registered kernel; print caught/total and time");
  cmd->add_option("--budget-s", opts->budget_s, "With --gate: the check budget per kernel")
      ->check(seconds_in_range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--only", opts->only, "Only these catalogue entries (repeatable)")
      ->expected(1)
      ->take_all();
  cmd->callback([opts, &action] { action = [opts] { return run_bugs(*opts); }; });
}

}  // namespace ncv::cli
