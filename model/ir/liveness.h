// When each on-chip buffer holds data the kernel still needs, and how many bytes per partition
// it holds then: the liveness rules of the Neuron compiler's allocation, stated once. The
// allocator's peaks (allocator.h), the solver's allocation obligations (solver/allocation.h), the
// frontier and `bench`'s memory at the peak (memory_peak.h) all read these regions, so every
// capacity and overlap verdict uses the same rules. The rules and their public sources are in
// model/ir/README.md ("Allocation rules").
//
// Rule 1 (liveness span). A buffer occupies memory from the first to the last top-level statement
//   of its region's body that touches it; before its first access it holds nothing and after its
//   last one nothing is read from it.
// Rule 2 (iteration-local buffers, segments). A loop statement whose every iteration reads only
//   what the same iteration wrote before (an identical access, or a write of the whole buffer,
//   earlier in the iteration) takes no value in and leaves none out: the buffer's region there
//   moves into the loop body, one iteration at a time, and the buffer is dead between such a
//   loop and the statements around it. Likewise a statement that only writes the buffer starts a
//   new segment; a statement reading a value its segment did not write joins every segment since
//   the first use.
// Rule 3 (block-indexed tensors). Within such a loop, a storage dimension that every access
//   indexes with the same single block whose index depends on the variable of a loop the region
//   moved into is one block per iteration: the compiler allocates that block (with the buffer's
//   `bufs` rotating copies), not the whole block count.
// Rule 4 (granularity). An auto-placed SBUF copy is 4-byte aligned; an auto-placed PSUM copy takes
//   whole 2 KiB banks.
// Rule 5 (explicit allocations). A placement the kernel gives (`ncc.sbuf.alloc`, `psum.alloc`,
//   `mod_alloc`, `address=`) is honoured as written: it is not part of the auto-placed peak, its
//   bytes stay where the kernel put them, and two placed buffers may share bytes when rules 1-2
//   say they are never live together.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

struct LiveRegion {
  TensorId tensor = 0;
  const std::vector<Stmt>* body = nullptr;  // the body whose top-level statements `first..last` are
  ScopeId scope = 0;                        // that body's scope
  size_t first = 0, last = 0;               // span of use (rule 1); the declaration when unused
  bool used = false;                        // some instruction touches the buffer
  // Loops the region moved into (rule 2), outermost first; the buffer is iteration-local in each.
  std::vector<const Loop*> within;
  // Storage dims reduced to one block (rule 3).
  std::vector<int> block_dims;
  // Live bytes per partition of one copy: prod of the storage dims after rule 3, times the dtype
  // size, before rule 4's rounding.
  Expr bytes_per_copy;
  // Bytes per partition the region occupies: copies (`bufs`) times the rounded copy (rule 4).
  Expr bytes;
};

// The regions of each on-chip buffer, indexed by TensorId (empty for HBM tensors): at least one
// per buffer, one per segment of its uses (rules 1 and 2; between segments it holds nothing).
std::vector<std::vector<LiveRegion>> live_regions(const Program& p, const HwConfig& hw);

// x rounded up to a multiple of a (unchanged when x is provably a multiple already).
Expr align_up(const Expr& x, int64_t a);

// Rule 4: bytes of one auto-placed copy as the allocator lays it out.
Expr rounded_copy_bytes(const Expr& bytes, Memory m, const HwConfig& hw);

// Alignment of auto-placed SBUF buffer copies, in bytes.
inline constexpr int64_t kSbufAlignBytes = 4;

}  // namespace ir
}  // namespace ncv
