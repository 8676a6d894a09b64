// The interpreter's record of every executed instruction instance, read by the timing model
// (docs/ARCHITECTURE.md, "Timing"): engine, op, physical regions read and written, sizes and
// dtypes. The same for value runs and trace-only runs.
#pragma once

#include <cstdint>
#include <vector>

#include "model/ir/instruction.h"
#include "model/ir/tensor.h"
#include "model/numerics/dtype.h"

namespace ncv {
inline namespace interp {

// A physical region: on-chip, a partition range x a byte range within each partition of one
// core's SBUF or PSUM; in HBM, a byte range of one tensor (partitions [0,1)).
struct Region {
  Memory memory = Memory::SBUF;
  uint16_t core = 0;
  uint32_t tensor = 0;  // HBM: TensorId; on-chip: the tensor that owns the access
  uint16_t partition_begin = 0, partition_end = 0;
  uint64_t byte_begin = 0, byte_end = 0;
  // On-chip: the iteration of the loop that declares the owning buffer (0 in the kernel body),
  // which selects the rotating copy when the compiler gives the buffer more copies than the
  // kernel declares (model/compiler compiler_buffers; the timing model tracks them apart).
  uint32_t iteration = 0;
  bool operator==(const Region&) const = default;
};

// One executed instruction instance. Every field has one meaning; fields that do not apply to
// the instruction stay 0.
struct TraceEvent {
  uint32_t instruction = 0;  // InstrStmt id
  uint16_t core = 0;
  Engine engine = Engine::Vector;
  uint8_t op = 0;           // Instruction variant index (op_name)
  uint8_t queue = 0;        // DMA queue
  uint16_t partitions = 0;  // rows of the main operand (matmul: K, transpose: P)
  int64_t free_elems = 0;   // elements per partition of the main operand (matmul: N)
  // Columns of the Tensor engine's stationary operand: matmul M; a transpose's (an identity
  // matmul's) P. 0 on the other engines.
  int64_t stationary_cols = 0;
  int64_t contiguous_bytes = 0;  // DMA: bytes per contiguous chunk of the transfer
  uint64_t bytes = 0;            // DMA: bytes moved
  // The instruction also writes a [P, 1] reduction result: an activation with reduce_res (the
  // Scalar engine reads its accumulator out afterwards), every tensor_scalar_reduce.
  bool reduce_readout = false;
  DType in_dtype = DType::fp32, out_dtype = DType::fp32;
  uint32_t region_begin = 0;              // index into Trace::regions
  uint8_t num_reads = 0, num_writes = 0;  // reads first, then writes
  // The values of the loops enclosing the instruction, outermost first (the loop stack
  // for_each_stmt gives the instruction): Trace::loop_values[begin, begin + num). Events of one
  // iteration share one run (an outer instruction reuses a prefix), so the values cost a few bytes
  // per iteration rather than per instance, and the fields fit the event's padding.
  uint8_t num_loop_values = 0;
  uint32_t loop_values_begin = 0;
  bool operator==(const TraceEvent&) const = default;
};
// Host memory per instance is budgeted (tools/cmd_bench.cpp kBytesPerInstance): the loop fields
// above fill what was padding.
static_assert(sizeof(TraceEvent) <= 64);

struct Trace {
  std::vector<TraceEvent> events;
  std::vector<Region> regions;
  std::vector<int64_t> loop_values;  // runs indexed by TraceEvent::loop_values_begin
  bool operator==(const Trace&) const = default;
};

}  // namespace interp
}  // namespace ncv
