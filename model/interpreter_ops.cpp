// Per-instruction instance rules (shapes, partitions, PSUM banks, generation rules) and
// execution. Order for every instruction: resolve operands, check rules, check that every read
// byte is initialized and owned, compute (value runs), mark written bytes, record the trace.
#include <algorithm>
#include <cstring>

#include "model/interpreter_impl.h"

namespace ncv::interp {

namespace {

std::string shape_str(const Resolved& r) {
  return "[" + std::to_string(r.view.rows) + ", " + std::to_string(r.view.free_elems()) + "]";
}

int64_t max_abs_affine(int64_t offset, int64_t cm, const Resolved& dst,
                       const std::vector<int64_t>& steps) {
  auto add_abs = [](int64_t acc, int64_t coef, int64_t extent) {
    long double v = static_cast<long double>(coef < 0 ? -coef : coef) * (extent - 1);
    long double s = static_cast<long double>(acc) + v;
    return s > 9.0e18L ? INT64_MAX : static_cast<int64_t>(s);
  };
  int64_t m = offset < 0 ? (offset == INT64_MIN ? INT64_MAX : -offset) : offset;
  m = add_abs(m, cm, dst.view.rows);
  for (size_t k = 0; k < steps.size() && static_cast<int>(k) < dst.view.free_rank; ++k) {
    m = add_abs(m, steps[k], dst.view.sizes[k]);
  }
  return m;
}

// Element-by-element copy between views of equal element count but different row structure
// (DMA reshapes), pairing elements by their row-major flat index.
// Element k of src (row-major over its view) to element k of dst. Every source element is read
// before any is written (semantics.h: an instruction reads all its inputs first), so views of one
// tensor that overlap copy what the source held, not what this copy already wrote.
void flat_copy(const View& dst, const View& src) {
  const int64_t dfree = dst.free_elems(), sfree = src.free_elems();
  const int64_t n = dst.rows * dfree;
  const size_t ss = dtype_size(src.dtype);
  std::vector<uint8_t> staged(static_cast<size_t>(n) * ss);
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(staged.data() + static_cast<size_t>(k) * ss, src.at(k / sfree, k % sfree), ss);
  }
  const size_t ds = dtype_size(dst.dtype);
  for (int64_t k = 0; k < n; ++k) {
    uint8_t* d = dst.at(k / dfree, k % dfree);
    const uint8_t* s = staged.data() + static_cast<size_t>(k) * ss;
    if (dst.dtype == src.dtype) {
      std::memcpy(d, s, ds);
    } else {
      store_bits(dst.dtype, d,
                 encode_from_float(dst.dtype, decode_to_float(src.dtype, load_bits(src.dtype, s))));
    }
  }
}

}  // namespace

void Interp::execute(int core, const InstrStmt& s) {
  current_ = &s;
  current_core_ = core;
  std::visit([&](const auto& i) { exec(core, i); }, s.ins);
  result_.instances++;
}

Resolved Interp::compute_operand(int core, const Access& a, const char* role, bool is_read,
                                 bool carried) {
  Resolved r = resolve(core, a, role);
  if (r.memory == Memory::HBM) {
    fail(CheckKind::engine_rule,
         std::string(role) + " '" + r.tensor->name + "' is in HBM; compute engines read SBUF/PSUM");
  }
  check_partition_rule(r, role);
  check_free_limit(r, role);
  if (is_read) check_read(r, role, carried);
  return r;
}

void Interp::same_shape(const Resolved& a, const Resolved& b, const char* what) {
  if (a.view.rows != b.view.rows || a.view.free_elems() != b.view.free_elems()) {
    fail(CheckKind::shape_rule, std::string(what) + ": '" + a.tensor->name + "' is " +
                                    shape_str(a) + " but '" + b.tensor->name + "' is " +
                                    shape_str(b) +
                                    " (partitions x elements per partition must match)");
  }
}

void Interp::column_shape(const Resolved& col, int64_t rows, const char* what) {
  if (col.view.rows != rows || col.view.free_elems() != 1) {
    fail(CheckKind::shape_rule, std::string(what) + " '" + col.tensor->name + "' is " +
                                    shape_str(col) + "; it must be a [" + std::to_string(rows) +
                                    ", 1] per-partition column");
  }
}

