#include "solver/z3_expr.h"

#include <stdexcept>
#include <string>

namespace ncv::solver {

namespace {

// Hash-consing makes structurally equal subterms one node, so a cache keyed by node turns the
// expression DAG into a Z3 DAG instead of unfolding shared subterms.
class Translator {
 public:
  Translator(z3::context& ctx, const SymbolTerms& symbols) : ctx_(ctx), symbols_(symbols) {}

  z3::expr operator()(const Expr& e) {
    if (auto it = cache_.find(e.node()); it != cache_.end()) return it->second;
    z3::expr t = translate(e);
    cache_.emplace(e.node(), t);
    return t;
  }

 private:
  z3::expr translate(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Const:
        return ctx_.int_val(e.const_value());
      case ExprKind::Var: {
        auto it = symbols_.find(e.symbol());
        if (it == symbols_.end()) {
          throw std::invalid_argument("expression `" + e.str() + "` mentions '" +
                                      symbol_name(e.symbol()) +
                                      "', which is neither a param nor an enclosing loop variable");
        }
        return it->second;
      }
      case ExprKind::Add:
        return (*this)(e.lhs()) + (*this)(e.rhs());
      case ExprKind::Mul:
        return (*this)(e.lhs()) * (*this)(e.rhs());
      // Expr divisors are positive constants (Expr::floordiv/mod require it). SMT-LIB integer
      // div/mod are Euclidean: a = b*q + r with 0 <= r < |b|. For b > 0 that q is exactly
      // floor(a / b) and r is a - b*floor(a / b) in [0, b): Expr's floor semantics.
      case ExprKind::FloorDiv:
        return z3::expr(ctx_, Z3_mk_div(ctx_, (*this)(e.lhs()), ctx_.int_val(e.divisor())));
      case ExprKind::Mod:
        return z3::expr(ctx_, Z3_mk_mod(ctx_, (*this)(e.lhs()), ctx_.int_val(e.divisor())));
      case ExprKind::Min: {
        z3::expr a = (*this)(e.lhs()), b = (*this)(e.rhs());
        return z3::ite(a <= b, a, b);
      }
      case ExprKind::Max: {
        z3::expr a = (*this)(e.lhs()), b = (*this)(e.rhs());
        return z3::ite(a >= b, a, b);
      }
    }
    throw std::logic_error("unhandled expression kind in `" + e.str() + "`");
  }

  z3::context& ctx_;
  const SymbolTerms& symbols_;
  std::unordered_map<const ExprNode*, z3::expr> cache_;
};

}  // namespace

z3::expr to_z3(z3::context& ctx, const Expr& e, const SymbolTerms& symbols) {
  return Translator(ctx, symbols)(e);
}

}  // namespace ncv::solver
