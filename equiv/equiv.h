// `ncverify equiv`: whether a rewrite computes what the kernel it replaces computes, at three
// levels, per option combination of the original:
//  * bit-exact: both programs' output terms (term.h) are identical at every checked shape, so
//    the rewrite gives the same bits as the original for every input value there (bounded, like
//    Alive2: it says nothing about shapes outside the list, and the output never claims more);
//    refuted only by a concrete counterexample replayed on the interpreter;
//  * real: the terms' real-arithmetic forms (real_form.h) are identical at every checked shape,
//    and every exp the rewrite evaluates has an argument shown to be <= 0 (the overflow
//    obligation real arithmetic hides);
//  * contract: real, and on the tested inputs the two outputs differ by at most the sum of the
//    two precision contracts' error bounds.
// A real-equivalent rewrite that is not bit-exact gets a numerics diff: the places where the two
// programs' terms part (a rounding added or dropped, a dtype, an accumulation order, a constant),
// each with the instructions on both sides.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"

namespace ncv::equiv {

// One side of the comparison: a registered kernel (built per option combination) or a fixed
// program (a .nkir file or a traced NKI kernel) that borrows `variant`'s layout, spec and
// contract when it has one.
struct EquivSide {
  std::string label;
  const kernels::Variant* variant = nullptr;
  std::optional<Program> fixed;
  // This side's options for an option set of the original: a registered kernel takes the ones
  // it has (throws std::invalid_argument for a value it does not offer), defaults filled in; a
  // fixed program keeps the original's.
  kernels::Options options_for(const kernels::Options& original) const;
  // The program for an option set of the original.
  Program build(const kernels::Options& options) const;
  bool registered() const { return !fixed && variant; }
};

enum class Level : uint8_t { bit_exact, real, contract };
const char* level_name(Level l);
std::optional<Level> parse_level(const std::string& s);

enum class Verdict : uint8_t { proved, refuted, unknown };
const char* verdict_name(Verdict v);
// "dtype=bf16 mixed_precision=true ..." ("(no options)" for none): how results name option sets.
std::string options_text(const kernels::Options& o);
// The numeric layer tests, it does not prove: "pass", "fail", "not run".
const char* numeric_verdict_name(Verdict v);

struct EquivRequest {
  EquivSide original, rewrite;
  kernels::Options options;      // pinned options; the others range over the original's values
  ParamValues params;            // pinned params; the others take the checked shape set
  std::optional<Level> require;  // default: bit-exact when the rewrite claims the same numerics
  int cases = 4;                 // concrete input sets per shape (counterexamples, numeric layer)
  uint64_t seed = 1;
  // The most the two programs' terms and their real forms may take at one shape (per option set;
  // option sets run on worker threads); beyond it the symbolic layers are unknown there (the
  // concrete cases still run). 4 GiB: the tutorial chain's links that change numerics take
  // 2.3-2.4 GB at seqlen 1024 x d_head 128 (the shared terms as atoms, the real forms let go as
  // they grow; equiv/README.md); with 2 GiB they fit too (1.8-1.9 GB) but take 50-90% longer as
  // the real forms are rebuilt more often, and the report's time is the tighter target.
  int64_t term_budget_mib = 4096;
  RunOptions run;
  // Called once before the option sets run (0 done, options "") and as each one finishes: how
  // many are done of how many, and which one (the command line's progress line). Option sets
  // run on worker threads: it must be thread-safe.
  std::function<void(size_t done, size_t total, const std::string& options)> on_option_set;
};

// A concrete input on which the two programs' outputs differ, found by running both on the
// interpreter (so it is replayed by construction), with where the values part.
struct Counterexample {
  ParamValues params;
  std::string inputs;  // the distribution or recipe and seed that generated them
  uint64_t seed = 0;
  std::string output;
  std::vector<int64_t> index;
  uint32_t original_bits = 0, rewrite_bits = 0;
  double original_value = 0, rewrite_value = 0;
  // The first instruction on each side whose value differs (from the terms of that element),
  // with both values there.
  std::string original_at, rewrite_at;
  double original_at_value = 0, rewrite_at_value = 0;
  double bound = 0;  // numeric layer: the two contracts' bound at the element (0: bit layer)
  nlohmann::json to_json() const;
};

// One place where the two programs' terms part although their real forms agree.
struct NumericsDifference {
  std::string kind;                     // rounding, dtype, accumulation order, constant, operation
  std::string original, rewrite;        // the two subterms, short
  std::string original_at, rewrite_at;  // "#id instruction" on each side ("" for none)
  // Output elements whose terms part here, among those walked (at most 2000 per shape).
  int64_t elements = 0;
};

// One output tensor at one checked shape: how many of its elements have identical terms, and
// the box of indices (per dim, first and last) that holds every element whose terms differ.
struct OutputRegion {
  ParamValues shape;
  std::string output;
  int64_t elements = 0, differing = 0;
  std::vector<int64_t> box_first, box_last;  // empty when nothing differs
};

struct ExpObligation {
  std::string at;  // "#id instruction" of the rewrite
  bool discharged = false;
  // Why the argument could not be looked at (its real form has none, or outgrew the budget);
  // empty when it was and the pattern was not found (or was).
  std::string not_checked;
};

struct OptionOutcome {
  kernels::Options options;
  std::vector<ParamValues> shapes;
  std::optional<ParamValues> tested_shape;  // concrete cases only
  std::string interface_error;  // the two programs do not take and give the same tensors
  // The rewrite fails a dynamic check (at the case-0 inputs of a shape) where the original runs:
  // a replayed refutation at every level.
  std::string run_error;
  // A run (of the rewrite at a case, or of the original at case 0) reached a result the
  // documentation leaves undefined (CheckKind::undefined_result: an int32 add on GpSimd that
  // overflows): the model cannot say what either side computes there, so every level stays
  // unknown, never refuted. Which side and the message.
  std::string undefined_result;
  // Non-empty: the two programs are one up to kLayer0Differences (structural.h), so bit-exactness
  // holds for every shape of this domain (described here), not only the checked ones; the terms are
  // then not built.
  std::string all_shapes;
  // The checked shapes are every point of the domain (a domain of at most kWholeDomainPoints
  // points, no param pinned; a program without params has one): a bounded proof then holds for
  // every shape too.
  bool whole_domain = false;
  // Why layer 0 did not prove this option set for every shape (structural.h layer0_difference):
  // set when all_shapes is empty.
  std::string layer0_difference;
  Verdict bit_exact = Verdict::unknown;
  std::string bit_detail;
  std::vector<std::string> assumptions;  // side conditions a bit-exact proof used
  std::optional<Counterexample> bit_counterexample;
  std::vector<OutputRegion> regions;
  Verdict real = Verdict::unknown;
  std::string real_detail;
  std::vector<NumericsDifference> numerics_diff;
  std::vector<ExpObligation> overflow;  // the rewrite's exp instructions
  bool overflow_ok = false;
  Verdict numeric = Verdict::unknown;  // proved here means: every tested case within the bounds
  std::string numeric_detail;
  int numeric_cases = 0;
  double max_normalized = 0;  // max |rewrite - original| / (bound_O + bound_R)
  std::optional<Counterexample> numeric_counterexample;
  nlohmann::json contract_diff = nlohmann::json::array();
  double seconds = 0;

