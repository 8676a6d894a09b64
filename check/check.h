// `ncverify check`: a kernel run on the model for seeded random inputs (and the oracle issue's
// hard value distributions), compared with the oracle under the kernel's precision contract.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/interp/determinism.h"
#include "model/interp/dynamic_error.h"
#include "oracle/comparison.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {

// Thrown by check_kernel_with (so by check_kernel and the sweep) for a program whose outputs
// depend on random draws (model/ir/random_draws.h): the model's values are not the hardware's, so
// the verdict is unknown, never PASS or FAIL on made-up numbers. what() is the reason.
struct UnknownVerdict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CheckOptions {
  int cases = 3;      // seeded input sets; `distributions` are cycled through
  uint64_t seed = 1;  // case n uses seed + n
  // Case n draws distributions[n % size]; empty: check_distributions() (the bug-exposing ones
  // first).
  std::vector<oracle::Distribution> distributions;
  RunOptions run;  // hw generation, budgets
  // Runs per case under schedule seeds 0..N-1 (model/interp/determinism.h: the SPMD cores'
  // order within each lockstep step), compared byte for byte; a difference fails the case. 0 or
  // 1: one run (schedule seed 0).
  int determinism_runs = 0;
  // Problems with at most this many multiply-adds use the exact oracle; larger ones the fast
  // oracle, whose own bound is added to the kernel's.
  double exact_oracle_max_macs = 4e6;
  // Contracts whose case bounds are accepted besides the kernel's own (per element the largest
  // of them): a rewrite checked under the kernel it replaces may round where any member of that
  // kernel's family rounds (family_contracts). Empty: the kernel's own contract only.
  std::vector<oracle::PrecisionContract> also_accept;
  // Also compute the a-priori bound (and report its ratio) when the case bound certifies every
  // element; it is computed anyway where the case bound does not.
  bool apriori = false;
  // Also compute the FlashAttention-style ratio (CaseResult::fa_ratio). It needs the contract's
  // reference evaluation (a product and a lane of roundings in the case bound) that nothing else
  // reads, so it is computed only when asked: the command line asks with --json.
  bool fa_ratio = false;
  // Stop after the first failing case (a gate that only needs the verdict); an unknown case
  // (CaseResult::unknown) does not stop it, since a later case may fail.
  bool stop_on_failure = false;
  // Called after each case with the number done (the command line's progress line).
  std::function<void(int done)> on_case;
};

struct CaseResult {
  std::string distribution;  // "uniform", "normal", "large_logits", ...
  uint64_t seed = 0;
  bool exact_oracle = false;  // false: fast oracle (+ its bound)
  // The model refused the run: the case fails, except for an undefined result (below).
  std::optional<DynamicError> run_error;
  // Why the case's verdict is unknown: its run reached a result the documentation leaves
  // undefined (run_error of kind undefined_result, model/isa/check_kind.h: an int32 add that
  // overflows on GpSimd, a top-8 value the data does not hold). The kernel may run correctly on
  // hardware, so the case neither passes nor fails: pass is false and failed() too. Not set when
  // the case is also nondeterministic (a schedule-dependent result is a failure whatever it is).
  std::optional<std::string> unknown;
  // The run needed spills (RunResult::spill): its values are compared as usual (spills change
  // no value, so wrong values still fail), but a passing case's verdict is unknown.
  std::optional<DynamicError> spill;
  // CheckOptions::determinism_runs > 1: the first run whose outputs (or dynamic-check failure)
  // differ from run 0's; such a case fails whatever its comparison says (the comparison is of
  // run 0).
  std::optional<ScheduleMismatch> nondeterministic;
  int determinism_runs = 1;  // runs made (stops at the first mismatch)
  // Against the case bound (min of the a-priori and the case bound, oracle/case_bound.h); valid
  // when run_error is empty.
  oracle::Comparison comparison;
  // The kernel's log-sum-exp output against the oracle's lse under the a-priori lse bound
  // (ERROR_BOUNDS.md §4 "The log-sum-exp output"), when the layout declares an lse tensor and
  // the program stores it; a failing lse fails the case.
  std::optional<oracle::Comparison> lse;
  // The kernel's cached softmax statistics (Layout::neg_max, Layout::recip_sum; nki-library
  // attention_cte's cache_softmax) against the oracle's row max and 1 / row sum under their
  // a-priori bounds (ERROR_BOUNDS.md §4 "The cached softmax statistics"), when the layout declares
  // them and the program stores them; a failing one fails the case.
  std::optional<oracle::Comparison> row_max, recip_sum;
  // max |err| / the a-priori bound alone (the guarantee, error_bound.h); NaN when it was not
  // computed (CheckOptions::apriori false and the case bound certified every element).
  double apriori_normalized = std::numeric_limits<double>::quiet_NaN();
  // FlashAttention's criterion as a ratio: max |kernel - exact| / (2 max |reference - exact|),
  // the reference computed in the kernel's own precision (<= 1: FlashAttention's test passes).
  // NaN when it was not computed (CheckOptions::fa_ratio false).
  double fa_ratio = std::numeric_limits<double>::quiet_NaN();
  bool pass = false;

