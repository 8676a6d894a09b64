// An Expr as a function of one variable: e = coeff * v + rest with a constant coefficient and a
// rest that does not mention v. The initialization proof solves a write's loop variable from
// the index it writes this way (v = floor((index - rest) / coeff)) instead of quantifying it.
#pragma once

#include <cstdint>
#include <optional>

#include "model/ir/expr.h"

namespace ncv::solver {

struct AffineIn {
  int64_t coeff = 0;
  Expr rest;
};

// Nullopt when v occurs under floor division, modulo, min or max, or is multiplied by anything
// but a constant, or when a coefficient overflows int64.
std::optional<AffineIn> affine_in(const Expr& e, SymbolId v);

}  // namespace ncv::solver
