// Placement of on-chip buffers, and what the compiler's allocation needs.
//
// Two things, kept apart. The *requirement* (sbuf_peak_bytes, psum_peak_bytes) is what any
// allocation under the compiler's rules (liveness.h, model/ir/README.md "Allocation rules")
// needs: the largest sum, over program points, of the auto-placed buffers live there, each
// counted by its live region's bytes (block-indexed tensors one block per iteration, `bufs`
// copies, PSUM in whole banks). Capacity verdicts (the interpreter, prove, frontier, bench)
// compare it with the memory. The *layout* (placements) is where the interpreter keeps each
// auto-placed buffer's values: stack discipline per scope, like nki-library's SbufManager
// (a scope's buffers, each `bufs` copies, stacked on the enclosing scopes'; siblings reuse the
// space), whole tensors, no two live buffers sharing bytes. The layout may extend past the
// memory (sbuf_layout_bytes) when the requirement fits: it is bookkeeping of the model, not an
// address the compiler would choose. Explicitly placed buffers keep their placement in both.
// Every address and size is an Expr over params: the interpreter evaluates them, the solver
// proves things about them.
#pragma once

#include <optional>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/ir/liveness.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

struct BufferPlacement {
  TensorId tensor = 0;
  Memory memory = Memory::SBUF;
  bool explicit_placement = false;
  Expr partition;       // first partition
  Expr byte_offset;     // copy 0's byte offset within each partition (may use enclosing loop vars)
  Expr bytes_per_copy;  // bytes of one copy in one partition (prod(shape[1:]) * dtype size)
  Expr copy_stride;     // bytes from copy c to copy c+1 (>= bytes_per_copy, alignment/banks)
  // Copy c occupies [byte_offset + c*copy_stride, byte_offset + c*copy_stride + bytes_per_copy).
};

struct Allocation {
  std::vector<std::optional<BufferPlacement>> placements;  // indexed by TensorId; HBM: nullopt
  // The requirement: bytes per partition the live auto-placed buffers need at their peak under
  // the compiler's rules (liveness.h), for SBUF and PSUM. Explicit placements are checked
  // separately (inside the memory, disjoint while live).
  Expr sbuf_peak_bytes;
  Expr psum_peak_bytes;
  // The same requirement as the terms whose maximum it is (one per candidate program point):
  // the solver checks each against the capacity, which its monomial bounds can prove one sum at
  // a time where the maximum defeats them.
  std::vector<Expr> sbuf_peak_terms;
  std::vector<Expr> psum_peak_terms;
  // The layout's extent: the largest byte offset + size of an auto-placed copy (stack
  // discipline), the size of the interpreter's arrays.
  Expr sbuf_layout_bytes;
  Expr psum_layout_bytes;
  // Each on-chip buffer's live regions (liveness.h), indexed by TensorId.
  std::vector<std::vector<LiveRegion>> regions;
  // The layout per scope: bytes per partition in use when the scope is entered (base) and the
  // scope's own buffers' end; indexed by ScopeId.
  std::vector<Expr> sbuf_scope_base, sbuf_scope_end;
  std::vector<Expr> psum_scope_base, psum_scope_end;
};

Allocation allocate(const Program& p, const HwConfig& hw);

}  // namespace ir
}  // namespace ncv
