// The Z3 context every obligation of one Program is decided in (DESIGN.md §8): its params and
// their domain, the iterations of the loops around the current statement, and the decision of
// one obligation into proved / counterexample / unknown with the counterexample replayed.
#pragma once

#include <z3++.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/dynamic_error.h"
#include "model/program.h"
#include "solver/obligation.h"
#include "solver/z3_expr.h"

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
  // A fresh integer the obligation quantifies over too (a `bufs` copy index, ...), named in the
  // counterexample's loop indices.
  z3::expr extra(const std::string& name);

  // What the interpreter raises when the rule fails, and whether that depends on run-time values
  // (then a replay that raises nothing is not a disagreement).
  struct Expectation {
    CheckKind kind = CheckKind::out_of_bounds;
    bool data_dependent = false;
  };
  using Explain = std::function<std::string(const z3::model&)>;

  // Decides `assumed => holds` for every param in the domain and every bound loop iteration and
  // extra: sets o's verdict, its counterexample (with `explain`'s text of the violated
  // inequality) and replays the counterexample on the interpreter.
  void settle(Obligation& o, const z3::expr& assumed, const z3::expr& holds, const Explain& explain,
              Expectation expect);

  int64_t value(const z3::model& m, const z3::expr& e) const;

 private:
  const Program& p_;
  ProveOptions opts_;
  z3::context ctx_;
  z3::solver solver_;
  SymbolTerms params_, symbols_;
  std::vector<const Loop*> loops_;
  std::vector<std::pair<std::string, z3::expr>> extras_;
};

}  // namespace ncv::solver