  // Neither passed nor unknown: the kernel is wrong on this case.
  bool failed() const { return !pass && !unknown; }
  // "model error: ...", "undefined result: ...", "nondeterministic: ..." or the comparison's
  // line.
  std::string verdict_line() const;
};

struct CheckResult {
  std::string kernel;
  ParamValues params;
  Options options;
  oracle::PrecisionContract contract;
  std::vector<CaseResult> cases;
  // max over cases of max_normalized; +inf on a run error (an undefined result's too) or on a
  // case that fails through non-finite or uncertified elements (their ratio is not defined)
  double worst_normalized = 0;
  // Medians over the cases without a model error: max |err| / case bound, / a-priori bound, and
  // the FlashAttention-style ratio (NaN when no case computed it).
  double median_case_ratio = 0, median_apriori_ratio = 0, median_fa_ratio = 0;
  // Every case passed, and at least one ran, and no case needed spills.
  bool pass = false;
  // No case failed but some case is unknown (CaseResult::unknown: an undefined result) or its run
  // needed spills (CaseResult::spill): why the verdict is unknown, the first such case's reason.
  // Then pass is false: an unknown is never a pass.
  std::optional<std::string> unknown;

  // "PASS", "FAIL" or "UNKNOWN".
  const char* verdict() const { return pass ? "PASS" : unknown ? "UNKNOWN" : "FAIL"; }
  std::string summary() const;  // a few lines: per case one line, then the verdict
  nlohmann::json to_json() const;
};

// The oracle output for one input set and the tolerance of a kernel with contract `ct`: the
// exact oracle when the problem has at most `exact_max_macs` multiply-adds, otherwise the fast
// oracle with its own bound added to the contract's. The tolerance is per element the smaller of
// two sound bounds: the a-priori one (error_bound.h; computed only when `with_apriori` or where the
// case bound leaves an element uncertified) and the case bound (case_bound.h). The contract's
// reference (`reference`) is evaluated only `with_reference`.
struct OracleReference {
  oracle::OracleOutput out;
  oracle::ErrorBound bound;     // per element the smaller of the a-priori and the case bound
  std::vector<double> apriori;  // the a-priori bound alone (empty when not computed)
  // The contract's computation in the kernel's precision; empty unless asked for.
  std::vector<double> reference;
  // [B][H][Sq]: the bound on |kernel lse - oracle lse| (the a-priori lse bound plus, with the
  // fast oracle, its own lse bound); empty unless asked for (`with_lse`).
  std::vector<double> lse_bound;
  // [B][H][Sq]: the bounds on the kernel's row max and 1 / row sum (ErrorBound::row_max,
  // recip_sum, plus with the fast oracle its own); empty unless asked for (`with_stats`).
  std::vector<double> row_max_bound, recip_sum_bound;
  bool exact = false;
};
OracleReference oracle_reference(const oracle::PrecisionContract& ct,
                                 const oracle::AttentionSpec& spec,
                                 const oracle::AttentionInputs& in, double exact_max_macs,
                                 const std::vector<oracle::PrecisionContract>& also_accept = {},
                                 bool with_apriori = false, bool with_lse = false,
                                 bool with_reference = false, bool with_stats = false);

