// Well-formedness obligations: what the interpreter must be able to evaluate before any ISA rule
// applies, proved for every param in the domain and every loop iteration (class well-formed, all
// replaying as CheckKind::well_formed):
//   - "grid in [1, 64]": the kernel's grid at the params (the model runs 1 to 64 instances);
//   - "dimensions >= 1": every dim of every tensor (concrete_shapes);
//   - "size fits int64": each tensor's size in bytes, and all HBM tensors together;
//   - "trip count >= 0": stop >= start for every loop the interpreter enters (a negative trip
//     count is refused, not skipped);
//   - "arithmetic fits int64": every sum and product the interpreter evaluates (eval checks each
//     one) in shapes, the grid, loop bounds, placements and their copy offsets, the allocation's
//     peaks, access starts and sizes, and instruction offsets.
// Interval bounds over the params' box prove most of these without Z3 (solver/expr_interval.h);
// the rest go to Z3 exactly like the other classes, so a nonlinear size may come back unknown.
// Not covered here: the step budget and the host-memory budget (limits of a run, not properties
// of the kernel), and anything the run's input values decide.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

std::vector<Obligation> prove_well_formed(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
