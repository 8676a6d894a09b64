// The Z3 context every obligation of one Program is decided in: its params and
// their domain, the iterations of the loops around the current statement, and the decision of
// one obligation into proved / counterexample / unknown with the counterexample replayed.
#pragma once

#include <z3++.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/interp/dynamic_error.h"
#include "model/ir/program.h"
#include "solver/obligation.h"
#include "solver/z3_expr.h"
#include "solver/z3_query.h"

namespace ncv::solver {

class ProgramSolver {
 public:
  ProgramSolver(const Program& p, const ProveOptions& options);

  z3::context& ctx() { return ctx_; }
  const Program& program() const { return p_; }
  const ProveOptions& options() const { return opts_; }

  // Binds the variables of `loops` (outermost first) and constrains them to the iterations the
  // interpreter runs, until the matching leave_loops().
  void enter_loops(const std::vector<const Loop*>& loops);
  void leave_loops();

  // An Expr over params and the bound loop variables as a Z3 term.
  z3::expr term(const Expr& e) { return to_z3(ctx_, e, symbols_); }
  // The terms of the params and of the bound loop variables (to translate an Expr with some of
  // them rebound).
  const SymbolTerms& symbols() const { return symbols_; }
  // A fresh integer the obligation quantifies over too (a `bufs` copy index, ...), named in the
  // counterexample's loop indices.
  z3::expr extra(const std::string& name);

  // What the interpreter raises when the rule fails, and whether that depends on run-time values
  // (then a replay that raises nothing is not a disagreement).
  struct Expectation {
    CheckKind kind = CheckKind::out_of_bounds;
    bool data_dependent = false;
    // The interpreter raises it only in a run that computes values (the shadow checks of
    // uninitialized reads), not in a trace-only run.
    bool needs_values = false;
  };
  using Explain = std::function<std::string(const z3::model&)>;

  // Decides `assumed => holds` for every param in the domain and every bound loop iteration and
  // extra: sets o's verdict, its counterexample (the smallest one, see smallest_model; with
  // `explain`'s text of the violated inequality) and replays the counterexample on the interpreter.
  void settle(Obligation& o, const z3::expr& assumed, const z3::expr& holds, const Explain& explain,
              Expectation expect);

  int64_t value(const z3::model& m, const z3::expr& e) const;

  // Whether `e` holds for some param in the domain, bound loop iteration and extra (sat), for
  // none (unsat), or Z3 cannot tell (unknown, with the reason in `why`; after the deadline,
  // unknown without asking: see unknown_for_budget).
  z3::check_result satisfiable(const z3::expr& e, std::string& why);

  // Whether ProveOptions::deadline has passed: settle() then marks every obligation
  // out_of_budget, and a caller with costly terms to build should skip building them.
  bool out_of_budget() const;
  // Whether the unknown satisfiable() just answered is the budget's doing: the deadline passed,
  // or the query timed out at the budget's deadline (which came before its own timeout).
  bool unknown_for_budget() const;

 private:
  // Each unknown of the current obligation with its least value (loop start, 0 for extras).
  std::vector<std::pair<z3::expr, z3::expr>> unknowns_with_lower_bounds();
  // A counterexample at the boundary: the model with each unknown lowered in turn to the least
  // value that still violates the rule (the smallest failing params, then the first failing
  // iteration), so a widened domain fails exactly where it stops fitting.
  z3::model smallest_model(z3::model m);
  // Checks the solver's assertions until query_deadline(options).
  QueryResult query();
  // After an unknown answer of query(): sets unknown_for_budget_.
  void note_unknown(const QueryResult& r);
  // "Z3 returned unknown (why, timeout N ms)".
  std::string unknown_reason(const QueryResult& r) const;

  const Program& p_;
  ProveOptions opts_;
  z3::context& ctx_;  // shared_context(): see z3_context.h
  z3::solver solver_;
  SymbolTerms params_, symbols_;
  std::vector<const Loop*> loops_;
  std::vector<std::pair<std::string, z3::expr>> extras_;
  std::chrono::steady_clock::time_point deadline_;  // of the last query
  bool unknown_for_budget_ = false;
};

}  // namespace ncv::solver
