#include "solver/expr_interval.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ncv::solver {

namespace {

constexpr Int128 kMin = std::numeric_limits<int64_t>::min();
constexpr Int128 kMax = std::numeric_limits<int64_t>::max();

Int128 clamp(Int128 v) {
  return std::clamp(v, kMin - 1, kMax + 1);
}

Interval make(Int128 a, Int128 b) {
  return Interval{clamp(std::min(a, b)), clamp(std::max(a, b))};
}

// floor(a / d) for d > 0.
Int128 floor_div(Int128 a, Int128 d) {
  Int128 q = a / d;
  if (a % d != 0 && a < 0) --q;
  return q;
}

}  // namespace

bool Interval::within_int64() const {
  return lo >= kMin && hi <= kMax;
}

Interval IntervalBounds::of(const Expr& e) {
  if (auto it = cache_.find(e.node()); it != cache_.end()) return it->second;
  Interval r;
  switch (e.kind()) {
    case ExprKind::Const:
      r = {e.const_value(), e.const_value()};
      break;
    case ExprKind::Var: {
      auto it = vars_.find(e.symbol());
      if (it == vars_.end()) {
        throw std::invalid_argument("expression `" + e.str() + "` mentions '" +
                                    symbol_name(e.symbol()) + "', which has no range");
      }
      r = it->second;
      break;
    }
    case ExprKind::Add: {
      const Interval a = of(e.lhs()), b = of(e.rhs());
      r = make(a.lo + b.lo, a.hi + b.hi);
      break;
    }
    case ExprKind::Mul: {
      const Interval a = of(e.lhs()), b = of(e.rhs());
      const Int128 c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      r = make(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
      break;
    }
    case ExprKind::FloorDiv: {
      const Interval a = of(e.lhs());
      r = make(floor_div(a.lo, e.divisor()), floor_div(a.hi, e.divisor()));
      break;
    }
    case ExprKind::Mod:
      r = {0, e.divisor() - 1};
      break;
    case ExprKind::Min: {
      const Interval a = of(e.lhs()), b = of(e.rhs());
      r = {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      break;
    }
    case ExprKind::Max: {
      const Interval a = of(e.lhs()), b = of(e.rhs());
      r = {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      break;
    }
  }
  cache_.emplace(e.node(), r);
  return r;
}

bool IntervalBounds::evaluates_within_int64(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Const:
    case ExprKind::Var:
      return true;
    case ExprKind::Add:
    case ExprKind::Mul:
      if (!of(e).within_int64()) return false;
      [[fallthrough]];
    case ExprKind::Min:
    case ExprKind::Max:
      return evaluates_within_int64(e.lhs()) && evaluates_within_int64(e.rhs());
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      return evaluates_within_int64(e.lhs());
  }
  return false;
}

}  // namespace ncv::solver
