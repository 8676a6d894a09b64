// The interpreter's record of every executed instruction instance, read by the timing model
// (DESIGN.md §4): engine, op, physical regions read and written, sizes and dtypes.
#pragma once

#include <cstdint>
#include <vector>

#include "model/dtype.h"
#include "model/instruction.h"
#include "model/tensor.h"

namespace ncv {

// A physical region: on-chip, a partition range x a byte range within each partition of one
// core's SBUF or PSUM; in HBM, a byte range of one tensor (partitions [0,1)).
struct Region {
  Memory memory = Memory::SBUF;
  uint16_t core = 0;
  uint32_t tensor = 0;  // HBM: TensorId; on-chip: the tensor that owns the access
  uint16_t partition_begin = 0, partition_end = 0;
  uint64_t byte_begin = 0, byte_end = 0;
  bool operator==(const Region&) const = default;
};

struct TraceEvent {
  uint32_t instruction = 0;  // InstrStmt id
  uint16_t core = 0;
  Engine engine = Engine::Vector;
  uint8_t op = 0;           // Instruction variant index (op_name)
  uint8_t queue = 0;        // DMA queue
  uint16_t partitions = 0;  // rows of the main operand
  int64_t free_elems = 0;   // elements per partition of the main operand (matmul: N)
  int64_t aux = 0;          // matmul: stationary free size M; DMA: contiguous bytes per chunk
  uint64_t bytes = 0;       // DMA: bytes moved
  DType in_dtype = DType::fp32, out_dtype = DType::fp32;
  uint32_t region_begin = 0;              // index into Trace::regions
  uint8_t num_reads = 0, num_writes = 0;  // reads first, then writes
  bool operator==(const TraceEvent&) const = default;
};

struct Trace {
  std::vector<TraceEvent> events;
  std::vector<Region> regions;
  bool operator==(const Trace&) const = default;
};

}  // namespace ncv
