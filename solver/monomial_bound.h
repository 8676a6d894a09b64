// A sound fast path for `lhs <= rhs` over a param domain whose relations bound products of
// params (bs * q_head * s_active <= 128, ...), which Z3's nonlinear integer arithmetic may not
// decide within its time limit (attention_tkg's SBUF peak: tiles of seqlen // 128 columns of
// bs * q_head * s_active scores each).
//
// Each side becomes a polynomial with rational coefficients over atoms (params, loop variables,
// the program id, and subterms kept opaque with their interval): the exact polynomial where the
// Expr is one (floor division exact when the divisor divides every value, known from constants
// and `multiple_of`), else an upper bound for lhs and a lower bound for rhs (floor(x / c) between
// (x - c + 1) / c and x / c; a product of two non-negative factors bounded by the product of
// their bounds). Then `upper(lhs) - lower(rhs)` is bounded above monomial by monomial: a monomial
// with a positive coefficient by the least of the product of its atoms' intervals and, where its
// atoms are non-negative, `b / least(extra) * bound(rest)` for every relation that reads
// `k * r <= b` (r = common * extra shares the atoms `common` with the monomial, whose other atoms
// are `rest`; extra's atoms are non-negative with a product of at least least(extra) > 0, so
// common <= b / least(extra)); a monomial with a negative coefficient by its atoms' interval
// product. A `max` on the left (or a `min` on the right) is split into one inequality per argument
// first.
//
// Proved means the bound is at most 0: every step over-approximates, so a point of the domain
// violating the inequality cannot exist. Not proved means nothing (the bound is loose where the
// monomials' maxima lie at different points of the domain); the caller asks Z3.
#pragma once

#include <memory>

#include "model/ir/expr.h"
#include "model/ir/program.h"
#include "solver/expr_interval.h"

namespace ncv::solver {

class MonomialBounds {
 public:
  // `ranges` holds the interval of every variable the inequalities may mention (params, the
  // program id, loop variables); the relations of `p` are read once here.
  MonomialBounds(const Program& p, IntervalBounds ranges);
  ~MonomialBounds();
  MonomialBounds(const MonomialBounds&) = delete;
  MonomialBounds& operator=(const MonomialBounds&) = delete;

  // Whether lhs <= rhs holds at every point of the domain (true only with a proof).
  bool proves_le(const Expr& lhs, const Expr& rhs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ncv::solver
