// The compiler-choice rules (compiler_choices.h). Every rule cites its evidence; the keys are in
// docs/SOURCES.md and the reasoning in model/compiler/README.md.
#include "model/compiler/compiler_choices.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "model/numerics/dtype.h"

namespace ncv {
inline namespace compiler {

namespace {

DType dtype_of(const Program& p, const Access& a) {
  return p.tensor(a.tensor).dtype;
}

// A copy the Scalar engine can do as ACTIVATE(Identity) without changing any value: it casts its
// input to fp32 first (ISA-OLD tensor_copy: "Scalar Engine on NeuronCore-v2 performs copy by first
// casting the input tile to FP32"), which is exact for float inputs only.
bool scalar_copy_exact(const Program& p, const Access& dst, const Access& src) {
  return is_float(dtype_of(p, src)) && is_float(dtype_of(p, dst));
}

// Unpinned copies and casts (nl.copy, nisa.tensor_copy without engine, PSUM evictions, SBUF->SBUF
// casts). Evidence, the measured neuron-profile counters of the SD-attention tutorial on trn1
// (BLOG-PROF; model/compiler/README.md has the arithmetic):
//  - PSUM evictions run on the Scalar engine (ACTIVATE Identity): in step 1 the Vector engine is
//    busy 177 us, less than the score evictions, row maxima and transpose evictions would take it
//    together (>= 351 us), and the row maxima are Vector-only; the Scalar engine's 359 us are the
//    exp plus both sets of evictions plus ~100 ns per instruction.
//  - SBUF->SBUF copies go to the engine with less work in the current loop iteration, counting
//    the copy itself (ISA-OLD tensor_copy: "compiler selects best engine based on engine
//    workload"): step 0's [128, S] cast follows the exp and the Vector row sum and runs on the
//    Scalar engine (Scalar +161 us from step 1 to 0, Vector +124 us: the row sum); step 3's cast
//    follows the fused exp with the Vector engine lightly loaded, and step 3 is faster on
//    hardware than step 2 although it adds that cast, which on the Scalar engine (the busier one)
//    would add >= 94 us.
// On NeuronCore-v2 a Scalar-engine copy is `activation(op=copy)` (ISA-NEW tensor_copy); the
// legacy compiler emits engine-less ops as ACTIVATE IDENTITY (PERF, FIG16). Integer copies stay
// on the Vector engine (the Scalar engine's fp32 detour would round them).
Engine copy_engine(const Program& p, const TensorCopy& c, const HwConfig& hw,
                   const EngineLoad& since_iteration, int64_t free_elems) {
  if (!scalar_copy_exact(p, c.dst, c.src)) return Engine::Vector;
  if (p.tensor(c.src.tensor).memory == Memory::PSUM ||
      p.tensor(c.dst.tensor).memory == Memory::PSUM) {
    return Engine::Scalar;
  }
  const double vector = since_iteration.vector_ns + estimated_ns(Engine::Vector, free_elems, hw);
  const double scalar = since_iteration.scalar_ns + estimated_ns(Engine::Scalar, free_elems, hw);
  return vector < scalar ? Engine::Vector : Engine::Scalar;
}

// Unpinned tensor_scalar: the Scalar engine when it is an activation's `in * scale + bias`
// (multiply by, or add, a float immediate or [P,1] column; multiply then add), as the legacy
// compiler lowered the engine-less tensor_scalar(multiply, add) of the Mamba scan (PERF: "ScalarE
// is busy with many repeated activation instructions with IDENTITY (scale/bias enabled)";
// FIG16). Anything else (other ALU ops, reversed operands, bitwise ops) is Vector-only.
Engine tensor_scalar_engine(const Program& p, const TensorScalar& t) {
  const bool float_io = is_float(dtype_of(p, t.src)) && is_float(dtype_of(p, t.dst));
  const bool first = (t.op0 == AluOp::multiply || t.op0 == AluOp::add) && !t.reverse0;
  const bool second = !t.op1 || (t.op0 == AluOp::multiply && *t.op1 == AluOp::add && !t.reverse1);
  return float_io && first && second ? Engine::Scalar : Engine::Vector;
}

}  // namespace

double estimated_ns(Engine e, int64_t free_elems, const HwConfig& hw) {
  const double cycles = static_cast<double>(std::max<int64_t>(64, free_elems));  // MIN_II ~ 64
  if (e == Engine::Vector) return cycles / hw.vector_ghz;
  if (e == Engine::Scalar) return cycles / hw.scalar_ghz;
  return 0;
}

void add_load(EngineLoad& load, Engine e, int64_t free_elems, const HwConfig& hw) {
  if (e == Engine::Vector) load.vector_ns += estimated_ns(e, free_elems, hw);
  if (e == Engine::Scalar) load.scalar_ns += estimated_ns(e, free_elems, hw);
}

Engine chosen_engine(const Program& p, const TensorCopy& i, const HwConfig& hw,
                     const EngineLoad& since_iteration, int64_t free_elems) {
  return i.engine ? *i.engine : copy_engine(p, i, hw, since_iteration, free_elems);
}
Engine chosen_engine(const Program& p, const TensorScalar& i, const HwConfig&) {
  return i.engine ? *i.engine : tensor_scalar_engine(p, i);
}
// tensor_tensor "can only run on VectorE" (MAMBA), except integer add, subtract and multiply:
// "When all input/output tiles are int32 or uint32, the operation defaults to GpSimd Engine,
// which uses native integer arithmetic ... falls back to Vector Engine when any operand resides
// in PSUM" (ISA-NEW tensor_tensor); ISA-OLD tensor_tensor: "integer add, multiply, or subtract
// which run on the GpSimd Engine". (ISA-NEW's default covers every arithmetic operator; ISA-OLD
// names these three, the ones both pages agree on.) reciprocal: its cost formula is the Vector
// engine's (ISA-OLD) and nothing shows the compiler moving it. memset may go to GpSimd (ISA-OLD:
// the compiler selects "the best engine for the given input tile shape"), but on v2 GpSimd shares
// the Vector engine's SBUF port (ARCH2), so that would not free the Vector engine.
Engine chosen_engine(const Program& p, const TensorTensor& i, const HwConfig&) {
  if (i.engine) return *i.engine;
  const auto int32_in_sbuf = [&](const Access& a) {
    const Tensor& t = p.tensor(a.tensor);
    return (t.dtype == DType::int32 || t.dtype == DType::uint32) && t.memory != Memory::PSUM;
  };
  const bool integer_op = i.op == AluOp::add || i.op == AluOp::subtract || i.op == AluOp::multiply;
  return integer_op && int32_in_sbuf(i.dst) && int32_in_sbuf(i.src0) && int32_in_sbuf(i.src1)
             ? Engine::GpSimd
             : Engine::Vector;
}
Engine chosen_engine(const Program&, const Memset& i, const HwConfig&) {
  return i.engine.value_or(Engine::Vector);
}
Engine chosen_engine(const Program&, const Reciprocal& i, const HwConfig&) {
  return i.engine.value_or(Engine::Vector);
}

Engine chosen_engine(const Program& p, const Instruction& ins, const HwConfig& hw) {
  return std::visit(
      [&](const auto& i) -> Engine {
        using T = std::decay_t<decltype(i)>;
        if constexpr (std::is_same_v<T, TensorCopy>) {
          return chosen_engine(p, i, hw, EngineLoad{}, 0);
        } else if constexpr (std::is_same_v<T, TensorScalar> || std::is_same_v<T, TensorTensor> ||
                             std::is_same_v<T, Memset> || std::is_same_v<T, Reciprocal>) {
          return chosen_engine(p, i, hw);
        } else {
          // Fixed by the ISA (engine_of says which): tensor_reduce, so the row max and sums, is
          // Vector-only (ISA-OLD; the profile counters agree: step 0's extra Vector pass is the
          // row sum); activation Scalar; affine_select and iota GpSimd; matmul Tensor; a
          // transpose names its engine (nc_transpose_engine for the engine-less call).
          return *engine_of(ins);
        }
      },
      ins);
}

Engine nc_transpose_engine(const Expr& rows, const Expr& cols) {
  // ISA-OLD nc_transpose: "If no engine is specified, Neuron Compiler will automatically select
  // an engine based on the input shape" (Vector up to 32x32); PERF: transposes "are most
  // commonly lowered down to Tensor Engine".
  const auto fits = [&](const Expr& e) {
    return e.is_const() && e.const_value() <= kVectorTransposeMax;
  };
  return fits(rows) && fits(cols) ? Engine::Vector : Engine::Tensor;
}

std::vector<int64_t> compiler_buffers(const Program& p) {
  // ALLOC (legacy direct-allocation guide): the compiler "uses a heuristic-driven allocator to
  // decide how many physical tiles are allocated to each tensor ... to achieve instruction
  // parallelism across different engines"; with one tile "the different loop iterations will end
  // up completely serialized", and the guide's first improvement is double buffering. LANG-OLD
  // affine_range: iterations "could be parallelized/pipelined". No source gives the heuristic's
  // count, so the model takes the double buffering the guide describes. A kernel that declares a
  // count or a placement (direct allocation) keeps it: the allocator does not touch those.
  std::vector<LoopKind> scope_kind(p.num_scopes, LoopKind::sequential);
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* l = std::get_if<Loop>(&s.node)) scope_kind.at(l->scope) = l->kind;
  });
  std::vector<int64_t> out(p.tensors.size(), 1);
  for (const Tensor& t : p.tensors) {
    if (!t.on_chip()) continue;
    out[t.id] = t.bufs;
    const bool auto_allocated = t.bufs == 1 && !t.placement;
    if (auto_allocated && t.scope != 0 && scope_kind.at(t.scope) == LoopKind::affine) {
      out[t.id] = kAutoBuffers;
    }
  }
  return out;
}

bool reorders_across_iterations(Engine e) {
  // Compute engines: each has its own instruction stream that the compiler orders ("instruction
  // scheduling", COMPILER; affine_range iterations "could be parallelized/pipelined on different
  // compute engines", LANG-OLD), so an instruction of a later iteration may run while an earlier
  // one waits. DMA queues execute their transfers in order (DMA: "DMA transfers within a queue on
  // the same DMA engine are executed in order").
  return e != Engine::Dma;
}

}  // namespace compiler
}  // namespace ncv
