// Placement of on-chip buffers.
//
// Stack discipline per scope, like nki-library's SbufManager: entering a scope pushes its
// buffers (each `bufs` copies) on top of the enclosing scopes' buffers; sibling scopes reuse the
// same space. PSUM copies are rounded up to whole 2 KiB banks so no auto-placed tile crosses a
// bank. Explicitly placed buffers keep their placement and are not stacked. Every address and
// the peak are Exprs over params: the interpreter evaluates them, the solver proves things
// about them.
#pragma once

#include <optional>
#include <vector>

#include "model/hw/hw_config.h"
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
  // Peak bytes per partition of auto-placed buffers over every program point (a max over the
  // scope tree), and the same for PSUM. Explicit placements are checked separately.
  Expr sbuf_peak_bytes;
  Expr psum_peak_bytes;
  // Per scope: bytes per partition in use when the scope is entered (base) and the scope's own
  // buffers' end; indexed by ScopeId.
  std::vector<Expr> sbuf_scope_base, sbuf_scope_end;
  std::vector<Expr> psum_scope_base, psum_scope_end;
};

// Alignment of auto-placed SBUF buffer copies, in bytes.
inline constexpr int64_t kSbufAlignBytes = 4;

Allocation allocate(const Program& p, const HwConfig& hw);

}  // namespace ir
}  // namespace ncv
