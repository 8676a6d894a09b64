// What the Neuron compiler decides that an NKI kernel leaves open, modelled in one place
// (model/compiler/README.md has each rule with its evidence): the engine of an unpinned
// instruction, the engine of an `nc_transpose` without `engine=`, how many physical copies a
// loop-local buffer gets, and which engine streams the compiler may reorder across affine_range
// iterations. The interpreter asks it for the engine of each unpinned instance (so the trace
// carries a concrete engine), the timing model for buffer counts and reordering, the kernels and
// the NKI front end for the transpose lowering.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hw/engine.h"
#include "model/hw/hw_config.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace compiler {

// The engine the compiler runs `ins` on: its pinned engine if it has one, else the choice of the
// rules in compiler_choices.cpp. `p` gives the dtypes of the accesses. One overload per
// instruction that can be unpinned (the interpreter calls them per instance), and one for any
// instruction.
// The compiler's estimate of the work on the Vector and Scalar engines, which it balances
// unpinned SBUF->SBUF copies on (copy_engine in compiler_choices.cpp).
struct EngineLoad {
  double vector_ns = 0, scalar_ns = 0;
  EngineLoad operator-(const EngineLoad& o) const {
    return {vector_ns - o.vector_ns, scalar_ns - o.scalar_ns};
  }
};
// An instance of `free_elems` elements per partition on engine e: ISA-OLD's max(MIN_II, N)
// cycles at the engine's clock (0 off the Vector and Scalar engines).
double estimated_ns(Engine e, int64_t free_elems, const HwConfig& hw);
void add_load(EngineLoad& load, Engine e, int64_t free_elems, const HwConfig& hw);

// `since_iteration`: the load issued since the current iteration of the loop around the copy
// began; `free_elems`: the copy's elements per partition.
Engine chosen_engine(const Program& p, const TensorCopy& i, const HwConfig& hw,
                     const EngineLoad& since_iteration, int64_t free_elems);
Engine chosen_engine(const Program& p, const TensorScalar& i, const HwConfig& hw);
Engine chosen_engine(const Program& p, const TensorTensor& i, const HwConfig& hw);
Engine chosen_engine(const Program& p, const Memset& i, const HwConfig& hw);
Engine chosen_engine(const Program& p, const Reciprocal& i, const HwConfig& hw);
// Any instruction, without a load history (an SBUF->SBUF float copy then goes to the Scalar
// engine, the faster of the two on an empty schedule).
Engine chosen_engine(const Program& p, const Instruction& ins, const HwConfig& hw);

// The engine of an `nc_transpose` without `engine=` of a [rows, cols] tile: the Vector engine
// only when both sides are known to fit its 32x32 transpose, else the Tensor engine (an identity
// matmul into PSUM and a copy back).
// The 32x32 limit is the same on every generation (ISA-OLD nc_transpose; HwConfig
// vector_transpose_max), so kernels can ask before they know the generation.
inline constexpr int64_t kVectorTransposeMax = 32;
Engine nc_transpose_engine(const Expr& rows, const Expr& cols);

// Physical copies the compiler's allocator gives each tensor (indexed by TensorId), before the
// capacity check: a buffer the kernel declares inside an affine_range body without a buffer
// count or a placement gets kAutoBuffers; everything else keeps what the kernel declares
// (HBM tensors: 1). The timing model rotates the extra copies (iteration i uses copy i mod n)
// when they fit the core's memory.
inline constexpr int64_t kAutoBuffers = 2;
std::vector<int64_t> compiler_buffers(const Program& p);

// Whether the compiler may order an engine's instruction stream differently from program order
// (software pipelining across affine_range iterations): the compute engines yes, a DMA queue no.
bool reorders_across_iterations(Engine e);

}  // namespace compiler
}  // namespace ncv
