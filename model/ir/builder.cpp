#include "model/ir/builder.h"

#include <map>

namespace ncv {
inline namespace ir {

Access transposed(Access a) {
  if (a.rank() != 2) throw BuildError("transposed(): needs a 2-D view");
  if (a.perm.empty()) a.perm = {0, 1};
  std::swap(a.perm[0], a.perm[1]);
  if (a.perm == std::vector<int>{0, 1}) a.perm.clear();
  return a;
}

Access broadcast(Access a, int dim, Expr size) {
  if (dim < 0 || static_cast<size_t>(dim) >= a.rank()) throw BuildError("broadcast(): bad dim");
  a.dims[dim].size = size;
  a.dims[dim].step = 0;
  return a;
}

Access on_core(Access a, Expr core) {
  a.core = core;
  return a;
}

Access indirect(Access a, int dim, Access offsets, int64_t lo, int64_t hi) {
  a.indirect = Indirect{std::make_shared<const Access>(std::move(offsets)), dim, lo, hi};
  return a;
}

Access TensorRef::operator()() const {
  return (*this)(std::vector<Slice>(shape_.size(), all()));
}

Access TensorRef::operator()(std::initializer_list<Slice> slices) const {
  return (*this)(std::vector<Slice>(slices));
}

Access TensorRef::operator()(const std::vector<Slice>& slices) const {
  if (slices.size() != shape_.size()) {
    throw BuildError("access to a rank-" + std::to_string(shape_.size()) + " tensor with " +
                     std::to_string(slices.size()) + " slices");
  }
  Access a;
  a.tensor = id_;
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (s.start) {
      a.dims.push_back(AccessDim{*s.start, s.size, s.step});
    } else {
      a.dims.push_back(AccessDim{Expr(0), shape_[i], 1});
    }
  }
  return a;
}

Builder::Builder(std::string kernel_name) {
  prog_.name = std::move(kernel_name);
}

Expr Builder::param(const std::string& name, int64_t lo, int64_t hi, int64_t multiple_of) {
  prog_.params.push_back(Param{name, lo, hi, multiple_of});
  return Expr::var(name);
}

void Builder::require(RelationKind kind, Expr lhs, Expr rhs) {
  prog_.relations.push_back(Relation{kind, lhs, rhs});
}

void Builder::grid(Expr num_programs) {
  prog_.grid = num_programs;
}

TensorRef Builder::add_tensor(const std::string& name, TensorKind kind, Memory mem, DType dt,
                              std::vector<Expr> shape, BufferOptions opts,
                              std::optional<ValueRange> range) {
  Tensor t;
  t.id = static_cast<TensorId>(prog_.tensors.size());
  t.name = name;
  t.kind = kind;
  t.memory = mem;
  t.dtype = dt;
  t.shape = shape;
  t.scope = open_loops_.empty() ? 0 : open_loops_.back()->scope;
  t.bufs = opts.bufs;
  t.placement = opts.placement;
  t.value_range = range;
  prog_.tensors.push_back(t);
  if (kind == TensorKind::Buffer) current_body().push_back(Stmt{DeclStmt{t.id}});
  return TensorRef(t.id, std::move(shape));
}

TensorRef Builder::input(const std::string& name, DType dt, std::vector<Expr> shape,
                         std::optional<ValueRange> range) {
  return add_tensor(name, TensorKind::Input, Memory::HBM, dt, std::move(shape), {}, range);
}
TensorRef Builder::output(const std::string& name, DType dt, std::vector<Expr> shape) {
  return add_tensor(name, TensorKind::Output, Memory::HBM, dt, std::move(shape), {}, {});
}
TensorRef Builder::scratch(const std::string& name, DType dt, std::vector<Expr> shape) {
  return add_tensor(name, TensorKind::Scratch, Memory::HBM, dt, std::move(shape), {}, {});
}
void Builder::interface_shape(const TensorRef& t, std::vector<Expr> shape) {
  prog_.tensors.at(t.id()).interface_shape = std::move(shape);
}
TensorRef Builder::sbuf(const std::string& name, DType dt, std::vector<Expr> shape,
                        BufferOptions opts) {
  return add_tensor(name, TensorKind::Buffer, Memory::SBUF, dt, std::move(shape), opts, {});
}
TensorRef Builder::psum(const std::string& name, DType dt, std::vector<Expr> shape,
                        BufferOptions opts) {
  return add_tensor(name, TensorKind::Buffer, Memory::PSUM, dt, std::move(shape), opts, {});
}

std::vector<Stmt>& Builder::current_body() {
  return open_loops_.empty() ? prog_.body : open_loops_.back()->body;
}

Expr Builder::begin_loop(const std::string& var, Expr start, Expr stop, int64_t step,
                         LoopKind kind) {
  Loop l;
  l.var = var;
  l.start = start;
  l.stop = stop;
  l.step = step;
  l.kind = kind;
  l.scope = prog_.num_scopes++;
  auto& body = current_body();
  body.push_back(Stmt{std::move(l)});
  open_loops_.push_back(&std::get<Loop>(body.back().node));
  return Expr::var(var);
}

void Builder::end_loop() {
  if (open_loops_.empty()) throw BuildError("end_loop() without an open loop");
  open_loops_.pop_back();
}

void Builder::affine_range(const std::string& var, Expr stop,
                           const std::function<void(Expr)>& body) {
  affine_range(var, Expr(0), stop, 1, body);
}
void Builder::affine_range(const std::string& var, Expr start, Expr stop, int64_t step,
                           const std::function<void(Expr)>& body) {
  body(begin_loop(var, start, stop, step, LoopKind::affine));
  end_loop();
}
void Builder::sequential_range(const std::string& var, Expr stop,
                               const std::function<void(Expr)>& body) {
  sequential_range(var, Expr(0), stop, 1, body);
}
void Builder::sequential_range(const std::string& var, Expr start, Expr stop, int64_t step,
                               const std::function<void(Expr)>& body) {
  body(begin_loop(var, start, stop, step, LoopKind::sequential));
  end_loop();
}

void Builder::emit(Instruction ins) {
  current_body().push_back(Stmt{InstrStmt{prog_.num_instructions++, std::move(ins)}});
}

void Builder::dma_copy(Access dst, Access src, int queue) {
  emit(DmaCopy{dst, src, queue});
}
void Builder::matmul(Access dst, Access stationary, Access moving, bool accumulate) {
  emit(Matmul{dst, stationary, moving, accumulate});
}
void Builder::transpose(Access dst, Access src, Engine engine) {
  emit(Transpose{dst, src, engine});
}
void Builder::activation(Access dst, Access src, ActivationArgs a) {
  emit(Activation{dst, src, a.func, a.scale, a.bias, a.reduce_cmd, a.reduce_res});
}
void Builder::tensor_reduce(Access dst, Access src, AluOp op, int axes, bool negate) {
  emit(TensorReduce{dst, src, op, axes, negate});
}
void Builder::tensor_scalar(Access dst, Access src, AluOp op0, Operand operand0, bool reverse0,
                            std::optional<AluOp> op1, Operand operand1, bool reverse1,
                            EngineChoice engine) {
  emit(TensorScalar{dst, src, op0, operand0, reverse0, op1, operand1, reverse1, engine});
}
void Builder::tensor_tensor(Access dst, Access src0, Access src1, AluOp op, EngineChoice engine) {
  emit(TensorTensor{dst, src0, src1, op, engine});
}
void Builder::tensor_scalar_reduce(Access dst, Access src, AluOp op0, Operand operand0,
                                   AluOp reduce_op, Access reduce_res, bool reverse0) {
  emit(TensorScalarReduce{dst, src, op0, operand0, reverse0, reduce_op, reduce_res});
}
void Builder::tensor_copy(Access dst, Access src, EngineChoice engine) {
  emit(TensorCopy{dst, src, engine});
}
void Builder::tensor_copy_predicated(Access dst, Operand src, Access predicate,
                                     bool reverse_predicate) {
  emit(TensorCopyPredicated{dst, src, predicate, reverse_predicate});
}
void Builder::affine_select(Access dst, Access on_true, Expr offset, int64_t channel_multiplier,
                            std::vector<int64_t> steps, CmpOp cmp, float on_false) {
  emit(
      AffineSelect{dst, on_true, offset, channel_multiplier, std::move(steps), cmp, Imm{on_false}});
}
void Builder::iota(Access dst, Expr offset, int64_t channel_multiplier,
                   std::vector<int64_t> steps) {
  emit(Iota{dst, offset, channel_multiplier, std::move(steps)});
}
void Builder::memset(Access dst, float value, EngineChoice engine) {
  emit(Memset{dst, Imm{value}, engine});
}
void Builder::reciprocal(Access dst, Access src, EngineChoice engine) {
  emit(Reciprocal{dst, src, engine});
}

Program Builder::finish() {
  if (finished_) throw BuildError("Builder::finish() called twice");
  if (!open_loops_.empty()) throw BuildError("Builder::finish(): a loop is still open");
  finished_ = true;
  canonicalize_ids(prog_);
  validate_program(prog_);
  return std::move(prog_);
}

namespace {

struct IdMaps {
  std::vector<TensorId> tensor;  // old -> new
  std::vector<ScopeId> scope;    // old -> new
};

void remap_access(Access& a, const IdMaps& m) {
  if (a.tensor < m.tensor.size()) a.tensor = m.tensor[a.tensor];
  if (a.indirect && a.indirect->offsets) {
    Access off = *a.indirect->offsets;
    remap_access(off, m);
    a.indirect->offsets = std::make_shared<const Access>(std::move(off));
  }
}

void remap_operand(Operand& o, const IdMaps& m) {
  if (auto* a = std::get_if<Access>(&o)) remap_access(*a, m);
}

void remap_instruction(Instruction& ins, const IdMaps& m) {
  std::visit(
      [&](auto& i) {
        using T = std::decay_t<decltype(i)>;
        remap_access(i.dst, m);
        if constexpr (std::is_same_v<T, DmaCopy> || std::is_same_v<T, Transpose> ||
                      std::is_same_v<T, TensorReduce> || std::is_same_v<T, TensorCopy> ||
                      std::is_same_v<T, Reciprocal> || std::is_same_v<T, Max8> ||
                      std::is_same_v<T, BnStats> || std::is_same_v<T, BnAggr>) {
          remap_access(i.src, m);
        } else if constexpr (std::is_same_v<T, Matmul>) {
          remap_access(i.stationary, m);
          remap_access(i.moving, m);
        } else if constexpr (std::is_same_v<T, Activation>) {
          remap_access(i.src, m);
          remap_operand(i.scale, m);
          if (i.bias) remap_operand(*i.bias, m);
          if (i.reduce_res) remap_access(*i.reduce_res, m);
        } else if constexpr (std::is_same_v<T, TensorScalar>) {
          remap_access(i.src, m);
          remap_operand(i.operand0, m);
          remap_operand(i.operand1, m);
        } else if constexpr (std::is_same_v<T, TensorTensor>) {
          remap_access(i.src0, m);
          remap_access(i.src1, m);
        } else if constexpr (std::is_same_v<T, TensorScalarReduce>) {
          remap_access(i.src, m);
          remap_operand(i.operand0, m);
          remap_access(i.reduce_res, m);
        } else if constexpr (std::is_same_v<T, TensorCopyPredicated>) {
          remap_operand(i.src, m);
          remap_access(i.predicate, m);
        } else if constexpr (std::is_same_v<T, AffineSelect>) {
          remap_access(i.on_true, m);
        } else if constexpr (std::is_same_v<T, TensorTensorScan>) {
          remap_access(i.src0, m);
          remap_access(i.src1, m);
          remap_operand(i.initial, m);
        } else if constexpr (std::is_same_v<T, TensorScalarCumulative>) {
          remap_access(i.src, m);
          remap_operand(i.imm0, m);
          if (i.imm1) remap_operand(*i.imm1, m);
        } else if constexpr (std::is_same_v<T, FindIndex8>) {
          remap_access(i.data, m);
          remap_access(i.vals, m);
        } else if constexpr (std::is_same_v<T, MatchReplace8>) {
          remap_access(i.data, m);
          remap_access(i.vals, m);
          if (i.dst_idx) remap_access(*i.dst_idx, m);
        } else if constexpr (std::is_same_v<T, Dropout>) {
          remap_access(i.data, m);
          remap_operand(i.prob, m);
        } else if constexpr (std::is_same_v<T, LocalGather>) {
          remap_access(i.src, m);
          remap_access(i.index, m);
        } else if constexpr (std::is_same_v<T, StreamShuffle>) {
          remap_access(i.src, m);
        } else if constexpr (std::is_same_v<T, GatherFlattened>) {
          remap_access(i.data, m);
          remap_access(i.indices, m);
        } else if constexpr (std::is_same_v<T, TensorPartitionReduce> ||
                             std::is_same_v<T, SequenceBounds>) {
          remap_access(i.src, m);
        } else if constexpr (std::is_same_v<T, SelectReduce>) {
          remap_access(i.predicate, m);
          remap_access(i.on_true, m);
          remap_operand(i.on_false, m);
          if (i.reduce_res) remap_access(*i.reduce_res, m);
        } else if constexpr (std::is_same_v<T, MatmulMx>) {
          remap_access(i.stationary, m);
          remap_access(i.moving, m);
          remap_access(i.stationary_scale, m);
          remap_access(i.moving_scale, m);
        } else if constexpr (std::is_same_v<T, QuantizeMx>) {
          remap_access(i.src, m);
          remap_access(i.dst_scale, m);
        } else if constexpr (std::is_same_v<T, RangeSelect>) {
          remap_access(i.on_true, m);
          remap_access(i.bound0, m);
          remap_access(i.bound1, m);
          if (i.reduce_res) remap_access(*i.reduce_res, m);
        } else if constexpr (std::is_same_v<T, Iota> || std::is_same_v<T, Memset> ||
                             std::is_same_v<T, Rand>) {
          // dst only
        } else {
          static_assert(kDependentFalse<T>, "remap every access of the new instruction");
        }
      },
      ins);
}

void collect_order(const std::vector<Stmt>& body, std::vector<TensorId>& buffers,
                   std::vector<ScopeId>& scopes) {
  for (const Stmt& s : body) {
    if (auto* d = std::get_if<DeclStmt>(&s.node)) buffers.push_back(d->tensor);
    if (auto* l = std::get_if<Loop>(&s.node)) {
      scopes.push_back(l->scope);
      collect_order(l->body, buffers, scopes);
    }
  }
}

void rewrite_body(std::vector<Stmt>& body, const IdMaps& m, uint32_t& next_instr) {
  for (Stmt& s : body) {
    if (auto* d = std::get_if<DeclStmt>(&s.node)) {
      if (d->tensor < m.tensor.size()) d->tensor = m.tensor[d->tensor];
    } else if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      i->id = next_instr++;
      remap_instruction(i->ins, m);
    } else if (auto* l = std::get_if<Loop>(&s.node)) {
      if (l->scope < m.scope.size()) l->scope = m.scope[l->scope];
      rewrite_body(l->body, m, next_instr);
    }
  }
}

}  // namespace

