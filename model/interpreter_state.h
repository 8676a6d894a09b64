// Internal to the interpreter: machine state, resolved accesses and the instance walker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/allocator.h"
#include "model/host_memory.h"
#include "model/interpreter.h"
#include "model/shadow_map.h"
#include "model/view.h"

namespace ncv::interp {

// Each buffer lifetime (one entry into its scope on one core) and each HBM tensor gets a stamp;
// the shadow maps record which stamp last wrote every byte. Stamps are numbered in start order.
struct Lifetime {
  TensorId tensor = 0;
  uint32_t ended_after = UINT32_MAX;  // the newest stamp when it ended; UINT32_MAX while open
};

// One core's on-chip memory: physical byte arrays laid out partition-major, and their shadows.
struct CoreState {
  HostMemory sbuf, psum;
  ShadowMap sbuf_shadow, psum_shadow;
  // Which affine-loop iteration (Interp::AffineIteration serial, 0 = none) last wrote each byte.
  ShadowMap sbuf_writer, psum_writer;
  std::vector<uint32_t> stamp;  // per tensor: the stamp of its current (or last) lifetime
  std::vector<float> act_regs;  // Scalar-engine accumulator registers, one per partition
  Env env;
  std::vector<int64_t> scope_iteration;  // iteration index of each open scope's loop
};

struct HbmState {
  std::vector<uint8_t> bytes;
  ShadowMap shadow;  // one partition; inputs start written
  ShadowMap writer;  // affine-iteration serial of the last write (CoreState::sbuf_writer)
  uint32_t stamp = 0;
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
  // Value runs only: the bytes covered within each partition (on-chip; before the row offset of
  // an indirect access) or within the tensor (HBM), sorted and coalesced.
  std::vector<ByteRun> runs;
};

}  // namespace ncv::interp
