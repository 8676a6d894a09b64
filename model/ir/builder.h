// The C++ API kernels are written in. It reads like the NKI kernel it models:
//
//   Builder b("sd_attention");
//   Expr S = b.param("seqlen", 128, 16384, 128);
//   auto q = b.input("q", DType::fp32, {S, 64});
//   b.affine_range("i", S / 128, [&](Expr i) {
//     auto q_t = b.sbuf("q_t", DType::bf16, {128, 64}, {.bufs = 2});
//     b.dma_copy(q_t(), q({ds(i * 128, 128), all()}));
//   });
//   Program p = b.finish();
//
// Nothing is unrolled: loops, shapes and indices stay symbolic. finish() canonicalises ids
// (HBM tensors first, then buffers in body order; instructions and scopes in program order) so
// that a printed and re-parsed Program is identical, and runs the static validator.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

// A slice of one tensor dimension: ds(start, size[, step]); all() is the whole dimension.
struct Slice {
  std::optional<Expr> start;  // absent: whole dimension
  Expr size;
  int64_t step = 1;
};
inline Slice ds(Expr start, Expr size, int64_t step = 1) {
  return Slice{start, size, step};
}
inline Slice all() {
  return Slice{std::nullopt, Expr(0), 1};
}
// Element i of a dimension, kept as a dimension of size 1 (an NKI block index: t[:, i, :]).
inline Slice one(Expr i) {
  return ds(i, 1);
}

// Fluent helpers on views.
Access transposed(Access a);                     // swap the two view dims of a 2-D view
Access broadcast(Access a, int dim, Expr size);  // repeat element `start` of dim `size` times
Access on_core(Access a, Expr core);             // the same buffer on another SPMD core
Access indirect(Access a, int dim, Access offsets, int64_t lo, int64_t hi);

class TensorRef {
 public:
  TensorRef() = default;
  TensorRef(TensorId id, std::vector<Expr> shape) : id_(id), shape_(std::move(shape)) {}
  TensorId id() const { return id_; }
  const std::vector<Expr>& shape() const { return shape_; }
  Access operator()() const;  // the whole tensor
  Access operator()(std::initializer_list<Slice> slices) const;
  Access operator()(const std::vector<Slice>& slices) const;

 private:
  TensorId id_ = 0;
  std::vector<Expr> shape_;
};

struct BufferOptions {
  int64_t bufs = 1;
  std::optional<Placement> placement;
};

struct ActivationArgs {
  ActFunc func = ActFunc::copy;
  Operand scale = Imm{1.0f};
  std::optional<Operand> bias;
  ReduceCmd reduce_cmd = ReduceCmd::idle;
  std::optional<Access> reduce_res;
};

// Thrown by finish() (and by the parser) when a program breaks a static rule.
// When the failing rule belongs to one instruction or one tensor, its id is attached so that the
// parser can point at the line that declared it.
struct BuildError : std::exception {
  std::string message;
  std::optional<uint32_t> instruction;
  std::optional<TensorId> tensor;
  explicit BuildError(std::string m, std::optional<uint32_t> ins = std::nullopt,
                      std::optional<TensorId> t = std::nullopt)
      : message(std::move(m)), instruction(ins), tensor(t) {}
  const char* what() const noexcept override { return message.c_str(); }
};

class Builder {
 public:
  explicit Builder(std::string kernel_name);

  Expr param(const std::string& name, int64_t lo, int64_t hi, int64_t multiple_of = 1);
  void require(RelationKind kind, Expr lhs, Expr rhs);
  void grid(Expr num_programs);
  static Expr program_id() { return Expr::var(kProgramIdParam); }