void canonicalize_ids(Program& p) {
  std::vector<TensorId> buffers;
  std::vector<ScopeId> scopes;
  collect_order(p.body, buffers, scopes);
  IdMaps m;
  ScopeId max_scope = 0;
  for (ScopeId s : scopes) max_scope = std::max(max_scope, s);
  m.scope.assign(std::max<size_t>(max_scope + 1, p.num_scopes), 0);
  for (size_t k = 0; k < scopes.size(); ++k) m.scope[scopes[k]] = static_cast<ScopeId>(k + 1);
  std::vector<TensorId> order;
  for (const Tensor& t : p.tensors) {
    if (t.kind != TensorKind::Buffer) order.push_back(t.id);
  }
  for (TensorId b : buffers) order.push_back(b);
  // Buffers without a declaration statement (hand-built programs) keep their relative order.
  std::vector<bool> seen(p.tensors.size(), false);
  for (TensorId t : order) {
    if (t < seen.size()) seen[t] = true;
  }
  for (const Tensor& t : p.tensors) {
    if (!seen[t.id]) order.push_back(t.id);
  }
  m.tensor.assign(p.tensors.size(), 0);
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[k] >= p.tensors.size()) continue;
    m.tensor[order[k]] = static_cast<TensorId>(k);
    Tensor t = p.tensors[order[k]];
    t.id = static_cast<TensorId>(k);
    if (t.scope < m.scope.size()) t.scope = m.scope[t.scope];
    tensors.push_back(std::move(t));
  }
  p.tensors = std::move(tensors);
  uint32_t next_instr = 0;
  rewrite_body(p.body, m, next_instr);
  p.num_instructions = next_instr;
  p.num_scopes = static_cast<uint32_t>(scopes.size() + 1);
}

}  // namespace ir
}  // namespace ncv
