// Internal to the interpreter: an access resolved for one instruction instance, and the failure
// a dynamic check throws inside a run (Interpreter::run turns it into RunResult::error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/interp/shadow_map.h"
#include "model/ir/tensor.h"
#include "model/isa/rules.h"
#include "model/semantics/view.h"

namespace ncv {
inline namespace interp {

struct CheckFailure {
  CheckKind kind;
  std::string detail;
};

[[noreturn]] inline void fail_check(CheckKind k, std::string detail) {
  throw CheckFailure{k, std::move(detail)};
}
[[noreturn]] inline void fail_check(Rule r, std::string detail) {
  throw CheckFailure{rule_info(r).kind, std::move(detail)};
}

// Where an access's elements are for one instance and which physical region it covers.
struct Resolved {
  const Tensor* tensor = nullptr;
  TensorId id = 0;
  Memory memory = Memory::SBUF;
  int core = 0;                          // whose memory (a peer core's for on_core accesses)
  View view;                             // base is null in trace-only runs
  int64_t base_offset = 0;               // byte offset of element (0,...) in its memory array
  int64_t partition_begin = 0;           // on-chip: physical first partition
  int64_t partitions = 0;                // on-chip: partitions covered (tensor dim 0's size)
  int64_t byte_begin = 0, byte_end = 0;  // within a partition (on-chip) / within the tensor (HBM)
  std::vector<int64_t> row_offsets;      // indirect: byte offset per row
  int64_t contiguous_bytes = 0;          // bytes per innermost contiguous run
  int64_t scope_iteration = 0;           // on-chip: iteration of the buffer's declaring loop
  // Value runs only: the bytes covered within each partition (on-chip; before the row offset of
  // an indirect access) or within the tensor (HBM), sorted and coalesced.
  std::vector<ByteRun> runs;
  // A DMA's oob_skip: 1 for each row that is not transferred (empty: every row is).
  std::vector<uint8_t> skipped;
};

}  // namespace interp
}  // namespace ncv
