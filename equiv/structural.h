// Equality of two programs as IR on the original's domain (the rewrite may accept more shapes), up
// to what cannot change a value: the names of the buffers
// (instructions name tensors by id) and of the loop variables (an alpha-renaming), and the DMA
// queue of each transfer (the queue orders transfers in time, not in value: the interpreter
// computes in program order and reads the queue only for the timing trace), the engine pinned on
// an instruction whose semantics do not depend on it (tensor_scalar, tensor_copy, memset,
// reciprocal, a float tensor_tensor; not a transpose), and the order of
// statements that commute (reorder.h: neither writes what the other touches, no engine state)
// and the split of a loop into loops over the groups of its body that never meet across
// iterations (fusion and fission), and a loop's first or last iteration written out beside it
// (peeling, peel.h).
// Two such programs compute the same bits for every param value of their (equal) domain and every
// input — a proof for all shapes where the bounded layers prove only the checked ones. Renaming,
// moving transfers between queues, reordering independent statements, fusing or splitting
// loops and peeling iterations are the harmless rewrites it covers; anything else (another
// tiling, buffers added or dropped) is left to the bounded layers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/ir/program.h"

namespace ncv::equiv {

// What layer 0 allows to differ, for the verdicts' words: "one program up to ...".
inline constexpr std::string_view kLayer0Differences =
    "buffer and loop-variable names, DMA queues, engines that change no value, the order of "
    "independent statements, loop fusion or fission and peeled iterations";

// The domain, in words ("seqlen in [128, 4096] multiple of 128, d_head in [1, 128]"; "the
// program's one shape" without params), when `a` and `b` are one program up to
// kLayer0Differences; nullopt otherwise (not a refutation).
std::optional<std::string> same_program_up_to_layer0(const ir::Program& a, const ir::Program& b);

// Both at once (the canonical forms built once): the domain when one program, else why not.
struct Layer0Comparison {
  std::optional<std::string> domain;
  std::string difference;  // empty when one program
};
Layer0Comparison compare_layer0(const ir::Program& a, const ir::Program& b);

// Why `a` and `b` are not one program up to kLayer0Differences, in words: the params, domain,
// grid or buffers that differ, or the first statement where their canonical forms (statements in
// canonical order, loop variables renamed, buffers named by id) part, with both texts. Empty when
// they are one program.
std::string layer0_difference(const ir::Program& a, const ir::Program& b);

}  // namespace ncv::equiv
