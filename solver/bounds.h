// Index-bounds obligations: every index an access touches lies inside its
// tensor, for every param in the domain and every iteration of the enclosing loops. The rule is
// the one AccessResolver::resolve (model/interp/resolve.cpp) applies dynamically, dim by dim: with
// last = start + (size - 1) * step, require start >= 0 and last < shape[dim]; an indirect dim
// adds the declared offset range [lo, hi] to both; an access to a peer core's memory needs
// 0 <= core < grid.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

// Every bounds obligation of every access (written and read, indirect offsets included) of every
// instruction, in program order.
std::vector<Obligation> prove_bounds(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
