// The default `ncverify check`: when the user pins no shape, the tool chooses the shapes from the
// program's declared domain and runs the option combinations the user left open, in the order of
// their value (check_plan.h), within a time budget it keeps: a case starts only while the budget
// lasts and its predicted time fits what is left, so a sweep ends within the budget plus one case
// (check/README.md "The default check").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

// A shape of the sweep and why it is there.
struct PlannedShape {
  ParamValues params;
  std::string role;  // "smallest", "one tile + one step", "non-power-of-two", "several tiles",
                     // "widest", "largest within budget"
};

// The fixed shapes of the sweep for program p, params in `pinned` fixed. A param with
// multiple_of > 1 is a tiled dimension (its step the tile); the others (batch, head dim) are
// untiled. Roles (check_plan.h sweep_roles): the smallest legal shape; one tile plus one step
// (untiled: lo + 1); a non-power-of-two multiple (three tiles; untiled: the smallest
// non-power-of-two from lo + 2); several tiles (eight; untiled: lo + 1); the widest (one tile,
// untiled params at their largest). A role whose picks break a relation of the domain moves to the
// nearest legal shape (model/ir/domain_search.h), pinned params kept; a role with no legal shape
// near it, and duplicates, are dropped.
std::vector<PlannedShape> planned_shapes(const Program& p, const ParamValues& pinned);

// A case's predicted time at params `to` from its measured time at `from`: quadratic in each
// tiled param (attention is quadratic in the sequence), linear in the untiled ones (batch,
// head dim); params absent from either side do not count.
double predicted_seconds(const Program& p, const ParamValues& from, const ParamValues& to,
                         double seconds_per_case);

// The largest shape above `from` (the widest shape: tiled params grown together, others as in
// `from`, params in `pinned` never) whose predicted time (predicted_seconds) fits `seconds`.
// nullopt when nothing larger fits or no unpinned param is tiled.
std::optional<PlannedShape> largest_within(const Program& p, const PlannedShape& from,
                                           double seconds_per_case, int cases, double seconds,
                                           const ParamValues& pinned = {});

struct SweepOptions {
  double budget_s = 30;     // wall time for the whole sweep (every option set)
  int cases_per_shape = 8;  // input sets per shape (the gate distributions first)
  CheckOptions check;       // seed, run options, oracle choice (cases is set per shape)
  // Called before each shape runs: (shapes done, shapes planned, what is starting).
  std::function<void(int, int, const std::string&)> on_shape;
  // The planner's clock (seconds since the sweep started) and the run of one case (CheckOptions
  // with cases = 1, the case's seed and distribution), so that a test can check the planner's
  // accounting with a fake clock and per-case cost. Unset: the steady clock and check_kernel.
  std::function<double()> clock;
  std::function<CheckResult(const Program&, const Options&, const ParamValues&,
                            const CheckOptions&)>
      run_case;
};

struct SweepRun {
  Options options;
  PlannedShape shape;
  CheckResult result;
  double seconds = 0;
};

// A planned shape the sweep did not run, reported as skipped, never as passed.
struct SkippedShape {
  std::string options;
  PlannedShape shape;       // params empty when the option set's program was not built
  double predicted_s = -1;  // one case's predicted time (< 0: not predicted)
  double left_s = 0;        // budget left when it was passed over
  std::string reason;       // "budget", "stopped at the first failing case", "no legal shape"
};

// An option set whose program could not be built (a catalogue entry whose edit does not apply
// to it, a build error): names the option set.
struct OptionSetError : std::invalid_argument {
  OptionSetError(const std::string& options, const std::string& what)
      : std::invalid_argument("at options " + options + ": " + what) {}
};

struct SweepResult {
  std::vector<SweepRun> runs;
  std::vector<SkippedShape> skipped;
  bool pass = false;  // every case passed, and at least one ran, and none needed spills
  // No case failed but some is unknown (an undefined result) or needed spills
  // (CheckResult::unknown): the first such reason.
  std::optional<std::string> unknown;
  const char* verdict() const { return pass ? "PASS" : unknown ? "UNKNOWN" : "FAIL"; }
  double seconds = 0;
  double budget_s = 0;
  double max_case_s = 0;  // the longest single case (the promise: seconds <= budget + about it)
  int planned = 0;        // (option set x role) items planned
  // Why the sweep went past its budget, when it did: a budget too small for even one case runs
  // exactly one (the most bug-exposing input at the smallest shape) and says so here.
  std::string note;
  int cases() const;
  // The run and case with the largest normalized error (a failing one first, then an unknown one).
  const SweepRun* worst_run() const;
  const CaseResult* worst_case() const;
  std::string summary() const;
  nlohmann::json to_json() const;
};

// Runs the sweep over `option_sets` (each built by `build`, lazily) for variant v (layout, spec,
// contract), in check_plan.h's order: first one case per (option set, role) item, the first item
// with every case; then more cases per run up to cases_per_shape while 80% of the budget lasts;
// then larger shapes (largest_within) with the rest. Throws like check_kernel on bad params,
// OptionSetError when an option set's program cannot be built, and std::invalid_argument when no
// option set has a legal shape with the pinned params.
SweepResult check_sweep(const Variant& v, const std::vector<Options>& option_sets,
                        const std::function<Program(const Options&)>& build,
                        const ParamValues& pinned, const SweepOptions& opts);

// The case of r with the largest normalized error (a failing one first, then an unknown one; a
// model error counts as infinite), or null when r has no cases.
const CaseResult* worst_case_of(const CheckResult& r);

// "peaked seed=3": the input set of a case, as `ncverify check --dist NAME --seed N` takes it.
std::string case_recipe(const CaseResult& c);

}  // namespace ncv::kernels
