// Peeled loop iterations folded back into their loops, so that a program and its peeled form
// compare equal in layer 0 (structural.h).
//
// A loop `for v in range(start, stop, step)` whose first iteration is written out just before it
// (the statements before the loop are its body with v := start - step) is the loop from
// start - step; one whose last is written out just after it (step 1: the body with v := stop)
// is the loop to stop + 1. Either is folded back only where the loop then runs that iteration
// at every shape of the domain and every iteration of the loops around it: stop > start - step
// (first) or stop >= start (last), proved with Z3; a query that does not answer leaves the
// program as it is. Bodies with a declaration (a buffer per iteration, which the copy would
// declare again) or an indirect access are left as they are.
#pragma once

#include "model/ir/program.h"

namespace ncv::equiv {

// `p` with every peeled first or last iteration folded back into its loop (repeatedly: several
// peeled iterations fold one at a time). The result computes what `p` computes.
ir::Program without_peeled_iterations(const ir::Program& p);

}  // namespace ncv::equiv
