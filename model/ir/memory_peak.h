// What fills SBUF and PSUM at their peak, at concrete params: the allocator's requirement
// (allocator.h, under the rules of liveness.h) evaluated, and the auto-placed buffers live at the
// program point that reaches it, largest first. `frontier` prints it at the first shape that does
// not fit and `bench` at the shape it runs, so a user sees which buffers to shrink and how much
// headroom is left.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/ir/allocator.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

struct LiveBuffer {
  TensorId tensor = 0;
  std::string name;
  // Bytes per partition of all copies of the live region (liveness.h: a block-indexed tensor's one
  // block, each copy aligned or rounded up to whole PSUM banks, times copies): the live buffers'
  // bytes sum to the peak.
  int64_t bytes_per_partition = 0;
  int64_t bytes_per_copy = 0;  // one live copy's own bytes per partition, before rounding
  int64_t copies = 1;          // the declared `bufs`
  std::string loop;            // loop variable of the scope it lives in; empty: the kernel body
};

struct MemoryPeak {
  Memory memory = Memory::SBUF;
  int64_t peak_bytes = 0;  // auto-placed bytes per partition at the peak
  int64_t capacity = 0;    // usable bytes per partition (SBUF: without the compiler's reserve)
  // Loop variables of the scopes enclosing the peak, outermost first (empty: the kernel body).
  std::vector<std::string> at_loops;
  std::vector<LiveBuffer> live;  // the auto-placed buffers live there, largest first
  // Explicitly placed buffers of this memory, wherever they live, largest first: they keep the
  // kernel's placement, are checked separately (placement inside the memory) and are not part of
  // the peak, so a kernel that places everything itself has an empty `live` and these instead.
  std::vector<LiveBuffer> explicitly_placed;
  bool fits() const { return peak_bytes <= capacity; }
};

struct MemoryPeaks {
  MemoryPeak sbuf, psum;
};

// `params` must bind every param of p (values outside the declared domain are fine, as in the
// frontier); program_id is taken as 0, where the interpreter checks the peaks. Throws EvalError
// when a size cannot be evaluated.
MemoryPeaks memory_peaks(const Program& p, const HwConfig& hw,
                         const std::map<std::string, int64_t>& params);

}  // namespace ir
}  // namespace ncv
