// Equality of two programs as IR, up to what cannot change a value: the names of the buffers
// (instructions name tensors by id) and of the loop variables (an alpha-renaming), and the DMA
// queue of each transfer (the queue orders transfers in time, not in value: the interpreter
// computes in program order and reads the queue only for the timing trace). Two such programs
// compute the same bits for every param value of their (equal) domain and every input — a proof for
// all shapes where the bounded layers prove only the checked ones. Renaming and moving transfers
// between queues are the harmless rewrites it covers; anything else (reordering, fusion, another
// tiling) is left to the bounded layers.
#pragma once

#include <optional>
#include <string>

#include "model/ir/program.h"

namespace ncv::equiv {

// The domain, in words ("seqlen in [128, 4096] multiple of 128, d_head in [1, 128]"; "the
// program's one shape" without params), when `a` and `b` are one program up to buffer names and
// DMA queues; nullopt otherwise (not a refutation).
std::optional<std::string> same_program_up_to_names_and_queues(const ir::Program& a,
                                                               const ir::Program& b);

}  // namespace ncv::equiv
