// `ncverify adopt ORIGINAL REWRITE [--param NAME=VALUE ...] [--require bit-exact|real|contract]
// [--gen trn1|trn2|trn3|all] [--cases N] [--seed N] [--timeout-ms N] [--like KERNEL] [--json]`:
// the one gate an optimizer loop (an Autocomp-like search) asks before it adopts a rewrite. It
// runs, in order:
//  (a) check: the rewrite against the oracle under its precision contract, at every shape
//      `equiv` checks for each option combination of the original (equiv::checked_shapes) plus
//      one mid-size shape when it is cheap, with --cases input sets each (more than `check`'s
//      default: the hard distributions come round more often);
//  (b) prove: every solver obligation of the rewrite over its whole param domain (its option
//      programs that agree with the pinned options), on each --gen generation;
//  (c) equiv: the rewrite against the original at the required level (equiv/equiv.h);
//  (d) latency: both kernels on the timing model at the same shapes, per generation, and the
//      change in %.
// One verdict: adopt (check passes, every obligation proved, equiv holds), reject (a failed check
// case, a refuted obligation or a refuted equivalence, each with the line that replays it) or
// unknown (something neither proved nor refuted: never a pass). A latency regression is
// reported but does not reject by itself: whether it is worth it is the optimizer's decision.
// Exit 0 adopt, 1 reject or unknown, 2 bad usage or input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "check/check.h"
#include "check/replay.h"
#include "equiv/equiv.h"
#include "equiv/shapes.h"
#include "kernels/option_programs.h"
#include "model/timing/cost_table.h"
#include "model/timing/timing.h"
#include "oracle/attention_spec.h"
#include "solver/prove.h"
#include "tools/commands.h"
#include "tools/equiv_sides.h"
#include "tools/generations.h"
#include "tools/job_pool.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

// A mid-size shape is added to the checked ones only when one run of it stays below this many
// instruction instances (sd_attention at seqlen 512, d_head 64 is a few thousand): the gate runs
// in an optimizer's inner loop, so it must stay seconds, not minutes.
constexpr int64_t kMidShapeMaxInstances = 200'000;
// Obligations not proved listed in full (all are counted).
constexpr size_t kMaxListedObligations = 20;

const char* const kLatencyNote =
    "a latency regression is reported, not a reason to reject: the optimizer decides";