// One input set: runs `program` on `in` (packed by v's layout) and compares its output with the
// oracle under v's contract for `options`. `spec` is v.spec(options, params), after
// v.draw_case when v has one; `draws` is what that draw_case returned (empty without one). Only
// opts.run, opts.exact_oracle_max_macs, opts.also_accept, opts.apriori, opts.determinism_runs
// and opts.fa_ratio are used. The returned case has empty distribution and seed 0.
CaseResult check_inputs(const Variant& v, const Program& program, const Options& options,
                        const ParamValues& params, const oracle::AttentionSpec& spec,
                        const oracle::AttentionInputs& in, const CaseDraws& draws,
                        const CheckOptions& opts = {});

// One input set of a check: its label (a distribution or value-recipe name), seed and values.
struct InputSet {
  std::string label;
  uint64_t seed = 0;
  oracle::AttentionInputs values;
  // The logits bias of this case, replacing the spec's (a kernel that takes one: its spec
  // carries a bias of the right shape); nullopt keeps the spec's.
  std::optional<std::vector<double>> bias;
  // The case's own problem (Variant::draw_case: positions, sinks), replacing the spec; applied
  // before `bias`. nullopt keeps the spec.
  std::optional<oracle::AttentionSpec> spec;
  // What draw_case returned with `spec` (the run-time inputs of a --layout problem), for the
  // packing of this case; empty when draw_case returned nothing or did not run.
  CaseDraws draws;
};
// Case n's input set for a spec.
using InputSource = std::function<InputSet(const oracle::AttentionSpec&, int n)>;

// The distinct contracts, for `options`, of every registered variant of v's family that offers
// those options (v's own first): the rounding placements a rewrite of v may legitimately use.
std::vector<oracle::PrecisionContract> family_contracts(const Variant& v, const Options& options);

// The order the default check draws input distributions in: those that make scale, max and
// masking bugs visible first, the hard distributions next, uniform [0, 1) last.
const std::vector<oracle::Distribution>& check_distributions();
// The order for one problem: check_distributions() with stale_cache first for a kv_cache mask
// (a decode kernel that reads stale cache entries fails on it, while the other leading
// distributions may leave such a read within the bound).
std::vector<oracle::Distribution> check_distributions(const oracle::AttentionSpec& spec);
// The order a heavy variant's few cases (heavy_check: often one) draw from: check_distributions()
// with rowmax_across_tiles first when the contract has online tiles, since an online softmax goes
// wrong where a later key tile raises the row max (a missing rescale), which the other leading
// distributions rarely do; check_distributions() otherwise.
std::vector<oracle::Distribution> heavy_check_distributions(const Variant& v, const Options& o);

// check_kernel with opts.cases input sets from `inputs` instead of the seeded hard distributions
// (`ncverify check --values` replays a property-suite case this way).
CheckResult check_kernel_with(const Variant& v, const Program& program, const Options& options,
                              const ParamValues& params, const InputSource& inputs,
                              const CheckOptions& opts = {});

// Runs `program` (normally v.build(options), or a rewrite parsed from .nkir that borrows v's
// layout, spec and contract) at `params`. Throws InputError / std::invalid_argument on bad
// params or a layout mismatch (usage errors), never for a failing kernel.
CheckResult check_kernel(const Variant& v, const Program& program, const Options& options,
                         const ParamValues& params, const CheckOptions& opts = {});

}  // namespace ncv::kernels
