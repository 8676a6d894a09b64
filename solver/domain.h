// Z3 constraints for the domain a Program declares and for the iterations of
// loops, exactly as the interpreter walks them (model/interp/walk.cpp `advance`).
#pragma once

#include <z3++.h>

#include <vector>

#include "model/ir/program.h"
#include "solver/z3_expr.h"

namespace ncv::solver {

// One integer constant per param, plus `program_id` (the SPMD instance index).
SymbolTerms declare_params(z3::context& ctx, const Program& p);

// lo <= p <= hi and p % multiple_of == 0 for every param, every relation (as Relation::holds
// evaluates it), and 0 <= program_id < grid (and < 64, the interpreter's limit).
z3::expr param_domain(z3::context& ctx, const Program& p, const SymbolTerms& symbols);

// The params' part of it alone: ranges, multiples and relations (whether any params exist).
z3::expr param_constraints(z3::context& ctx, const Program& p, const SymbolTerms& symbols);

// Binds the variable of each loop (outermost first) in `symbols` and returns the constraint that
// it takes one of the values the interpreter gives it: start <= v < stop, (v - start) % step == 0
// (the interpreter only runs loops with positive steps: v = start, start + step, ... < stop).
z3::expr loop_iterations(z3::context& ctx, const std::vector<const Loop*>& loops,
                         SymbolTerms& symbols);

}  // namespace ncv::solver