struct AdoptCommandOptions {
  EquivFlags sides;
  std::string gen;  // "": trn1, or the first generation both kernels run on
  int cases = 6;
  uint64_t seed = 1;
  unsigned timeout_ms = 10'000;
  bool json = false;
  RunLimits limits;
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

nlohmann::json finite_or_text(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(v > 0 ? "inf" : "-inf");
}

// The options of `v` among `o` (the original's combination), defaults filled in.
kernels::Options options_for(const kernels::Variant& v, const kernels::Options& o) {
  kernels::Options mine;
  for (const kernels::OptionSpec& spec : v.options) {
    auto it = o.find(spec.name);
    if (it != o.end()) mine[spec.name] = it->second;
  }
  try {
    return v.resolve(mine);
  } catch (const std::invalid_argument& e) {
    throw UsageError(v.name + ": " + e.what());
  }
}

// A realistic shape between the smallest checked ones and the calibration shape: seqlen 512,
// d_head 64, every other param at its least value (pinned params keep their value), each
// aligned to its step. None when it is outside the domain, already checked or not cheap.
std::optional<ParamValues> mid_shape(const Program& p, const ParamValues& pinned,
                                     const std::vector<ParamValues>& checked, int64_t max_steps) {
  ParamValues x;
  for (const Param& q : p.params) {
    if (auto it = pinned.find(q.name); it != pinned.end()) {
      x[q.name] = it->second;
      continue;
    }
    int64_t want = q.name.find("seqlen") != std::string::npos ? 512
                   : q.name == "d_head"                       ? 64
                                                              : q.lo;
    want = std::clamp(want, q.lo, q.hi);
    const int64_t m = std::max<int64_t>(1, q.multiple_of);
    x[q.name] = std::max((q.lo + m - 1) / m * m, want / m * m);
  }
  if (!equiv::in_domain(p, x) || std::find(checked.begin(), checked.end(), x) != checked.end()) {
    return std::nullopt;
  }
  try {
    if (count_steps(p, x, max_steps).instances > kMidShapeMaxInstances) return std::nullopt;
  } catch (const InputError&) {
    return std::nullopt;  // over --max-steps: certainly not cheap
  }
  return x;
}

// One option combination of the original and the shapes the gate runs there.
struct Plan {
  kernels::Options options;          // the original's (complete)
  kernels::Options rewrite_options;  // the rewrite's, for its contract and spec
  Program original, rewrite;
  std::vector<ParamValues> shapes;  // equiv's checked shapes, then the mid-size one if any
  size_t checked = 0;               // how many of `shapes` equiv checks
};

struct CheckRun {
  const Plan* plan = nullptr;
  ParamValues params;
  bool mid_size = false;
  std::optional<kernels::CheckResult> result;
  std::string refusal;  // the rewrite does not accept a shape of the original's domain
  std::string failure, replay;
  bool pass() const { return refusal.empty() && result && result->pass; }
  // No case failed, but a run needed spills the model does not make or reached an undefined
  // result (CheckResult::unknown).
  bool unknown() const { return refusal.empty() && result && result->unknown.has_value(); }
  const char* verdict() const { return pass() ? "pass" : unknown() ? "unknown" : "fail"; }
};

struct ProveTally {
  int proved = 0, refuted = 0, unknown = 0, programs = 0;
  std::vector<std::string> refutations, unknowns;  // describe() of each
  int total() const { return proved + refuted + unknown; }
};

struct LatencyRow {
  std::string gen;
  const Plan* plan = nullptr;
  ParamValues params;
  std::optional<double> original_ns, rewrite_ns;
  std::string error;
};

struct Gate {
  const AdoptCommandOptions& opts;
  equiv::EquivRequest req;
  std::vector<const HwConfig*> gens;
  std::vector<SkippedGeneration> skipped_gens;  // --gen all: where a kernel does not run
  const kernels::Variant* rewrite_variant = nullptr;
  std::vector<Plan> plans;
  std::vector<CheckRun> checks;
  ProveTally prove;
  std::optional<equiv::EquivResult> equiv;
  std::vector<LatencyRow> latency;
  std::vector<std::string> reject_reasons, unknown_reasons;
};

// What the rewrite's check was given, as `ncverify check` takes it (check/replay.h): its
// failing case replays with the same options, shape, generation, determinism runs and limits.
kernels::CheckInvocation check_invocation(const Gate& g, const kernels::CheckOptions& co) {
  kernels::CheckInvocation inv;
  inv.target = g.req.rewrite.label;
  inv.like = g.req.rewrite.registered() ? "" : g.opts.sides.like;
  inv.assignments = g.opts.sides.params;
  inv.rebuilds = g.req.rewrite.registered();
  inv.inputs = g.opts.sides.nki.inputs;
  inv.shapes = g.opts.sides.nki.shapes;
  inv.grid = g.opts.sides.nki.grid;
  inv.gen = g.gens.front()->name;
  inv.determinism_runs = co.determinism_runs;
  inv.default_determinism_runs = g.rewrite_variant->determinism_runs;
  const RunLimits defaults;
  if (g.opts.limits.memory_budget_mib != defaults.memory_budget_mib) {
    inv.memory_budget_mib = g.opts.limits.memory_budget_mib;
  }
  if (g.opts.limits.max_steps != defaults.max_steps) inv.max_steps = g.opts.limits.max_steps;
  return inv;
}

void make_plans(Gate& g) {
  const equiv::EquivRequest& req = g.req;
  const kernels::Variant* ov = req.original.registered() ? req.original.variant : nullptr;
  std::vector<kernels::Options> combos;
  try {
    combos = equiv::option_combinations(ov, req.options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--param: ") + e.what());
  }
  for (const kernels::Options& o : combos) {
    Plan p;
    p.options = o;
    try {
      p.original = req.original.build(o);
      p.rewrite = req.rewrite.build(o);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (g.plans.empty()) check_param_names(p.original, req.params, req.original.label);
    p.rewrite_options = options_for(*g.rewrite_variant, o);
    try {
      p.shapes = equiv::checked_shapes(p.original, req.params);
    } catch (const InputError& e) {
      throw UsageError(req.original.label + ": " + e.message);
    }
    p.checked = p.shapes.size();
    if (auto mid = mid_shape(p.original, req.params, p.shapes, g.opts.limits.max_steps)) {
      p.shapes.push_back(*mid);
    }
    g.plans.push_back(std::move(p));
  }
}

// (a) check of the rewrite against the oracle at every planned shape: each shape a job on
// `pool` (they are independent), their results taken in plan order.
void run_checks(Gate& g, JobPool& pool, Progress& progress, int64_t& done) {
  kernels::CheckOptions co;
  co.cases = g.opts.cases;
  co.seed = g.opts.seed;
  co.run.hw = g.gens.front();
  g.opts.limits.apply(co.run);
  co.run.record_trace = false;
  std::vector<CheckRun> runs;
  for (const Plan& p : g.plans) {
    for (size_t s = 0; s < p.shapes.size(); ++s) {
      CheckRun c;
      c.plan = &p;
      c.params = p.shapes[s];
      c.mid_size = s >= p.checked;
      try {
        check_params(p.rewrite, c.params);
      } catch (const InputError& e) {
        // A shape of the original's domain the rewrite refuses: it cannot replace the original.
        c.refusal = e.message;
        c.failure = "the rewrite refuses " + format_params(c.params) + " (" +
                    equiv::options_text(p.options) +
                    "), inside the original's domain: " + e.message;
      }
      runs.push_back(std::move(c));
    }
  }
  std::vector<size_t> jobs(runs.size(), SIZE_MAX);
  for (size_t k = 0; k < runs.size(); ++k) {
    if (!runs[k].refusal.empty()) continue;
    jobs[k] = pool.add([&g, &c = runs[k], co]() mutable {
      const Plan& p = *c.plan;
      // A file or NKI kernel checked --like a registered kernel may round where any member of
      // that kernel's family rounds, as `check FILE --like K` allows (the a-priori bound still
      // applies to all).
      co.also_accept = g.req.rewrite.registered()
                           ? std::vector<oracle::PrecisionContract>{}
                           : kernels::family_contracts(*g.rewrite_variant, p.rewrite_options);
      try {
        c.result =
            kernels::check_kernel(*g.rewrite_variant, p.rewrite, p.rewrite_options, c.params, co);
      } catch (const InputError& e) {
        throw UsageError(g.req.rewrite.label + ": " + e.message);
      } catch (const std::invalid_argument& e) {
        throw UsageError(g.req.rewrite.label + ": " + e.what());
      } catch (const oracle::SpecError& e) {
        throw UsageError(g.req.rewrite.label + " " + format_params(c.params) +
                         ": its attention spec: " + e.message);
      }
    });
  }
  for (size_t k = 0; k < runs.size(); ++k) {
    CheckRun& c = runs[k];
    if (jobs[k] != SIZE_MAX) {
      pool.wait(jobs[k]);
      for (size_t n = 0; n < c.result->cases.size() && c.failure.empty(); ++n) {
        const kernels::CaseResult& cr = c.result->cases[n];
        if (!cr.failed()) continue;  // an unknown case is the result's unknown, no failure
        c.failure =
            "check of " + g.req.rewrite.label + " fails at " + format_params(c.params) + " (" +
            equiv::options_text(c.plan->rewrite_options) +
            "), case seed=" + std::to_string(cr.seed) + " " + cr.distribution + ": " +
            (cr.run_error ? "model error: " + cr.run_error->message : cr.comparison.one_line());
        c.replay = kernels::check_replay_line(check_invocation(g, co), c.plan->rewrite_options,
                                              c.params, cr);
      }
    }
    progress.update(++done, "check " + format_params(c.params));
    g.checks.push_back(std::move(c));
  }
}

// (b) every obligation of the rewrite's programs on every generation.
void run_proofs(Gate& g, const std::vector<kernels::LabelledProgram>& programs, Progress& progress,
                int64_t& done) {
  for (const HwConfig* hw : g.gens) {
    solver::ProveOptions po;
    po.timeout_ms = g.opts.timeout_ms;
    po.hw = hw;
    for (const kernels::LabelledProgram& lp : programs) {
      std::vector<solver::Obligation> obligations;
      try {
        obligations = solver::prove_program(lp.program, po);
      } catch (const std::invalid_argument& e) {
        throw UsageError(lp.label + ": " + e.what());
      }
      ++g.prove.programs;
      for (const solver::Obligation& o : obligations) {
        if (o.verdict == solver::Verdict::proved) {
          ++g.prove.proved;
        } else if (o.verdict == solver::Verdict::counterexample && !o.spillable) {
          ++g.prove.refuted;
          g.prove.refutations.push_back(lp.label + " on " + hw->name + ": " + o.describe());
        } else {
          ++g.prove.unknown;
          g.prove.unknowns.push_back(lp.label + " on " + hw->name + ": " + o.describe());
        }
      }
      progress.update(++done, "prove " + lp.label + " on " + hw->name);
    }
  }
}

// The rewrite's programs for prove: its option programs that agree with the pinned options, or
// the one fixed program.
std::vector<kernels::LabelledProgram> rewrite_programs(const Gate& g) {
  const equiv::EquivSide& r = g.req.rewrite;
  if (!r.registered()) return {{r.label, {}, *r.fixed}};
  kernels::Options fixed;
  for (const auto& [k, v] : g.req.options) {
    if (std::any_of(r.variant->options.begin(), r.variant->options.end(),
                    [&](const kernels::OptionSpec& o) { return o.name == k; })) {
      fixed[k] = v;
    }
  }
  try {
    return kernels::option_programs(*r.variant, fixed);
  } catch (const std::invalid_argument& e) {
    throw UsageError(r.label + ": " + e.what());
  }
}

// The makespan of a trace-only run on the timing model (as `bench`), or the dynamic check that
// stopped the run.
std::optional<double> latency_ns(const Program& p, const ParamValues& params, const HwConfig& hw,
                                 const CostTable& costs, const RunLimits& limits,
                                 std::string& error) {
  RunOptions ro;
  ro.hw = &hw;
  ro.compute_values = false;
  limits.apply(ro);
  RunResult r;
  try {
    r = run_program(p, params, {}, ro);
  } catch (const InputError& e) {
    error = e.message;
    return std::nullopt;
  }
  if (r.error) {
    error = r.error->message;
    return std::nullopt;
  }
  return schedule_trace(p, r.trace, costs).makespan_ns;
}

// (d) both kernels' latency per generation at every planned shape.
void run_latency(Gate& g, Progress& progress, int64_t& done) {
  for (const HwConfig* hw : g.gens) {
    const CostTable* costs = find_cost_table(hw->name);
    for (const Plan& p : g.plans) {
      for (const ParamValues& params : p.shapes) {
        LatencyRow row;
        row.gen = hw->name;
        row.plan = &p;
        row.params = params;
        if (costs == nullptr) {
          row.error = "no cost table for " + hw->name;
        } else {
          std::string eo, er;
          row.original_ns = latency_ns(p.original, params, *hw, *costs, g.opts.limits, eo);
          if (equiv::in_domain(p.rewrite, params)) {
            row.rewrite_ns = latency_ns(p.rewrite, params, *hw, *costs, g.opts.limits, er);
          } else {
            er = "outside the rewrite's domain";
          }
          if (!eo.empty()) row.error = "original: " + eo;
          if (!er.empty()) row.error += (row.error.empty() ? "" : "; ") + ("rewrite: " + er);
        }
        g.latency.push_back(std::move(row));
        progress.update(++done, "latency " + format_params(params) + " on " + hw->name);
      }
    }
  }
}

std::string counterexample_line(const equiv::Counterexample& c) {
  std::ostringstream s;
  s << format_params(c.params) << ", inputs " << c.inputs << " seed " << c.seed << ": ";
  if (c.output == "(run)") {
    s << "the rewrite fails: " << c.rewrite_at;
    return s.str();
  }
  s << c.output << "[";
  for (size_t i = 0; i < c.index.size(); ++i) s << (i ? "," : "") << c.index[i];
  s << "] original " << num(c.original_value) << " vs rewrite " << num(c.rewrite_value);
  if (c.bound > 0) {
    s << ", bound " << num(c.bound);
  } else if (!c.original_at.empty() || !c.rewrite_at.empty()) {
    s << "; values part at original " << c.original_at << " / rewrite " << c.rewrite_at;
  }
  return s.str();
}

// Why the overflow obligation does not hold, where real equivalence is what holds: an exp left
// without a max subtracted, or no look at all (the terms outgrew the budget).
std::string overflow_note(const equiv::OptionOutcome& o) {
  if (o.overflow_ok || o.bit_exact == equiv::Verdict::proved) return "";
  const bool open = std::any_of(o.overflow.begin(), o.overflow.end(),
                                [](const equiv::ExpObligation& e) { return !e.discharged; });
  if (open) return " (exp overflow not discharged)";
  return o.overflow.empty() ? " (exp overflow not checked: the terms were not built)"
                            : " (exp overflow not checked at every shape: the terms outgrew the "
                              "budget at one)";
}

// What `equiv` reached for one option set, in the gate's words.
std::string outcome_line(const equiv::OptionOutcome& o, equiv::Level required) {
  std::string s = equiv::options_text(o.options) + ": ";
  if (!o.interface_error.empty()) return s + "interface fails: " + o.interface_error;
  if (!o.run_error.empty()) return s + "the rewrite fails where the original runs: " + o.run_error;
  if (!o.undefined_result.empty()) return s + "every level unknown: " + o.undefined_result;
  s += std::string("bit-exact ") + equiv::verdict_name(o.bit_exact) + ", real " +
       equiv::verdict_name(o.real) + overflow_note(o) + ", numeric " +
       equiv::numeric_verdict_name(o.numeric) + " (max diff/bound " + num(o.max_normalized) + ")";
  return s + "  [" + o.status(required) + "]";
}

void decide(Gate& g) {
  for (const CheckRun& c : g.checks) {
    if (c.pass()) continue;
    if (c.unknown()) {
      g.unknown_reasons.push_back("check of " + g.req.rewrite.label + " at " +
                                  format_params(c.params) + ": " + *c.result->unknown);
      continue;
    }
    std::string r = c.failure.empty()
                        ? "check of " + g.req.rewrite.label + " fails at " + format_params(c.params)
                        : c.failure;
    if (!c.replay.empty()) r += "; replay: " + c.replay;
    g.reject_reasons.push_back(r);
  }
  for (const std::string& d : g.prove.refutations) {
    g.reject_reasons.push_back("proof refuted: " + d);
  }
  for (const std::string& d : g.prove.unknowns) {
    g.unknown_reasons.push_back("obligation not proved (an unknown is not a pass): " + d);
  }
  const equiv::EquivResult& e = *g.equiv;
  for (const equiv::OptionOutcome& o : e.outcomes) {
    if (o.holds(e.required)) continue;
    const char* level = equiv::level_name(e.required);
    std::optional<equiv::Counterexample> ce;
    if (e.required == equiv::Level::bit_exact) {
      ce = o.bit_counterexample;
    } else if (o.numeric_counterexample) {
      ce = o.numeric_counterexample;
    }
    const bool refuted = o.status(e.required) == "refuted";
    std::string r = std::string("equiv ") + (refuted ? "refuted" : "unknown") + " (require " +
                    level + ") at " + outcome_line(o, e.required);
    if (ce) {
      r += "; counterexample " + counterexample_line(*ce) + "; replay: " +
           equiv_replay_line(g.opts.sides, g.req, o, *ce, e.required, g.opts.seed,
                             g.gens.front()->name);
    } else if (!refuted) {
      r += "; " + o.unknown_reason(e.required);
    }
    (refuted ? g.reject_reasons : g.unknown_reasons).push_back(r);
  }
}

std::string verdict_of(const Gate& g) {
  return !g.reject_reasons.empty() ? "reject" : !g.unknown_reasons.empty() ? "unknown" : "adopt";
}

double worst_normalized(const Gate& g) {
  double w = 0;
  for (const CheckRun& c : g.checks) {
    w = std::fmax(w, c.result ? c.result->worst_normalized : INFINITY);
  }
  return w;
}

std::optional<double> change_pct(const LatencyRow& r) {
  if (!r.original_ns || !r.rewrite_ns || *r.original_ns <= 0) return std::nullopt;
  return (*r.rewrite_ns - *r.original_ns) / *r.original_ns * 100.0;
}

nlohmann::json gate_json(const Gate& g) {
  const std::string verdict = verdict_of(g);
  nlohmann::json runs = nlohmann::json::array();
  bool check_pass = true;
  for (const CheckRun& c : g.checks) {
    check_pass = check_pass && c.pass();
    nlohmann::json j{{"options", c.plan->rewrite_options},
                     {"shape", c.params},
                     {"mid_size", c.mid_size},
                     {"pass", c.pass()},
                     {"verdict", c.verdict()}};
    if (c.result) {
      j["worst_normalized"] = finite_or_text(c.result->worst_normalized);
      j["cases"] = c.result->cases.size();
      j["contract"] = c.result->contract.name;
    }
    if (!c.failure.empty()) j["failure"] = c.failure;
    if (!c.replay.empty()) j["replay"] = c.replay;
    runs.push_back(std::move(j));
  }
  nlohmann::json gens = nlohmann::json::array();
  for (const HwConfig* hw : g.gens) gens.push_back(hw->name);
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedGeneration& s : g.skipped_gens) {
    skipped.push_back({{"gen", s.gen}, {"reason", s.reason}});
  }
  nlohmann::json not_proved = nlohmann::json::array();
  for (const auto* list : {&g.prove.refutations, &g.prove.unknowns}) {
    for (const std::string& d : *list) {
      if (not_proved.size() < kMaxListedObligations) not_proved.push_back(d);
    }
  }
  nlohmann::json latency = nlohmann::json::array();
  for (const LatencyRow& r : g.latency) {
    nlohmann::json j{{"gen", r.gen}, {"options", r.plan->options}, {"shape", r.params}};
    j["original_ns"] = r.original_ns ? nlohmann::json(*r.original_ns) : nlohmann::json();
    j["rewrite_ns"] = r.rewrite_ns ? nlohmann::json(*r.rewrite_ns) : nlohmann::json();
    const std::optional<double> c = change_pct(r);
    j["change_pct"] = c ? nlohmann::json(*c) : nlohmann::json();
    if (!r.error.empty()) j["error"] = r.error;
    latency.push_back(std::move(j));
  }
  std::vector<std::string> reasons = g.reject_reasons;
  reasons.insert(reasons.end(), g.unknown_reasons.begin(), g.unknown_reasons.end());
  return {{"original", g.req.original.label},
          {"rewrite", g.req.rewrite.label},
          {"verdict", verdict},
          {"reason", reasons.empty() ? "" : reasons.front()},
          {"reasons", reasons},
          {"exit", verdict == "adopt" ? kExitOk : kExitVerificationFailure},
          {"check",
           {{"pass", check_pass},
            {"gen", g.gens.front()->name},
            {"cases", g.opts.cases},
            {"seed", g.opts.seed},
            {"worst_normalized", finite_or_text(worst_normalized(g))},
            {"runs", runs}}},
          {"prove",
           {{"proved", g.prove.proved},
            {"total", g.prove.total()},
            {"unknown", g.prove.unknown},
            {"refuted", g.prove.refuted},
            {"programs", g.prove.programs},
            {"gens", gens},
            {"skipped", skipped},
            {"not_proved", not_proved}}},
          {"equiv", g.equiv->to_json()},
          {"latency", latency},
          {"latency_note", kLatencyNote}};
}

void print_text(const Gate& g) {
  const std::string verdict = verdict_of(g);
  const std::string value_gen = g.gens.front()->name;
  std::string gen_names;
  for (const HwConfig* hw : g.gens) gen_names += (gen_names.empty() ? "" : ",") + hw->name;
  std::cout << "adopt " << g.req.original.label << " -> " << g.req.rewrite.label << "   (require "
            << equiv::level_name(g.equiv->required) << "; check and equiv on " << value_gen
            << ", prove and latency on " << gen_names << ")\n";
  for (const SkippedGeneration& s : g.skipped_gens) {
    std::cout << skip_line(g.req.rewrite.label, s) << "\n";
  }
  // (a)
  size_t shapes = 0, failing = 0, unknown = 0;
  for (const CheckRun& c : g.checks) {
    ++shapes;
    failing += c.pass() || c.unknown() ? 0 : 1;
    unknown += c.unknown() ? 1 : 0;
  }
  std::cout << "\ncheck   "
            << (failing > 0   ? "FAIL"
                : unknown > 0 ? "UNKNOWN"
                              : "PASS")
            << "  " << shapes << " run(s) (" << g.plans.size() << " option set(s) x their shapes), "
            << g.opts.cases << " cases each; worst normalized error " << num(worst_normalized(g))
            << "\n";
  for (const CheckRun& c : g.checks) {
    std::cout << "  "
              << (c.pass()      ? "pass "
                  : c.unknown() ? "unkn "
                                : "FAIL ")
              << equiv::options_text(c.plan->rewrite_options) << "  " << format_params(c.params)
              << (c.mid_size ? " (mid-size)" : "") << "  worst "
              << (c.result ? num(c.result->worst_normalized) : std::string("-")) << "\n";
  }
  // (b)
  std::cout << "\nprove   " << (g.prove.refuted + g.prove.unknown == 0 ? "PROVED" : "NOT PROVED")
            << "  " << g.prove.proved << "/" << g.prove.total() << " obligations proved, "
            << g.prove.refuted << " refuted, " << g.prove.unknown << " unknown ("
            << g.prove.programs << " program(s) x generation)\n";
  // (c)
  std::cout << "\nequiv   " << g.equiv->verdict << "  (require "
            << equiv::level_name(g.equiv->required) << ")\n";
  for (const equiv::OptionOutcome& o : g.equiv->outcomes) {
    std::cout << "  " << outcome_line(o, g.equiv->required) << "\n";
  }
  // (d)
  std::cout << "\nlatency (timing model; " << kLatencyNote << ")\n";
  char line[320];
  std::snprintf(line, sizeof line, "  %-5s %-54s %-24s %13s %13s %9s", "gen", "options", "shape",
                "original_us", "rewrite_us", "change");
  std::cout << line << "\n";
  for (const LatencyRow& r : g.latency) {
    const std::optional<double> c = change_pct(r);
    std::snprintf(line, sizeof line, "  %-5s %-54s %-24s %13s %13s %9s", r.gen.c_str(),
                  equiv::options_text(r.plan->options).c_str(), format_params(r.params).c_str(),
                  r.original_ns ? num(*r.original_ns / 1000).c_str() : "-",
                  r.rewrite_ns ? num(*r.rewrite_ns / 1000).c_str() : "-",
                  c ? pct(*c).c_str() : "-");
    std::cout << line << (r.error.empty() ? "" : "  (" + r.error + ")") << "\n";
  }
  std::cout << "\n";
  for (const std::string& r : g.reject_reasons) std::cout << "reason: " << r << "\n";
  for (const std::string& r : g.unknown_reasons) std::cout << "reason: " << r << "\n";
  std::cout << "verdict: " << verdict << "\n";
}

// A kernel file that reached past the NKI language (TamperError) or whose tracing exceeded a
// limit (TraceLimitError) cannot be adopted, whatever its program would have been: the verdict is
// reject, with reason `kind` (tamper, trace-limit), and nothing else runs.
int report_untraceable(const AdoptCommandOptions& opts, const std::string& kind,
                       const std::string& detail) {
  const std::string reason = kind + ": " + detail;
  if (opts.json) {
    const nlohmann::json j{{"original", opts.sides.original},
                           {"rewrite", opts.sides.rewrite},
                           {"verdict", "reject"},
                           {"reason", reason},
                           {"reasons", {reason}},
                           {"reason_kind", kind},
                           {"exit", kExitVerificationFailure}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "adopt " << opts.sides.original << " -> " << opts.sides.rewrite << "\n\n"
              << "reason: " << reason << "\nverdict: reject\n";
  }
  return kExitVerificationFailure;
}

int run_adopt(const AdoptCommandOptions& opts) {
  equiv::EquivRequest request;
  try {
    request = opts.sides.request();
  } catch (const TamperError& e) {
    return report_untraceable(opts, "tamper", e.message);
  } catch (const TraceLimitError& e) {
    return report_untraceable(opts, "trace-limit", e.message);
  }
  Gate g{opts, std::move(request)};
  g.rewrite_variant = g.req.rewrite.variant;
  if (g.rewrite_variant == nullptr) {
    throw UsageError(opts.sides.rewrite +
                     ": a .nkir file or an NKI kernel needs --like KERNEL (the layout, spec and "
                     "contract its check runs under)");
  }
  GenerationPlan plan = generations_for({g.req.original.variant, g.rewrite_variant}, opts.gen, "");
  g.gens = std::move(plan.run);
  g.skipped_gens = std::move(plan.skipped);
  g.req.cases = opts.cases;
  g.req.seed = opts.seed;
  g.req.run.hw = g.gens.front();
  opts.limits.apply(g.req.run);
  make_plans(g);
  const std::vector<kernels::LabelledProgram> programs = rewrite_programs(g);

  int64_t total = 1, done = 0;  // the equiv step
  for (const Plan& p : g.plans) {
    total += static_cast<int64_t>(p.shapes.size() * (1 + g.gens.size()));
  }
  total += static_cast<int64_t>(programs.size() * g.gens.size());
  Progress progress("adopt", "steps", total);
  // The equivalence (its option sets on threads of its own) and the checks run at once: at
  // attn_fwd's seqlen 4096 each is a score of seconds of interpreter and oracle work.
  JobPool pool(0);
  const size_t equiv_job = pool.add([&g] { g.equiv = run_equiv_or_usage(g.req); }, 1);
  run_checks(g, pool, progress, done);
  run_proofs(g, programs, progress, done);
  progress.start("equiv");
  pool.wait(equiv_job);
  progress.update(++done, "equiv");
  run_latency(g, progress, done);
  decide(g);
  if (opts.json) {
    std::cout << gate_json(g).dump(2) << "\n";
  } else {
    print_text(g);
  }
  return verdict_of(g) == "adopt" ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_adopt(CLI::App& app, Action& action) {
  auto opts = std::make_shared<AdoptCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "adopt",
      "One adoption gate for an optimizer loop: check, prove and equiv of a rewrite, and its "
      "latency against the original; verdict adopt, reject or unknown");
  opts->sides.add_options(cmd);
  cmd->add_option("--gen", opts->gen,
                  "Generation(s) of prove and latency: trn1, trn2, trn3 or all (those both kernels "
                  "run on; check and equiv run on the first); default trn1, or the first both "
                  "run on");
  cmd->add_option("--cases", opts->cases,
                  "Seeded input sets per shape for check (cycling the hard distributions) and "
                  "equiv")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  add_seed_option(cmd, opts->seed, "Seed of the first input set");
  cmd->add_option("--timeout-ms", opts->timeout_ms,
                  "Z3 time limit per obligation; beyond it the obligation is unknown (no adopt)")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  opts->limits.add_options(cmd);
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->callback([opts, &action] { action = [opts] { return run_adopt(*opts); }; });
}

}  // namespace ncv::cli