void Interp::record(int core, Engine engine, const std::vector<const Resolved*>& reads,
                    const std::vector<const Resolved*>& writes, int64_t partitions,
                    int64_t free_elems, int64_t aux, uint64_t bytes, DType in, DType out,
                    int queue) {
  if (!opts_.record_trace) return;
  TraceEvent ev;
  ev.instruction = current_->id;
  ev.core = static_cast<uint16_t>(core);
  ev.engine = engine;
  ev.op = static_cast<uint8_t>(current_->ins.index());
  ev.queue = static_cast<uint8_t>(queue);
  ev.partitions = static_cast<uint16_t>(std::min<int64_t>(partitions, 65535));
  ev.free_elems = free_elems;
  ev.aux = aux;
  ev.bytes = bytes;
  ev.in_dtype = in;
  ev.out_dtype = out;
  ev.region_begin = static_cast<uint32_t>(result_.trace.regions.size());
  auto add = [&](const Resolved* r) {
    Region g;
    g.memory = r->memory;
    g.core = static_cast<uint16_t>(r->core);
    g.tensor = r->id;
    if (r->tensor->on_chip()) {
      g.partition_begin = static_cast<uint16_t>(r->partition_begin);
      g.partition_end = static_cast<uint16_t>(r->partition_begin + r->view.rows);
    } else {
      g.partition_begin = 0;
      g.partition_end = 1;
    }
    g.byte_begin = static_cast<uint64_t>(r->byte_begin);
    g.byte_end = static_cast<uint64_t>(r->byte_end);
    result_.trace.regions.push_back(g);
  };
  for (const Resolved* r : reads) add(r);
  for (const Resolved* r : writes) add(r);
  ev.num_reads = static_cast<uint8_t>(reads.size());
  ev.num_writes = static_cast<uint8_t>(writes.size());
  result_.trace.events.push_back(ev);
}

void Interp::exec(int core, const DmaCopy& i) {
  Resolved src = resolve(core, i.src, "source");
  Resolved dst = resolve(core, i.dst, "destination");
  int64_t n_src = src.view.rows * src.view.free_elems();
  int64_t n_dst = dst.view.rows * dst.view.free_elems();
  if (n_src != n_dst) {
    fail(CheckKind::shape_rule, "dma_copy moves " + std::to_string(n_src) + " elements from '" +
                                    src.tensor->name + "' into " + std::to_string(n_dst) +
                                    " elements of '" + dst.tensor->name +
                                    "'; element counts must match");
  }
  check_read(src, "source");
  if (opts_.compute_values) {
    if (src.view.rows == dst.view.rows) {
      exec_copy(opts_.mode, dst.view, src.view);
    } else {
      flat_copy(dst.view, src.view);
    }
  }
  mark_written(dst);
  // Partitions: those of the on-chip side, which decide how many DMA engines share the transfer
  // (an HBM view's first dim is arbitrary, e.g. a batch dim of size 1).
  const Resolved& chip = dst.tensor->on_chip() || !src.tensor->on_chip() ? dst : src;
  record(core, Engine::Dma, {&src}, {&dst}, chip.view.rows, chip.view.free_elems(),
         std::min(src.contiguous_bytes, dst.contiguous_bytes),
         static_cast<uint64_t>(n_dst) * dtype_size(dst.view.dtype), src.view.dtype, dst.view.dtype,
         i.queue);
}

