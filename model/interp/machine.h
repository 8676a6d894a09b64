// Internal to the interpreter: the state of one run that walking, access resolution and the
// instructions share — the program's concrete shapes and placements, each core's on-chip memory
// and environment, the HBM tensors, and which buffers are live on which core.
#pragma once

#include <cstdint>
#include <vector>

#include "model/compiler/compiler_choices.h"
#include "model/hw/hw_config.h"
#include "model/interp/host_memory.h"
#include "model/ir/allocator.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace interp {

// One core's on-chip memory (physical byte arrays laid out partition-major), its Scalar-engine
// accumulators and the values of params and loop variables on it.
inline constexpr uint8_t kVecRegsDefined = 0;
inline constexpr uint8_t kVecRegsAfterIdleSelect = 1;
inline constexpr uint8_t kVecRegsAfterTensorScalarReduce = 2;

struct CoreState {
  HostMemory sbuf, psum;
  std::vector<float> act_regs;  // Scalar-engine accumulator registers, one per partition
  std::vector<float> vec_regs;  // Vector-engine accumulator registers (tensor_scalar_cumulative)
  // Per partition: the Vector register holds no defined value, so `reduce` may not continue it
  // (kVecRegsDefined, or why not: an idle select_reduce "may still modify" it, the page says; a
  // tensor_scalar_reduce left its reduction there, which the model does not keep).
  std::vector<uint8_t> vec_regs_undefined;
  Env env;
  std::vector<int64_t> scope_iteration;  // iteration index of each open scope's loop
  // The compiler's Vector/Scalar workload estimate so far, and its value when the current
  // iteration of each scope's loop began (model/compiler balances copies on the difference).
  EngineLoad load;
  std::vector<EngineLoad> load_at_iteration;
  // Random instruction instances (rand, dropout) this core has run: each draws from its own
  // stream of the model's generator (model/semantics/random.h).
  uint64_t random_draws = 0;
};

struct Machine {
  Machine(const Program& program, const HwConfig& config, bool values)
      : p(program), hw(config), compute_values(values) {}

  const Program& p;
  const HwConfig& hw;
  bool compute_values;
  int64_t grid = 1;
  std::vector<std::vector<int64_t>> shapes;    // concrete shape per tensor
  std::vector<std::vector<int64_t>> estrides;  // element strides per tensor dim
  Allocation alloc;
  int64_t sbuf_stride = 0, psum_stride = 0;  // bytes per partition in the arrays
  std::vector<CoreState> cores;
  std::vector<std::vector<uint8_t>> hbm;  // bytes of each HBM tensor by TensorId (value runs)
  std::vector<uint8_t> live;              // per core x tensor: the buffer's lifetime is open

  bool is_live(int64_t core, TensorId t) const {
    return live[static_cast<size_t>(core) * p.tensors.size() + t] != 0;
  }
  void set_live(int core, TensorId t, bool on) {
    live[static_cast<size_t>(core) * p.tensors.size() + t] = on ? 1 : 0;
  }
  HostMemory& memory(int core, Memory m) {
    return m == Memory::SBUF ? cores[static_cast<size_t>(core)].sbuf
                             : cores[static_cast<size_t>(core)].psum;
  }
  // Byte offset of the copy of buffer t in use on `core`: copy (scope iteration mod bufs) at
  // byte_offset + copy * copy_stride. An explicit placement is user arithmetic: beyond int64 it
  // throws EvalError (a well_formed failure), never wraps.
  int64_t copy_offset(int core, const BufferPlacement& bp, const Tensor& t) const {
    const CoreState& cs = cores[static_cast<size_t>(core)];
    int64_t copy = t.bufs > 1 ? cs.scope_iteration.at(t.scope) % t.bufs : 0;
    int64_t step = 0, off = 0;
    if (__builtin_mul_overflow(copy, eval(bp.copy_stride, cs.env), &step) ||
        __builtin_add_overflow(eval(bp.byte_offset, cs.env), step, &off)) {
      throw EvalError("the byte offset of copy " + std::to_string(copy) + " of buffer '" + t.name +
                      "' exceeds int64");
    }
    return off;
  }
};

}  // namespace interp
}  // namespace ncv
