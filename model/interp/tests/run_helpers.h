// Running a Program on seeded random inputs: the helper the interpreter's, the timing model's,
// the kernels' and the solver's tests share.
#pragma once

#include <cstdint>

#include "model/interp/interpreter.h"

namespace ncv::interptest {

inline RunResult run_random(const Program& p, const ParamValues& params, uint64_t seed = 1,
                            const RunOptions& opts = {}) {
  return run_program(p, params, random_inputs(p, params, seed), opts);
}

}  // namespace ncv::interptest
