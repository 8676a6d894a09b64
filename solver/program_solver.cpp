#include "solver/program_solver.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "solver/domain.h"
#include "solver/replay.h"
#include "solver/z3_context.h"

namespace ncv::solver {

ProgramSolver::ProgramSolver(const Program& p, const ProveOptions& options)
    : p_(p), opts_(options), ctx_(shared_context()), solver_(ctx_) {
  armed_ms_ = query_timeout_ms(opts_);
  z3::params prm(ctx_);
  prm.set("timeout", armed_ms_);
  if (opts_.resource_limit > 0) prm.set("rlimit", opts_.resource_limit);
  solver_.set(prm);
  params_ = declare_params(ctx_, p_);
  symbols_ = params_;
  solver_.add(param_domain(ctx_, p_, params_));
}

void ProgramSolver::enter_loops(const std::vector<const Loop*>& loops) {
  solver_.push();
  symbols_ = params_;
  loops_ = loops;
  extras_.clear();
  solver_.add(loop_iterations(ctx_, loops, symbols_));
}

void ProgramSolver::leave_loops() {
  solver_.pop();
  symbols_ = params_;
  loops_.clear();
  extras_.clear();
}

z3::expr ProgramSolver::extra(const std::string& name) {
  z3::expr v = ctx_.int_const(("$" + name + "#" + std::to_string(extras_.size())).c_str());
  extras_.emplace_back(name, v);
  // Every extra stands for an int64 the interpreter computes (a copy index, an offset).
  solver_.add(v >= ctx_.int_val(std::numeric_limits<int64_t>::min()) &&
              v <= ctx_.int_val(std::numeric_limits<int64_t>::max()));
  return v;
}

int64_t ProgramSolver::value(const z3::model& m, const z3::expr& e) const {
  return m.eval(e, true).get_numeral_int64();
}

bool ProgramSolver::out_of_budget() const {
  return past_deadline(opts_);
}

void ProgramSolver::arm_timeout() {
  // Setting a solver's parameters costs more than a typical query (done before every query, it
  // made a 5,000-instruction proof 12 times slower), so the timeout is cut only when the time
  // left falls below it, and then to half the time left: a few cuts in a proof's last seconds.
  const unsigned left = query_timeout_ms(opts_);
  if (left >= armed_ms_) return;
  armed_ms_ = std::max(1u, left / 2);
  z3::params prm(ctx_);
  prm.set("timeout", armed_ms_);
  solver_.set(prm);
}

bool ProgramSolver::unknown_for_budget() const {
  return unknown_for_budget_;
}

void ProgramSolver::note_unknown() {
  // A query that timed out with its timeout cut to the time left ran out of the budget, not of
  // --timeout-ms; any other unknown (Z3's incompleteness) keeps its own reason.
  const std::string reason = solver_.reason_unknown();
  const bool timed_out =
      reason.find("timeout") != std::string::npos || reason.find("canceled") != std::string::npos;
  unknown_for_budget_ = out_of_budget() || (armed_ms_ < opts_.timeout_ms && timed_out);
}

z3::check_result ProgramSolver::satisfiable(const z3::expr& e, std::string& why) {
  unknown_for_budget_ = out_of_budget();
  if (unknown_for_budget_) return z3::unknown;
  arm_timeout();
  solver_.push();
  solver_.add(e);
  std::string error;
  const z3::check_result r = check_or_unknown(solver_, error);
  if (r == z3::unknown) {
    note_unknown();
    why = "Z3 returned unknown (" + (error.empty() ? solver_.reason_unknown() : error) +
          ", timeout " + std::to_string(opts_.timeout_ms) + " ms)";
  }
  solver_.pop();
  return r;
}

std::vector<std::pair<z3::expr, z3::expr>> ProgramSolver::unknowns_with_lower_bounds() {
  std::vector<std::pair<z3::expr, z3::expr>> out;
  for (const Param& prm : p_.params) {
    out.emplace_back(params_.at(intern_symbol(prm.name)), ctx_.int_val(prm.lo));
  }
  out.emplace_back(params_.at(intern_symbol(kProgramIdParam)), ctx_.int_val(0));
  for (const Loop* l : loops_) out.emplace_back(symbols_.at(intern_symbol(l->var)), term(l->start));
  for (const auto& [name, v] : extras_) out.emplace_back(v, ctx_.int_val(0));
  return out;
}

z3::model ProgramSolver::smallest_model(z3::model m) {
  // Each unknown in turn (params in declaration order, then the program id, the loops outermost
  // first and the extras) is lowered to the smallest value that still violates the rule, the
  // earlier ones held fixed: binary search between its lower bound and the current model's value.
  solver_.push();
  for (const auto& [v, lower] : unknowns_with_lower_bounds()) {
    int64_t lo = value(m, lower), hi = value(m, v);
    while (lo < hi && !out_of_budget()) {         // out of time: the violating model found so far
      const int64_t mid = std::midpoint(lo, hi);  // a domain may span more than 2^63
      arm_timeout();
      solver_.push();
      solver_.add(v <= ctx_.int_val(mid));
      std::string ignored;  // an exception ends the search like unknown
      const z3::check_result r = check_or_unknown(solver_, ignored);
      if (r == z3::sat) {
        m = solver_.get_model();
        hi = value(m, v);
      }
      solver_.pop();
      if (r == z3::unsat) lo = mid + 1;
      if (r == z3::unknown) break;  // keep the violating model found so far
    }
    solver_.add(v == ctx_.int_val(value(m, v)));
  }
  solver_.pop();
  return m;
}

void ProgramSolver::settle(Obligation& o, const z3::expr& assumed, const z3::expr& holds,
                           const Explain& explain, Expectation expect) {
  if (out_of_budget()) {
    mark_out_of_budget(o);
    return;
  }
  arm_timeout();
  solver_.push();
  solver_.add(assumed && !holds);
  std::string error;
  const z3::check_result r = check_or_unknown(solver_, error);
  if (r == z3::unsat) {
    o.verdict = Verdict::proved;
  } else if (r == z3::sat) {
    o.verdict = Verdict::counterexample;
    const z3::model m = smallest_model(solver_.get_model());
    Counterexample c;
    for (const Param& prm : p_.params) {
      c.params[prm.name] = value(m, params_.at(intern_symbol(prm.name)));
    }
    // With more than one core, the core an obligation fails on is part of the counterexample
    // (the interpreter runs every core, so the replay needs no separate input for it).
    if (!p_.grid.is_const()) {
      c.loop_indices.emplace_back(std::string(kProgramIdParam),
                                  value(m, params_.at(intern_symbol(kProgramIdParam))));
    }
    for (const Loop* l : loops_) {
      c.loop_indices.emplace_back(l->var, value(m, symbols_.at(intern_symbol(l->var))));
    }
    for (const auto& [name, v] : extras_) c.loop_indices.emplace_back(name, value(m, v));
    try {
      c.violated = explain(m);
    } catch (const z3::exception&) {
      c.violated = "values beyond int64";  // the params and loop indices above still hold
    }
    o.counterexample = std::move(c);
  } else if (note_unknown(); unknown_for_budget_) {
    mark_out_of_budget(o);
  } else {
    o.verdict = Verdict::unknown;
    o.unknown_reason = "Z3 returned unknown (" +
                       (error.empty() ? solver_.reason_unknown() : error) + ", timeout " +
                       std::to_string(opts_.timeout_ms) + " ms)";
  }
  solver_.pop();
  if (o.counterexample && opts_.replay) {
    o.replay = replay_counterexample(p_, *o.counterexample, expect.kind, o.instruction,
                                     expect.data_dependent, &hw_of(opts_), expect.needs_values);
  }
}

}  // namespace ncv::solver
