// A canonical order of each block's independent statements, so that two programs that differ
// only in the order of statements that commute compare equal as IR (layer 0, structural.h).
//
// Two statements of a block commute when neither writes a tensor the other reads or writes and
// neither touches state outside its operands. The relation is conservative, at whole-tensor
// granularity (indices are ignored: statements writing disjoint halves of one tensor stay in
// order):
//  * a loop's reads and writes are those of its body; a declaration writes its tensor;
//  * an index tensor of an indirect access is read;
//  * on-chip tensors of a memory that holds an explicitly placed tensor are one tensor there (an
//    explicit placement may overlap any other buffer of that memory);
//  * a statement that reaches engine or run state — an activation or a cumulative Vector op with
//    an accumulator command, a random draw (the generator's stream is consumed in program order),
//    another core's memory — commutes with nothing.
// Within these rules each block is put in the least order by a key that does not depend on
// buffer or loop-variable names (Kahn's algorithm, the least ready key first): two programs whose
// statements differ only by swaps of commuting neighbours get the same order. Instruction ids are
// renumbered in the new program order.
//
// A loop is split first (fission) into one loop per group of its body's statements that never
// meet across iterations: two statements stay together when one declares a buffer the other
// touches (the buffer lives one iteration), when either reaches engine or run state, or when
// both touch a tensor, one writing, unless in some dim both accesses start at c * var + r (the
// same c and r, r free of inner loop variables) and span at most |c * step| elements (each
// iteration its own slice). Groups that must run both ways round within an iteration are one.
// A fused program and its fissioned form then have one canonical form.
#pragma once

#include "model/ir/program.h"

namespace ncv::equiv {

// `p` with every loop split as far as the rules allow and every block in its canonical order. The
// result computes what `p` computes.
ir::Program with_canonical_statement_order(const ir::Program& p);

}  // namespace ncv::equiv
