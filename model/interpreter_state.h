// Internal to the interpreter: machine state, resolved accesses and the instance walker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/allocator.h"
#include "model/interpreter.h"
#include "model/view.h"

namespace ncv::interp {

// One core's on-chip memory: physical byte arrays laid out partition-major, with an owner tag
// per byte (0 = nothing written since the lifetime began; t+1 = last written by tensor t).
struct CoreState {
  std::vector<uint8_t> sbuf, psum;
  std::vector<uint16_t> sbuf_owner, psum_owner;
  std::vector<float> act_regs;  // Scalar-engine accumulator registers, one per partition
  Env env;
  std::vector<int64_t> scope_iteration;  // iteration index of each open scope's loop
};

struct HbmState {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> written;  // per byte: 1 once written (inputs start written)
};

// An access resolved for one instance: where its elements are and which region it covers.
struct Resolved {
  const Tensor* tensor = nullptr;
  TensorId id = 0;
  Memory memory = Memory::SBUF;
  int core = 0;
  View view;                             // base is null in trace-only runs
  int64_t base_offset = 0;               // byte offset of element (0,...) in its memory array
  int64_t partition_begin = 0;           // on-chip: physical first partition
  int64_t byte_begin = 0, byte_end = 0;  // within a partition (on-chip) / within the tensor (HBM)
  std::vector<int64_t> row_offsets;      // indirect: byte offset per row
  int64_t contiguous_bytes = 0;          // bytes per innermost contiguous run
};

}  // namespace ncv::interp
