// Initialization obligations: every element of SBUF/PSUM that an instruction reads (sources,
// operands, the PSUM destination of an accumulating matmul, the destination a predicated copy
// keeps, indirect offsets) was written earlier in the same lifetime of its buffer, for every
// param in the domain and every loop iteration — the interpreter's shadow check
// `uninitialized_read` (model/interp/shadow_checks.h) for every shape at once.
//
// A buffer's lifetime is one iteration of the loop that declares it (the whole run for the kernel
// body), so the writes that count are those inside that scope which run before the read: earlier
// statements of the same iterations, or earlier iterations of a loop inside the scope enclosing
// both. A write's own loop variables are solved from the index it writes (affine with a positive
// constant coefficient: v = floor((index - rest) / coeff)) instead of being quantified, which only
// ever under-approximates what is written, so "proved" is sound. A counterexample is reported
// only when that solution is the one iteration that could write the element (the write's tiles
// do not overlap) and every write of the buffer was modelled; otherwise the verdict is unknown
// with the reason. A write into another core's buffer (sendrecv) counts on the core it names like
// one of that core's own writes when it is a pairwise exchange outside program-id-dependent loops:
// the interpreter's rendezvous then pairs the two cores' executions iteration by iteration.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

// One obligation per read of an on-chip tensor by an instruction, in program order.
std::vector<Obligation> prove_initialization(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
