// Translation of symbolic index expressions (model/ir/expr.h) into Z3 integer terms. The
// translation is exact: for every binding of the symbols, the Z3 term evaluates
// to what ncv::eval computes (solver/tests/z3_expr_test.cpp checks this on random expressions).
#pragma once

#include <z3++.h>

#include <unordered_map>

#include "model/ir/expr.h"

namespace ncv::solver {

// The Z3 term standing for each symbol (param or loop variable) an expression may mention.
using SymbolTerms = std::unordered_map<SymbolId, z3::expr>;

// Throws std::invalid_argument when `e` mentions a symbol that `symbols` does not bind.
z3::expr to_z3(z3::context& ctx, const Expr& e, const SymbolTerms& symbols);

}  // namespace ncv::solver
