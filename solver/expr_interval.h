// Interval bounds of integer Exprs over boxes of param and loop-variable values: a cheap, sound
// first pass for the well-formedness obligations (solver/well_formed.h). When every intermediate
// result of an expression lies inside int64 on the box, evaluating it never overflows, and Z3 is
// not needed; otherwise the obligation goes to Z3, which may still prove it (the box ignores
// relations between params and the steps of loops).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/ir/expr.h"
#include "solver/int128.h"

namespace ncv::solver {

// A closed interval in 128-bit integers. Bounds beyond int64 are clamped to one past it (the
// magnitude is all that matters past that point), so products never overflow Int128.
struct Interval {
  Int128 lo = 0, hi = 0;
  bool within_int64() const;
};

class IntervalBounds {
 public:
  // The range a variable (param, loop variable, program id) takes. Intervals already computed
  // stay cached: call forget() before rebinding a variable they may depend on.
  void bind(SymbolId var, Interval range) { vars_[var] = range; }
  void forget() { cache_.clear(); }
  bool has(SymbolId var) const { return vars_.count(var) != 0; }

  // The interval of e's value; throws std::invalid_argument for an unbound variable.
  Interval of(const Expr& e);
  // Whether every sum and product inside e (what eval checks for overflow) stays within int64.
  bool evaluates_within_int64(const Expr& e);

 private:
  std::unordered_map<SymbolId, Interval> vars_;
  std::unordered_map<const ExprNode*, Interval> cache_;
};

}  // namespace ncv::solver
