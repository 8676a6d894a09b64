// ISA-rule obligations: the rules the interpreter checks per instruction instance
// (model/interp/operand_rules.cpp, exec.cpp, resolve.cpp), proved for every param in the domain
// and every loop iteration. Both are built from the same statements of the rules
// (model/isa/rules.h, evaluated here on Z3 terms through solver/z3_ops.h), and each obligation's
// name and CheckKind come from rule_info(). Rules that hold whatever the params are
// (engine/memory and dtype legality) are checked when the Program is built (model/ir/validate.cpp)
// and are not repeated here.
//
// The view quantities mirror AccessResolver::resolve: rows = size of dim 0 on chip (of view dim 0,
// i.e. tensor dim perm[0], in HBM), free elements = the product of the other view dims' sizes,
// first partition = the allocator's placement partition + start[0], PSUM bytes [begin, end) of each
// partition = copy offset + sum over dims d >= 1 of start[d] (last[d]) * row-major byte stride
// (+ the element size for end). The rules, with the CheckKind their counterexamples replay as:
//   - every access: "access sizes >= 1" (symbolic sizes only; constant ones are static) and, for
//     an indirect access, "indirect offsets column [P,1]" (shape_rule);
//   - every engine operand: "partition start alignment" (P > 64 starts at 0, P > 32 at 0 or 64,
//     else a multiple of 32 up to 96, P <= partitions; partition_rule) and "free size <= 65536
//     (SBUF)" / "<= 4096 (PSUM)" (shape_rule);
//   - dma_copy: "dma element counts match"; matmul: "matmul K matches", "matmul K/M/N <= limit",
//     "matmul destination is [M, N]", "PSUM tile inside one bank" (psum_bank; only where N <= 512,
//     as the interpreter); transpose: "transpose size <= LxL" (128 tensor engine, 32 vector),
//     "transpose destination is [F, P]", the bank rule on the tensor engine; activation,
//     tensor_scalar, tensor_scalar_reduce: "per-partition column [P,1]" for column operands and
//     reduce_res, "operand shapes match (...)"; tensor_tensor, tensor_copy(_predicated),
//     affine_select, reciprocal: "operand shapes match (...)"; tensor_reduce: "tensor_reduce
//     destination is [P, kept]"; affine_select, iota: "affine pattern fits int32" (the
//     interpreter's bound |offset| + |cm| (rows-1) + sum |step_k| (size_k-1)); tensor_tensor_scan,
//     tensor_scalar_cumulative: "operand shapes match (...)" and "per-partition column [P,1]" for
//     initial / imm0 / imm1; bn_stats: "free size <= 512" and "bn_stats destination is [P, 6]";
//     bn_aggr: whole (count, mean, m2) triples in, "bn_aggr destination is [P, 2]";
//     tensor_partition_reduce: "destination is [1, F]"; select_reduce, range_select: "operand
//     shapes match (...)" and "per-partition column [P,1]" for on_false / bounds / reduce_res;
//     sequence_bounds: "reads one partition" and "destination is [1, 2n]" (all shape_rule);
//     "range_select index within 2^24" (undefined_result: range_start + index stays exact in
//     fp32);
//   - rules of the generation no param changes (engine_rule): "matmul into bf16 PSUM" (trn3
//     only), "tensor_copy on the scalar engine", "range_select on NeuronCore-v3 or newer" (trn2
//     on): refuted at the smallest params that reach the instruction.
// Every rule is claimed where the instruction's sizes and tensor dims are >= 1 (resolve and
// concrete_shape reject the rest first, and the sizes are obligations themselves). A rule that
// constant-folds to true is proved without Z3.
//
// Over-approximations (may refute what the interpreter never reaches, never prove a violation):
// a buffer with bufs > 1 may use any copy in [0, bufs - 1] (the interpreter uses scope entries
// mod bufs; the copy is a quantified extra named "copy of 'NAME'"); an indirect PSUM view may be
// offset by any value of its declared range (that obligation replays with values and is
// data-dependent). Not modelled: a peer core's placement evaluated in that core's loop variables
// (placements of the current core are used).
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

// Every ISA-rule obligation of every instruction, in program order (class isa_rules). Each
// counterexample is the smallest (params, then loop iterations, then copy indices) and is
// replayed; it must raise the CheckKind the interpreter uses for the rule (partition_rule,
// psum_bank, shape_rule or engine_rule). The hardware limits are those of hw_of(options).
std::vector<Obligation> prove_isa_rules(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