  TensorRef input(const std::string& name, DType dt, std::vector<Expr> shape,
                  std::optional<ValueRange> range = std::nullopt);
  TensorRef output(const std::string& name, DType dt, std::vector<Expr> shape);
  TensorRef scratch(const std::string& name, DType dt, std::vector<Expr> shape);
  // The kernel's own shape of input or output t, declared here with its dims refined
  // (Tensor::interface_shape).
  void interface_shape(const TensorRef& t, std::vector<Expr> shape);
  TensorRef sbuf(const std::string& name, DType dt, std::vector<Expr> shape,
                 BufferOptions opts = {});
  TensorRef psum(const std::string& name, DType dt, std::vector<Expr> shape,
                 BufferOptions opts = {});

  // Loops with a lambda body (kernels) ...
  void affine_range(const std::string& var, Expr stop, const std::function<void(Expr)>& body);
  void affine_range(const std::string& var, Expr start, Expr stop, int64_t step,
                    const std::function<void(Expr)>& body);
  void sequential_range(const std::string& var, Expr stop, const std::function<void(Expr)>& body);
  void sequential_range(const std::string& var, Expr start, Expr stop, int64_t step,
                        const std::function<void(Expr)>& body);
  // ... or explicit begin/end (the parser).
  Expr begin_loop(const std::string& var, Expr start, Expr stop, int64_t step, LoopKind kind);
  void end_loop();

  void dma_copy(Access dst, Access src, int queue = 0);
  void matmul(Access dst, Access stationary, Access moving, bool accumulate = false);
  void transpose(Access dst, Access src, Engine engine = Engine::Tensor);
  void activation(Access dst, Access src, ActivationArgs args = {});
  void tensor_reduce(Access dst, Access src, AluOp op, int axes = 1, bool negate = false);
  void tensor_scalar(Access dst, Access src, AluOp op0, Operand operand0, bool reverse0 = false,
                     std::optional<AluOp> op1 = std::nullopt, Operand operand1 = Imm{0.0f},
                     bool reverse1 = false, EngineChoice engine = std::nullopt);
  void tensor_tensor(Access dst, Access src0, Access src1, AluOp op,
                     EngineChoice engine = std::nullopt);
  void tensor_scalar_reduce(Access dst, Access src, AluOp op0, Operand operand0, AluOp reduce_op,
                            Access reduce_res, bool reverse0 = false);
  void tensor_copy(Access dst, Access src, EngineChoice engine = std::nullopt);
  void tensor_copy_predicated(Access dst, Operand src, Access predicate,
                              bool reverse_predicate = false);
  void affine_select(Access dst, Access on_true, Expr offset, int64_t channel_multiplier,
                     std::vector<int64_t> steps, CmpOp cmp, float on_false);
  void iota(Access dst, Expr offset, int64_t channel_multiplier, std::vector<int64_t> steps);
  void memset(Access dst, float value, EngineChoice engine = std::nullopt);
  void reciprocal(Access dst, Access src, EngineChoice engine = std::nullopt);
  // tensor_scalar, tensor_tensor, tensor_copy, memset and reciprocal without an engine are
  // unpinned: the compiler-choice rules (model/compiler) pick the engine.
  void emit(Instruction ins);  // any instruction, as built by hand or by the parser

  const Program& program() const { return prog_; }
  // Canonicalises, validates (throws BuildError) and returns the program. The builder is
  // spent afterwards.
  Program finish();

 private:
  TensorRef add_tensor(const std::string& name, TensorKind kind, Memory mem, DType dt,
                       std::vector<Expr> shape, BufferOptions opts,
                       std::optional<ValueRange> range);
  std::vector<Stmt>& current_body();

  Program prog_;
  std::vector<Loop*> open_loops_;  // innermost last; pointers into prog_.body's tree
  bool finished_ = false;
};

// Static validation of a whole program: names, scopes, variable use, access ranks, engine and
// memory legality, dtype legality, and the shape rules that are constant. Throws BuildError
// whose message names the kernel, the instruction (in text form) and the rule.
void validate_program(const Program& p);

// Renumbers tensors (HBM tensors in declaration order, then buffers in body order), instruction
// ids and scope ids (program order). Builder::finish and the parser both call it.
void canonicalize_ids(Program& p);

}  // namespace ir
}  // namespace ncv