void Interp::exec(int core, const Matmul& i) {
  Resolved st = compute_operand(core, i.stationary, "stationary", true);
  Resolved mv = compute_operand(core, i.moving, "moving", true);
  Resolved dst = compute_operand(core, i.dst, "matmul destination", i.accumulate,
                                 /*carried=*/false);  // PSUM += across iterations is allowed
  int64_t K = st.view.rows, M = st.view.free_elems(), N = mv.view.free_elems();
  if (mv.view.rows != K) {
    fail(CheckKind::shape_rule, "matmul contracts over partitions: stationary has " +
                                    std::to_string(K) + ", moving has " +
                                    std::to_string(mv.view.rows));
  }
  // facts §2 Tensor Engine: K <= 128, M (stationary free) <= 128, N (moving free) <= 512.
  if (K > hw_.matmul_max_k || M > hw_.matmul_max_m || N > hw_.matmul_max_n) {
    fail(CheckKind::shape_rule,
         "matmul K=" + std::to_string(K) + ", M=" + std::to_string(M) + ", N=" + std::to_string(N) +
             " exceeds " + hw_.name + "'s limits K<=" + std::to_string(hw_.matmul_max_k) + ", M<=" +
             std::to_string(hw_.matmul_max_m) + ", N<=" + std::to_string(hw_.matmul_max_n));
  }
  if (dst.view.rows != M || dst.view.free_elems() != N) {
    fail(CheckKind::shape_rule, "matmul of [K=" + std::to_string(K) + ", M=" + std::to_string(M) +
                                    "] x [K, N=" + std::to_string(N) + "] writes [M, N] but '" +
                                    dst.tensor->name + "' is " + shape_str(dst));
  }
  if (hw_.matmul_max_n <= 512) check_psum_bank(dst, "matmul destination");
  if (dst.view.dtype == DType::bf16 && !hw_.psum_bf16_matmul_dst) {
    fail(CheckKind::engine_rule,
         "matmul into bf16 PSUM needs trn3; " + hw_.name + " accumulates to fp32 only");
  }
  if (opts_.compute_values) exec_matmul(opts_.mode, dst.view, st.view, mv.view, i.accumulate);
  mark_written(dst);
  std::vector<const Resolved*> reads = {&st, &mv};
  if (i.accumulate) reads.push_back(&dst);
  record(core, Engine::Tensor, reads, {&dst}, K, N, M, 0, st.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const Transpose& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  int64_t P = src.view.rows, F = src.view.free_elems();
  int64_t lim = i.engine == Engine::Tensor ? 128 : hw_.vector_transpose_max;
  if (P > lim || F > lim) {
    fail(CheckKind::shape_rule, std::string(engine_name(i.engine)) + " transpose of [" +
                                    std::to_string(P) + ", " + std::to_string(F) +
                                    "] exceeds its " + std::to_string(lim) + "x" +
                                    std::to_string(lim) + " limit");
  }
  if (dst.view.rows != F || dst.view.free_elems() != P) {
    fail(CheckKind::shape_rule, "transpose of " + shape_str(src) + " writes [" + std::to_string(F) +
                                    ", " + std::to_string(P) + "] but '" + dst.tensor->name +
                                    "' is " + shape_str(dst));
  }
  if (i.engine == Engine::Tensor) check_psum_bank(dst, "transpose destination");
  if (opts_.compute_values) {
    if (i.engine == Engine::Tensor) {
      exec_transpose_tensor(opts_.mode, dst.view, src.view);
    } else {
      exec_transpose_vector(opts_.mode, dst.view, src.view);
    }
  }
  mark_written(dst);
  record(core, i.engine, {&src}, {&dst}, P, F, P, 0, src.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const Activation& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  std::vector<Resolved> cols;
  cols.reserve(3);
  ScalarArg scale = 1.0f;
  std::optional<ScalarArg> bias;
  auto operand = [&](const Operand& o, const char* role) -> ScalarArg {
    if (auto* imm = std::get_if<Imm>(&o)) return imm->value;
    cols.push_back(compute_operand(core, std::get<Access>(o), role, true));
    column_shape(cols.back(), src.view.rows, role);
    return cols.back().view;
  };
  scale = operand(i.scale, "scale");
  if (i.bias) bias = operand(*i.bias, "bias");
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "activation");
  std::optional<Resolved> rr;
  if (i.reduce_res) {
    rr = compute_operand(core, *i.reduce_res, "reduce_res", false);
    column_shape(*rr, src.view.rows, "reduce_res");
  }
  if (opts_.compute_values) {
    float* regs = cores_[core].act_regs.data() + src.partition_begin;
    std::optional<View> rv;
    if (rr) rv = rr->view;
    exec_activation(opts_.mode, dst.view, src.view, i.func, scale, bias, i.reduce_cmd, regs, rv);
  }
  mark_written(dst);
  if (rr) mark_written(*rr);
  std::vector<const Resolved*> reads = {&src};
  for (const Resolved& c : cols) reads.push_back(&c);
  std::vector<const Resolved*> writes = {&dst};
  if (rr) writes.push_back(&*rr);
  record(core, Engine::Scalar, reads, writes, src.view.rows, src.view.free_elems(), rr ? 1 : 0, 0,
         src.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorReduce& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  if (i.axes > src.view.free_rank) {
    fail(CheckKind::shape_rule, "tensor_reduce over " + std::to_string(i.axes) +
                                    " axes of a view with " + std::to_string(src.view.free_rank) +
                                    " free dims");
  }
  int64_t kept = 1;
  for (int d = 0; d < src.view.free_rank - i.axes; ++d) kept *= src.view.sizes[d];
  if (dst.view.rows != src.view.rows || dst.view.free_elems() != kept) {
    fail(CheckKind::shape_rule, "tensor_reduce of " + shape_str(src) + " over " +
                                    std::to_string(i.axes) + " axes writes [" +
                                    std::to_string(src.view.rows) + ", " + std::to_string(kept) +
                                    "] but '" + dst.tensor->name + "' is " + shape_str(dst));
  }
  if (opts_.compute_values)
    exec_tensor_reduce(opts_.mode, dst.view, src.view, i.op, i.axes, i.negate);
  mark_written(dst);
  record(core, Engine::Vector, {&src}, {&dst}, src.view.rows, src.view.free_elems(), 0, 0,
         src.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorScalar& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  std::vector<Resolved> cols;
  cols.reserve(2);
  auto operand = [&](const Operand& o, const char* role) -> ScalarArg {
    if (auto* imm = std::get_if<Imm>(&o)) return imm->value;
    cols.push_back(compute_operand(core, std::get<Access>(o), role, true));
    column_shape(cols.back(), src.view.rows, role);
    return cols.back().view;
  };
  ScalarArg a0 = operand(i.operand0, "operand0");
  ScalarArg a1 = i.op1 ? operand(i.operand1, "operand1") : ScalarArg(0.0f);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "tensor_scalar");
  if (opts_.compute_values) {
    exec_tensor_scalar(opts_.mode, dst.view, src.view, i.op0, a0, i.reverse0, i.op1, a1,
                       i.reverse1);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&src};
  for (const Resolved& c : cols) reads.push_back(&c);
  record(core, i.engine, reads, {&dst}, src.view.rows, src.view.free_elems(), 0, 0, src.view.dtype,
         dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorTensor& i) {
  Resolved a = compute_operand(core, i.src0, "src0", true);
  Resolved b = compute_operand(core, i.src1, "src1", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(a, b, "tensor_tensor inputs");
  same_shape(dst, a, "tensor_tensor");
  if (opts_.compute_values) exec_tensor_tensor(opts_.mode, dst.view, a.view, b.view, i.op);
  mark_written(dst);
  record(core, i.engine, {&a, &b}, {&dst}, a.view.rows, a.view.free_elems(), 0, 0, a.view.dtype,
         dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorScalarReduce& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  std::optional<Resolved> col;
  ScalarArg a0 = 0.0f;
  if (auto* imm = std::get_if<Imm>(&i.operand0)) {
    a0 = imm->value;
  } else {
    col = compute_operand(core, std::get<Access>(i.operand0), "operand0", true);
    column_shape(*col, src.view.rows, "operand0");
    a0 = col->view;
  }
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  Resolved rr = compute_operand(core, i.reduce_res, "reduce_res", false);
  same_shape(dst, src, "tensor_scalar_reduce");
  column_shape(rr, src.view.rows, "reduce_res");
  if (opts_.compute_values) {
    exec_tensor_scalar_reduce(opts_.mode, dst.view, src.view, i.op0, a0, i.reverse0, i.reduce_op,
                              rr.view);
  }
  mark_written(dst);
  mark_written(rr);
  std::vector<const Resolved*> reads = {&src};
  if (col) reads.push_back(&*col);
  record(core, Engine::Vector, reads, {&dst, &rr}, src.view.rows, src.view.free_elems(), 1, 0,
         src.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorCopy& i) {
  if (i.engine == Engine::Scalar && !hw_.scalar_tensor_copy) {
    fail(CheckKind::engine_rule, "tensor_copy on the scalar engine needs trn2 or later (" +
                                     hw_.name + ": use activation copy)");
  }
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "tensor_copy");
  if (opts_.compute_values) exec_copy(opts_.mode, dst.view, src.view);
  mark_written(dst);
  record(core, i.engine, {&src}, {&dst}, src.view.rows, src.view.free_elems(), 0, 0, src.view.dtype,
         dst.view.dtype, 0);
}

void Interp::exec(int core, const TensorCopyPredicated& i) {
  Resolved pred = compute_operand(core, i.predicate, "predicate", true);
  std::optional<Resolved> src;
  if (auto* a = std::get_if<Access>(&i.src)) src = compute_operand(core, *a, "source", true);
  // Unselected elements keep their old value, so the destination is read as well.
  Resolved dst = compute_operand(core, i.dst, "destination", true);
  same_shape(dst, pred, "tensor_copy_predicated predicate");
  if (src) same_shape(dst, *src, "tensor_copy_predicated");
  if (opts_.compute_values) {
    std::variant<float, View> s = 0.0f;
    if (src) {
      s = src->view;
    } else {
      s = std::get<Imm>(i.src).value;
    }
    exec_copy_predicated(opts_.mode, dst.view, s, pred.view, i.reverse_predicate);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&pred, &dst};
  if (src) reads.push_back(&*src);
  record(core, Engine::Vector, reads, {&dst}, dst.view.rows, dst.view.free_elems(), 0, 0,
         dst.view.dtype, dst.view.dtype, 0);
}

int64_t Interp::affine_pattern_offset(int core, const Expr& offset_expr, int64_t channel_multiplier,
                                      const std::vector<int64_t>& steps, const Resolved& dst,
                                      const char* op) {
  int64_t offset = eval(offset_expr, cores_[core].env);
  if (static_cast<int>(steps.size()) != dst.view.free_rank) {
    fail(CheckKind::shape_rule, std::string(op) + " has " + std::to_string(steps.size()) +
                                    " steps for a view with " + std::to_string(dst.view.free_rank) +
                                    " free dims");
  }
  // facts §3: the pattern value is computed in int32.
  if (max_abs_affine(offset, channel_multiplier, dst, steps) > INT32_MAX) {
    fail(CheckKind::shape_rule, std::string(op) + " pattern values overflow int32");
  }
  return offset;
}

void Interp::exec(int core, const AffineSelect& i) {
  Resolved on_true = compute_operand(core, i.on_true, "on_true", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, on_true, "affine_select");
  int64_t offset =
      affine_pattern_offset(core, i.offset, i.channel_multiplier, i.steps, dst, "affine_select");
  if (opts_.compute_values) {
    exec_affine_select(opts_.mode, dst.view, on_true.view, offset, i.channel_multiplier,
                       i.steps.data(), i.cmp, i.on_false.value);
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {&on_true}, {&dst}, dst.view.rows, dst.view.free_elems(), 0, 0,
         on_true.view.dtype, dst.view.dtype, 0);
}

void Interp::exec(int core, const Iota& i) {
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  int64_t offset =
      affine_pattern_offset(core, i.offset, i.channel_multiplier, i.steps, dst, "iota");
  if (opts_.compute_values) {
    exec_iota(opts_.mode, dst.view, offset, i.channel_multiplier, i.steps.data());
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {}, {&dst}, dst.view.rows, dst.view.free_elems(), 0, 0, DType::int32,
         dst.view.dtype, 0);
}

void Interp::exec(int core, const Memset& i) {
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  if (opts_.compute_values) exec_memset(opts_.mode, dst.view, i.value.value);
  mark_written(dst);
  record(core, i.engine, {}, {&dst}, dst.view.rows, dst.view.free_elems(), 0, 0, dst.view.dtype,
         dst.view.dtype, 0);
}

void Interp::exec(int core, const Reciprocal& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "reciprocal");
  if (opts_.compute_values) exec_reciprocal(opts_.mode, dst.view, src.view);
  mark_written(dst);
  record(core, i.engine, {&src}, {&dst}, src.view.rows, src.view.free_elems(), 0, 0, src.view.dtype,
         dst.view.dtype, 0);
}

}  // namespace ncv::interp
