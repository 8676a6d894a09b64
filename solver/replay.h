// Replaying a counterexample on the interpreter (every counterexample is replayed,
// and the interpreter must raise the same error).
#pragma once

#include "model/hw/hw_config.h"
#include "model/interp/dynamic_error.h"
#include "model/ir/program.h"
#include "solver/verdict.h"

namespace ncv::solver {

// Runs `p` with the counterexample's params (seeded random inputs). Reproduced when the run
// raises `expected`. The counterexample's loop indices need not be the first failing iteration
// the interpreter reaches, so only the kind is compared; the detail says whether the failing
// instruction is `instruction` too (-1: a program-level rule, no instruction). `data_dependent`:
// the interpreter sees the failure only with particular values read at run time (indirect
// offsets) or when a read follows another buffer's write (overlapping placements), so values are
// computed and a miss is not a disagreement. Another error raised first is not a disagreement
// either; a run that completes cleanly is. `needs_values`: the check runs only when values are
// computed (uninitialized reads), though the failure does not depend on them.
Replay replay_counterexample(const Program& p, const Counterexample& cex, CheckKind expected,
                             int64_t instruction, bool data_dependent, const HwConfig* hw,
                             bool needs_values = false);

}  // namespace ncv::solver
