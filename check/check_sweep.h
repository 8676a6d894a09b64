// The default `ncverify check`: when the user pins no shape, the tool chooses the shapes from the
// program's declared domain and runs every option combination the user left open, within a time
// budget (check/README.md "The default check").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
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
// untiled. Roles: the smallest legal shape; one tile plus one step (untiled: lo + 1); a
// non-power-of-two multiple (three tiles; untiled: the smallest non-power-of-two from lo + 2);
// several tiles (eight; untiled: lo + 1); the widest (one tile, untiled params at their largest).
// Shapes outside the declared domain (relations) and duplicates are dropped.
std::vector<PlannedShape> planned_shapes(const Program& p, const ParamValues& pinned);

// A case's predicted time at params `to` from its measured time at `from`: quadratic in each
// tiled param (attention is quadratic in the sequence), linear in the untiled ones (batch,
// head dim); params absent from either side do not count.
double predicted_seconds(const Program& p, const ParamValues& from, const ParamValues& to,
                         double seconds_per_case);

// The largest shape above `from` (the widest shape: tiled params grown together, others as in
// `from`) whose predicted time (predicted_seconds) fits `seconds`. nullopt when nothing larger
// fits or no param is tiled.
std::optional<PlannedShape> largest_within(const Program& p, const PlannedShape& from,
                                           double seconds_per_case, int cases, double seconds);

struct SweepOptions {
  double budget_s = 30;     // wall time for the whole sweep (every option set)
  int cases_per_shape = 8;  // input sets per shape (the gate distributions first)
  CheckOptions check;       // seed, run options, oracle choice (cases is set per shape)
  // Called before each shape runs: (shapes done, shapes planned so far, what is starting).
  std::function<void(int, int, const std::string&)> on_shape;
};

struct SweepRun {
  Options options;
  PlannedShape shape;
  CheckResult result;
  double seconds = 0;
};

// A shape the budget did not allow (reported as skipped, never as passed).
struct SkippedShape {
  std::string options;
  PlannedShape shape;
  double predicted_s = 0;  // one case's predicted time
};

struct SweepResult {
  std::vector<SweepRun> runs;
  std::vector<SkippedShape> skipped;
  bool pass = false;
  double seconds = 0;
  double budget_s = 0;
  int cases() const;
  // The run and case with the largest normalized error (a failing one first).
  const SweepRun* worst_run() const;
  const CaseResult* worst_case() const;
  std::string summary() const;
  nlohmann::json to_json() const;
};

// Runs the sweep over `option_sets` (each built by `build`) for variant v (layout, spec,
// contract). Throws like check_kernel on bad params.
SweepResult check_sweep(const Variant& v, const std::vector<Options>& option_sets,
                        const std::function<Program(const Options&)>& build,
                        const ParamValues& pinned, const SweepOptions& opts);

// The case of r with the largest normalized error (a failing one first; a model error counts as
// infinite), or null when r has no cases.
const CaseResult* worst_case_of(const CheckResult& r);

// "peaked seed=3": the input set of a case, as `ncverify check --dist NAME --seed N` takes it.
std::string case_recipe(const CaseResult& c);

}  // namespace ncv::kernels
