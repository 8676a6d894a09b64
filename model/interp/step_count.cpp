// Counting a run's steps before it starts: the step budget (RunOptions::max_steps) is refused
// before any memory is set up or any instruction runs, instead of hours into a runaway loop.
#include <algorithm>
#include <cstdint>

#include "model/interp/interpreter.h"

namespace ncv {
inline namespace interp {

namespace {

class StepCounter {
 public:
  explicit StepCounter(int64_t limit) : limit_(limit) {}

  // Steps of `body` under `env`, as Interpreter::advance counts them (one per loop iteration
  // and one per instruction instance); stops early once the total is past the limit.
  void body(const std::vector<Stmt>& stmts, Env& env) {
    for (const Stmt& s : stmts) {
      if (over()) return;
      if (std::holds_alternative<InstrStmt>(s.node)) {
        add(1, 1);
      } else if (const auto* l = std::get_if<Loop>(&s.node)) {
        loop(*l, env);
      }
    }
  }

  bool over() const { return count_.steps > limit_; }
  StepCount count() const { return count_; }

 private:
  // Saturating: once past the limit the counts stop mattering.
  void add(int64_t steps, int64_t instances) {
    count_.steps = steps > limit_ - count_.steps ? limit_ + 1 : count_.steps + steps;
    count_.instances =
        instances > limit_ - count_.instances ? limit_ + 1 : count_.instances + instances;
  }

  void loop(const Loop& l, Env& env) {
    const int64_t start = eval(l.start, env), stop = eval(l.stop, env);
    if (stop <= start) return;  // empty, or a negative trip count the run reports
    // (stop - start + step - 1) / step without overflow.
    const auto span = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
    const auto step = static_cast<uint64_t>(l.step);
    const uint64_t trips = span / step + (span % step != 0 ? 1 : 0);
    if (trips > static_cast<uint64_t>(limit_)) return add(limit_ + 1, 0);
    add(static_cast<int64_t>(trips), 0);  // the iterations themselves
    const SymbolId v = intern_symbol(l.var);
    if (!mentions_in_bounds(l.body, v)) {
      // The body's count does not depend on the variable: count one iteration, multiply.
      StepCounter one(limit_);
      env.set(v, start);
      one.body(l.body, env);
      env.unset(v);
      const StepCount each = one.count();
      if (each.steps > 0 &&
          static_cast<uint64_t>(each.steps) > static_cast<uint64_t>(limit_) / trips) {
        return add(limit_ + 1, 0);
      }
      const auto n = static_cast<int64_t>(trips);
      return add(each.steps * n, each.instances * n);  // instances <= steps
    }
    for (uint64_t k = 0; k < trips && !over(); ++k) {
      env.set(v, start + static_cast<int64_t>(k * step));
      body(l.body, env);
    }
    env.unset(v);
  }

  // Whether a loop nested in `stmts` takes its bounds from `v`.
  static bool mentions_in_bounds(const std::vector<Stmt>& stmts, SymbolId v) {
    for (const Stmt& s : stmts) {
      const auto* l = std::get_if<Loop>(&s.node);
      if (l == nullptr) continue;
      for (const Expr* e : {&l->start, &l->stop}) {
        const auto syms = e->symbols();
        if (std::find(syms.begin(), syms.end(), v) != syms.end()) return true;
      }
      if (mentions_in_bounds(l->body, v)) return true;
    }
    return false;
  }

  int64_t limit_;
  StepCount count_;
};

}  // namespace

StepCount count_steps(const Program& p, const ParamValues& params, int64_t limit) {
  Env env;
  for (const auto& [name, value] : params) env.set(name, value);
  StepCounter counter(std::clamp<int64_t>(limit, 0, INT64_MAX - 1));  // limit + 1 must fit
  try {
    const int64_t grid = eval(p.grid, env);
    for (int64_t core = 0; core < std::min<int64_t>(grid, 64) && !counter.over(); ++core) {
      env.set(kProgramIdParam, core);
      counter.body(p.body, env);
    }
  } catch (const EvalError&) {
    // A bound beyond int64: the run stops there with a well_formed failure, which the count up
    // to this point already covers.
  }
  return counter.count();
}

}  // namespace interp
}  // namespace ncv