  bool holds(Level l) const;
  // "holds", "refuted" (a replayed counterexample or an interface/run failure at level l) or
  // "unknown"; the overall verdict is the worst of the option sets'.
  std::string status(Level l) const;
  // Why the status at l is unknown, in words naming the cause (the term budget, an opaque
  // construct, no counterexample found, an undischarged overflow obligation, no contract); ""
  // unless status(l) is "unknown".
  std::string unknown_reason(Level l) const;
  nlohmann::json to_json() const;
};

struct EquivResult {
  std::string original, rewrite;
  Level required = Level::bit_exact;
  std::string scope;  // what the proofs cover, in words
  std::vector<OptionOutcome> outcomes;
  // "holds", "refuted" (a refutation or an interface/run failure at the required level) or
  // "unknown" (neither proved nor refuted: never a pass).
  std::string verdict;
  int exit_code = 1;
  std::string text() const;
  nlohmann::json to_json() const;
};

// Throws InputError / std::invalid_argument on bad input (unknown option value, params outside
// the original's domain, a rewrite whose params do not cover it).
EquivResult run_equiv(const EquivRequest& request);

// "seqlen=512 d_head=64": a shape as the verdicts print it.
std::string params_str(const ParamValues& p);

// The shapes a bounded check uses for `p` with `pinned` params fixed: the smallest point of the
// domain, and points that take each tiled dimension past one tile and an unaligned size.
// A domain of at most kWholeDomainPoints points with no param pinned is checked at every point.
inline constexpr size_t kWholeDomainPoints = 4;
std::vector<ParamValues> checked_shapes(const Program& p, const ParamValues& pinned);
// A larger shape where only the concrete cases run (no terms): several tiles in every tiled
// dimension (4 steps past the smallest), so loops run more than the one or two iterations of the
// checked shapes (a carried dependency across an affine loop's iterations shows there).
std::optional<ParamValues> tested_shape(const Program& p, const ParamValues& pinned);

}  // namespace ncv::equiv
