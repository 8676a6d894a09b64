#include "solver/program_solver.h"

#include <limits>
#include <numeric>

#include "solver/domain.h"
#include "solver/replay.h"
#include "solver/z3_context.h"

namespace ncv::solver {

ProgramSolver::ProgramSolver(const Program& p, const ProveOptions& options)
    : p_(p), opts_(options), ctx_(shared_context()), solver_(ctx_) {
  // No `timeout` parameter: every check goes through query() (solver/z3_query.h says why).
  if (opts_.resource_limit > 0) {
    z3::params prm(ctx_);
    prm.set("rlimit", opts_.resource_limit);
    solver_.set(prm);
  }
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

bool ProgramSolver::unknown_for_budget() const {
  return unknown_for_budget_;
}

QueryResult ProgramSolver::query() {
  // Every query is preceded by a push (enter_loops, settle, satisfiable, smallest_model), so Z3
  // answers it with its incremental solver, never with a logic's tactic.
  deadline_ = query_deadline(opts_);
  return check_until(solver_, deadline_);
}

void ProgramSolver::note_unknown(const QueryResult& r) {
  // A query that timed out at the budget's deadline ran out of the budget, not of --timeout-ms;
  // any other unknown (Z3's incompleteness) keeps its own reason.
  unknown_for_budget_ = out_of_budget() || (r.timed_out && budget_bounds_query(opts_, deadline_));
}

std::string ProgramSolver::unknown_reason(const QueryResult& r) const {
  return "Z3 returned unknown (" + r.why + ", timeout " + std::to_string(opts_.timeout_ms) + " ms)";
}

z3::check_result ProgramSolver::satisfiable(const z3::expr& e, std::string& why) {
  unknown_for_budget_ = out_of_budget();
  if (unknown_for_budget_) return z3::unknown;
  solver_.push();
  solver_.add(e);
  const QueryResult r = query();
  if (r.result == z3::unknown) {
    note_unknown(r);
    why = unknown_reason(r);
  }
  solver_.pop();
  return r.result;
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
      solver_.push();
      solver_.add(v <= ctx_.int_val(mid));
      const z3::check_result r = query().result;  // unknown (or a Z3 error) ends the search
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
  solver_.push();
  solver_.add(assumed && !holds);
  const QueryResult q = query();
  const z3::check_result r = q.result;
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
  } else if (note_unknown(q); unknown_for_budget_) {
    mark_out_of_budget(o);
  } else {
    o.verdict = Verdict::unknown;
    o.unknown_reason = unknown_reason(q);
  }
  solver_.pop();
  if (o.counterexample && opts_.replay) {
    o.replay = replay_counterexample(p_, *o.counterexample, expect.kind, o.instruction,
                                     expect.data_dependent, &hw_of(opts_), expect.needs_values);
  }
}

}  // namespace ncv::solver
