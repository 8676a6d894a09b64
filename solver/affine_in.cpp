#include "solver/affine_in.h"

namespace ncv::solver {

std::optional<AffineIn> affine_in(const Expr& e, SymbolId v) {
  if (!e.mentions(v)) return AffineIn{0, e};
  switch (e.kind()) {
    case ExprKind::Var:
      return AffineIn{1, Expr(0)};  // mentions v, so it is v
    case ExprKind::Add: {
      const auto l = affine_in(e.lhs(), v), r = affine_in(e.rhs(), v);
      int64_t c = 0;
      if (!l || !r || __builtin_add_overflow(l->coeff, r->coeff, &c)) return std::nullopt;
      return AffineIn{c, l->rest + r->rest};
    }
    case ExprKind::Mul: {
      // Exactly one side mentions v (else the product is quadratic); the other must be constant.
      const bool left_has_v = e.lhs().mentions(v);
      if (left_has_v && e.rhs().mentions(v)) return std::nullopt;
      const Expr& factor = left_has_v ? e.rhs() : e.lhs();
      if (!factor.is_const()) return std::nullopt;
      const auto inner = affine_in(left_has_v ? e.lhs() : e.rhs(), v);
      int64_t c = 0;
      if (!inner || __builtin_mul_overflow(inner->coeff, factor.const_value(), &c)) {
        return std::nullopt;
      }
      return AffineIn{c, inner->rest * factor};
    }
    default:
      return std::nullopt;  // floor division, modulo, min, max of v
  }
}

}  // namespace ncv::solver
