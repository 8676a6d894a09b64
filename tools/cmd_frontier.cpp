// `ncverify frontier KERNEL|FILE.nkir [--param NAME=VALUE]... [--vary seqlen] [--up-to N]
// [--gen trn1|trn2|trn3|all] [--timeout-ms N] [--json]`: the capacity frontier (solver/README.md):
// with the other params fixed, the largest value of one param up to which the kernel's SBUF/PSUM
// allocation fits each generation, computed by Z3. --param fixes params and build options alike;
// options not fixed are all tried, params not fixed take their least value. The search may run past
// the declared domain (--up-to) to show how far a kernel could be widened. Exit 0 when every
// frontier is decided, 1 when a Z3 query ended unknown, 2 on bad usage.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "frontend/nki_trace.h"
#include "kernels/registry.h"
#include "solver/frontier.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/frontier_params.h"
#include "tools/generations.h"
#include "tools/input_file.h"
#include "tools/kernel_source.h"
#include "tools/memory_table.h"
#include "tools/progress.h"
#include "tools/solver_programs.h"

namespace ncv::cli {

namespace {

struct FrontierCommandOptions {
  std::string target;
  std::vector<std::string> assignments;
  std::string vary = "seqlen";
  int64_t up_to = 65536;
  bool up_to_given = false;  // an explicit --up-to below the declared maximum is an error
  std::string gen = "all";
  unsigned timeout_ms = 10'000;
  bool json = false;
  NkiFlags nki;
};

std::string status_name(solver::FrontierResult::Status s) {
  switch (s) {
    case solver::FrontierResult::Status::fits:
      return "fits";
    case solver::FrontierResult::Status::fits_nowhere:
      return "fits_nowhere";
    case solver::FrontierResult::Status::unknown:
      return "unknown";
  }
  return "?";
}

std::string describe(const solver::FrontierResult& r, const std::string& vary) {
  using Status = solver::FrontierResult::Status;
  if (r.status == Status::unknown) return "unknown (" + r.unknown_reason + ")";
  if (r.status == Status::fits_nowhere) {
    return "fits nowhere: " + vary + "=" + std::to_string(r.lo) + " already does not (" +
           r.why_failing + ")";
  }
  std::string s = "fits up to " + vary + "=" + std::to_string(r.largest_fitting);
  if (r.first_failing) {
    s += "; " + std::to_string(*r.first_failing) + " does not (" + r.why_failing + ")";
  } else {
    s += " (everything searched fits)";
  }
  if (r.largest_fitting < r.declared_hi) s += " [INSIDE the declared domain]";
  return s;
}

// What fills memory at the first failing value: the frontier says where the kernel stops fitting,
// this says which buffers to shrink. nullopt when there is no failing value, or no memory to
// show there (`why_not` says why: a dimension below 1, sizes beyond int64).
std::optional<MemoryPeaks> peaks_at_first_failing(const Program& p, const HwConfig& hw,
                                                  const solver::FrontierQuery& q,
                                                  const solver::FrontierResult& r,
                                                  std::string& why_not) {
  if (!r.first_failing) return std::nullopt;
  if (r.first_failing_ill_formed) {
    why_not = "the program cannot run there";
    return std::nullopt;
  }
  ParamValues values = q.fixed;
  values[q.param] = *r.first_failing;
  try {
    return memory_peaks(p, hw, values);
  } catch (const EvalError& e) {
    why_not = "its sizes leave int64 there (" + e.message + ")";
    return std::nullopt;
  }
}

int run_frontier(const FrontierCommandOptions& opts) {
  kernels::Options options;
  ParamValues given;
  const bool traced = frontend::is_python_target(opts.target);
  if (traced) {
    // An NKI kernel takes every assignment (keyword arguments, fixed shapes); integer ones are
    // also the fixed params of the search.
    for (const std::string& a : opts.assignments) {
      const auto eq = a.find('=');
      try {
        if (eq != std::string::npos) given.merge(parse_param_assignments({a}));
      } catch (const UsageError&) {
        // a keyword argument such as use_causal_mask=true: the tracer takes it
      }
    }
  } else {
    split_assignments(kernels::find_variant(opts.target), opts.assignments, options, given);
  }
  NkiFlags nki = opts.nki;
  nki.gen = opts.gen;  // a traced kernel is traced for the generation named (not for `all`)
  const std::vector<kernels::LabelledProgram> programs = solver_programs(
      opts.target, options, traced ? opts.assignments : std::vector<std::string>{}, nki);
  // The generations the kernel runs on: one it does not run on is refused, `all` skips those.
  const GenerationPlan plan =
      generations_for(programs.empty() ? nullptr : programs.front().variant, opts.gen, "");
  const std::vector<const HwConfig*>& gens = plan.run;
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedGeneration& s : plan.skipped) {
    if (!opts.json) std::cout << skip_line(opts.target, s) << "\n";
    skipped.push_back({{"gen", s.gen}, {"reason", s.reason}});
  }
  bool decided = true;
  nlohmann::json rows = nlohmann::json::array();
  // One search per option program and generation (each a binary search of Z3 queries).
  Progress progress("frontier", "searches", static_cast<int64_t>(programs.size() * gens.size()));
  int64_t searched = 0;
  for (const kernels::LabelledProgram& lp : programs) {
    solver::FrontierQuery q;
    q.param = opts.vary;
    q.fixed = frontier_fixed_params(lp.program, given, opts.vary);
    const int64_t declared_hi = lp.program.find_param(opts.vary)->hi;
    if (opts.up_to_given && opts.up_to < declared_hi) {
      throw UsageError("--up-to " + std::to_string(opts.up_to) + " is below the declared maximum " +
                       std::to_string(declared_hi) + " of " + opts.vary + " in " + lp.label +
                       "; the frontier always covers the whole declared domain");
    }
    q.search_hi = std::max(opts.up_to, declared_hi);
    q.timeout_ms = opts.timeout_ms;
    if (!opts.json) {
      std::cout << "frontier " << lp.label << " (" << format_params(q.fixed) << ", " << opts.vary
                << " searched up to " << q.search_hi << ")\n";
    }
    for (const HwConfig* hw : gens) {
      q.hw = hw;
      const auto t = std::chrono::steady_clock::now();
      progress.start(lp.label + " on " + hw->name);
      const solver::FrontierResult r = solver::capacity_frontier(lp.program, q);
      progress.update(++searched, lp.label + " on " + hw->name);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      decided = decided && r.status != solver::FrontierResult::Status::unknown;
      std::string no_peaks;
      const std::optional<MemoryPeaks> peaks =
          peaks_at_first_failing(lp.program, *hw, q, r, no_peaks);
      if (opts.json) {
        nlohmann::json j{{"program", lp.label},
                         {"gen", hw->name},
                         {"fixed", q.fixed},
                         {"param", opts.vary},
                         {"status", status_name(r.status)},
                         {"lo", r.lo},
                         {"step", r.step},
                         {"declared_hi", r.declared_hi},
                         {"searched_hi", r.searched_hi},
                         {"queries", r.queries},
                         {"seconds", s}};
        if (r.status == solver::FrontierResult::Status::fits) {
          j["largest_fitting"] = r.largest_fitting;
        }
        if (r.first_failing) {
          j["first_failing"] = *r.first_failing;
          j["why_failing"] = r.why_failing;
          if (peaks) j["memory_at_first_failing"] = memory_peaks_json(*peaks);
          if (!no_peaks.empty()) j["memory_not_shown"] = no_peaks;
        }
        if (!r.unknown_reason.empty()) j["unknown_reason"] = r.unknown_reason;
        rows.push_back(std::move(j));
        continue;
      }
      char timing[64];
      std::snprintf(timing, sizeof timing, " [%d Z3 queries, %.2f s]", r.queries, s);
      std::cout << "  " << hw->name << ": " << describe(r, opts.vary) << timing << "\n";
      if (peaks) {
        std::cout << "    what fills memory at " << opts.vary << "=" << *r.first_failing << ":\n";
        print_memory_peaks(std::cout, *peaks, "      ");
      } else if (!no_peaks.empty()) {
        std::cout << "    no memory to show at " << opts.vary << "=" << *r.first_failing << ": "
                  << no_peaks << "\n";
      }
    }
  }
  if (opts.json)
    std::cout
        << nlohmann::json{{"frontiers", rows}, {"skipped", skipped}, {"decided", decided}}.dump(2)
        << "\n";
  return decided ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_frontier(CLI::App& app, Action& action) {
  auto opts = std::make_shared<FrontierCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "frontier",
      "The largest seqlen (or --vary param) whose SBUF/PSUM allocation fits each generation, "
      "other params fixed, computed with Z3");
  cmd->add_option("kernel", opts->target,
                  "Registered kernel name, .nkir file or NKI kernel FILE.py:FUNCTION")
      ->required();
  opts->nki.add_options(cmd);
  add_memory_budget_option(cmd);
  cmd->add_option("--param,-p", opts->assignments,
                  "NAME=VALUE: a fixed param or build option (repeatable); options not given are "
                  "all tried, params not given take their least value");
  cmd->add_option("--vary", opts->vary, "The param to search")->capture_default_str();
  cmd->add_option("--up-to", opts->up_to,
                  "Search up to this value, past the declared domain if larger (below the declared "
                  "maximum is an error: the frontier covers the whole domain)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--gen", opts->gen,
                  "trn1, trn2, trn3 or all (the generations the kernel runs on)")
      ->capture_default_str();
  cmd->add_option("--timeout-ms", opts->timeout_ms,
                  "Z3 time limit per query; beyond it the frontier is unknown")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->callback([cmd, opts, &action] {
    opts->up_to_given = cmd->count("--up-to") != 0;
    action = [opts] { return run_frontier(*opts); };
  });
}

}  // namespace ncv::cli
