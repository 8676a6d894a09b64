// Each instruction's execution. Order for every instruction: resolve operands (with the
// operand rules, operand_rules.cpp), check the instruction's own rules, check that every read
// byte is initialized and owned, compute (value runs), mark written bytes, record the trace.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "model/compiler/compiler_choices.h"
#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

// RunResult::undefined_activation's detail: the function, its first input outside the range,
// how many of this instance's inputs are (run() adds the run's count).
std::string undefined_activation_detail(ActFunc f, float first, int64_t count) {
  char value[32];
  std::snprintf(value, sizeof value, "%.9g", static_cast<double>(first));
  return "activation function " + std::string(act_func_name(f)) + " got the input " + value +
         " (x * scale + bias), outside its documented valid range " + act_range_text(f) +
         " (ISA-NEW activation function table: outside it the hardware output is invalid), so "
         "the value it writes there is not documented; " +
         std::to_string(count) + " input(s) of this instance are outside it";
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

// Under spills (RunOptions::spills_allowed with the live peak over a memory): the bytes per
// partition this instance's on-chip operands occupy together, per tensor the largest of its
// accesses here, must fit the memory; they are resident at once while it runs, so no spill
// helps. A lower bound on what the instruction needs, so a failure here is certain.
void Interpreter::check_operands_fit(int core, const InstrStmt& s) {
  const Env& env = m_.cores[static_cast<size_t>(core)].env;
  std::map<TensorId, int64_t> bytes;
  auto add = [&](const Access* a) {
    const Tensor& t = p_.tensor(a->tensor);
    if (!t.on_chip() || a->core) return;
    int64_t free = 1;
    for (size_t d = 1; d < a->dims.size(); ++d)
      free *= std::max<int64_t>(eval(a->dims[d].size, env), 0);
    int64_t& b = bytes[a->tensor];
    b = std::max(b, free * static_cast<int64_t>(dtype_size(t.dtype)));
  };
  for (const Access* a : read_accesses(s.ins)) add(a);
  for (const Access* a : written_accesses(s.ins)) add(a);
  int64_t sbuf = 0, psum = 0;
  for (const auto& [id, b] : bytes) (p_.tensor(id).memory == Memory::SBUF ? sbuf : psum) += b;
  for (const auto& [memory, need, cap] : {std::tuple{Memory::SBUF, sbuf, sbuf_spill_capacity_},
                                          std::tuple{Memory::PSUM, psum, psum_spill_capacity_}}) {
    if (cap > 0 && need > cap) {
      fail(CheckKind::capacity, "the instruction's own " + std::string(memory_name(memory)) +
                                    " operands need " + std::to_string(need) +
                                    " bytes per partition at once; " + hw_.name + " has " +
                                    std::to_string(cap) + ": no allocation holds them");
    }
  }
}

void Interpreter::execute(int core, const InstrStmt& s) {
  current_ = &s;
  current_core_ = core;
  if (opts_.observer && opts_.compute_values) opts_.observer->instruction(s, core);
  if (sbuf_spill_capacity_ > 0 || psum_spill_capacity_ > 0) check_operands_fit(core, s);
  std::visit([&](const auto& i) { exec(core, i); }, s.ins);
  result_.instances++;
}

void Interpreter::exec(int core, const DmaCopy& i) {
  Resolved src = resolve(core, i.src, "source", i.oob_skip);
  Resolved dst = resolve(core, i.dst, "destination", i.oob_skip);
  int64_t n_src = src.view.rows * src.view.free_elems();
  int64_t n_dst = dst.view.rows * dst.view.free_elems();
  if (!dma_counts_ok(IntOps{}, n_src, n_dst)) {
    fail(Rule::dma_element_counts, "dma_copy moves " + std::to_string(n_src) + " elements from '" +
                                       src.tensor->name + "' into " + std::to_string(n_dst) +
                                       " elements of '" + dst.tensor->name +
                                       "'; element counts must match");
  }
  if ((i.oob_skip || i.dst_rmw) && !dma_rows_paired_ok(IntOps{}, src.view.rows, dst.view.rows)) {
    fail(Rule::dma_rows_paired,
         std::string(i.dst_rmw ? "dma_copy with dst_rmw" : "dma_copy with oob_skip") +
             " pairs row r of the source with row r of the destination, but '" + src.tensor->name +
             "' has " + std::to_string(src.view.rows) + " rows and '" + dst.tensor->name +
             "' has " + std::to_string(dst.view.rows));
  }
  // oob_skip: a row skipped on one side (its run-time offset leaves the tensor) is skipped on
  // both; the rest move as usual.
  if (!src.skipped.empty() || !dst.skipped.empty()) {
    std::vector<uint8_t> skipped(static_cast<size_t>(src.view.rows), 0);
    for (const Resolved* r : {&src, &dst}) {
      for (size_t k = 0; k < r->skipped.size(); ++k) skipped[k] |= r->skipped[k];
    }
    resolver_.skip_rows(src, skipped);
    resolver_.skip_rows(dst, skipped);
  }
  check_read(src, "source");
  if (i.dst_rmw) check_read(dst, "read-modify-write destination");
  if (opts_.compute_values) {
    const auto rows_of = [](const View& v, int64_t r0, int64_t r1) {
      View part = v;
      part.base = v.base + r0 * v.row_stride;
      part.rows = r1 - r0;
      if (v.row_offsets) part.row_offsets = v.row_offsets + r0;
      return part;
    };
    const auto move = [&](const View& d, const View& s) {
      if (i.dst_rmw) {
        // ISA-OLD dma_copy dst_rmw_op (add only, validate.cpp): the DMA engines read both in
        // fp32 and write the sum cast to dst's dtype, which is tensor_tensor's add. Row by row
        // in order, so that rows an indirect dst sends to one place all accumulate there (the
        // compiler serializes duplicate offsets; the order of those fp32 adds is the model's).
        for (int64_t r = 0; r < d.rows; ++r) {
          const View dr = rows_of(d, r, r + 1), sr = rows_of(s, r, r + 1);
          if (opts_.observer) opts_.observer->tensor_tensor(dr, dr, sr, *i.dst_rmw, Engine::Dma);
          // (DMA: fp32 arithmetic, never native integer, so always defined)
          (void)exec_tensor_tensor(opts_.mode, dr, dr, sr, *i.dst_rmw, Engine::Dma);
        }
      } else if (s.rows == d.rows) {
        if (opts_.observer) opts_.observer->copy(d, s);
        exec_copy(opts_.mode, d, s);
      } else {
        if (opts_.observer) opts_.observer->flat_copy(d, s);
        flat_copy(d, s);
      }
    };
    if (dst.skipped.empty()) {
      move(dst.view, src.view);
    } else {
      // Each run of transferred rows as one copy (rows are paired: dma_rows_paired).
      for (int64_t r0 = 0; r0 < dst.view.rows;) {
        if (dst.skipped[r0]) {
          ++r0;
          continue;
        }
        int64_t r1 = r0;
        while (r1 < dst.view.rows && !dst.skipped[r1]) ++r1;
        move(rows_of(dst.view, r0, r1), rows_of(src.view, r0, r1));
        r0 = r1;
      }
    }
  }
  mark_written(dst);
  // Partitions: those of the on-chip side, which decide how many DMA engines share the transfer
  // (an HBM view's first dim is arbitrary, e.g. a batch dim of size 1). Bytes: every row, skipped
  // or not (trace-only runs cannot tell them apart, and the descriptors cover every row); a
  // read-modify-write moves the destination's bytes twice, read and written back.
  const Resolved& chip = dst.tensor->on_chip() || !src.tensor->on_chip() ? dst : src;
  std::vector<const Resolved*> reads = {&src};
  if (i.dst_rmw) reads.push_back(&dst);
  const uint64_t dst_bytes = static_cast<uint64_t>(n_dst) * dtype_size(dst.view.dtype);
  record(core, Engine::Dma, reads, {&dst},
         {.partitions = chip.tensor->on_chip() ? chip.partitions : chip.view.rows,
          .free_elems = chip.view.free_elems(),
          .contiguous_bytes = std::min(src.contiguous_bytes, dst.contiguous_bytes),
          .bytes = i.dst_rmw ? 2 * dst_bytes : dst_bytes,
          .in = src.view.dtype,
          .out = dst.view.dtype,
          .queue = i.queue});
}

void Interpreter::exec(int core, const Matmul& i) {
  Resolved st = compute_operand(core, i.stationary, "stationary", true);
  Resolved mv = compute_operand(core, i.moving, "moving", true);
  Resolved dst = compute_operand(core, i.dst, "matmul destination", i.accumulate,
                                 /*carried=*/false);  // PSUM += across iterations is allowed
  int64_t K = st.view.rows, M = st.view.free_elems(), N = mv.view.free_elems();
  const IntOps o;
  if (!matmul_contraction_ok(o, K, mv.view.rows)) {
    fail(Rule::matmul_contraction, "matmul contracts over partitions: stationary has " +
                                       std::to_string(K) + ", moving has " +
                                       std::to_string(mv.view.rows));
  }
  if (!within_limit(o, K, hw_.matmul_max_k) || !within_limit(o, M, hw_.matmul_max_m) ||
      !within_limit(o, N, hw_.matmul_max_n)) {
    fail(Rule::matmul_k,
         "matmul K=" + std::to_string(K) + ", M=" + std::to_string(M) + ", N=" + std::to_string(N) +
             " exceeds " + hw_.name + "'s limits K<=" + std::to_string(hw_.matmul_max_k) + ", M<=" +
             std::to_string(hw_.matmul_max_m) + ", N<=" + std::to_string(hw_.matmul_max_n));
  }
  if (!shape_is(o, dst.view.rows, dst.view.free_elems(), M, N)) {
    fail(Rule::matmul_dst_shape, "matmul of [K=" + std::to_string(K) + ", M=" + std::to_string(M) +
                                     "] x [K, N=" + std::to_string(N) + "] writes [M, N] but '" +
                                     dst.tensor->name + "' is " + shape_str(dst));
  }
  if (matmul_dst_in_one_bank(hw_)) check_psum_bank(dst, "matmul destination");
  if (!matmul_dst_dtype_ok(dst.view.dtype, hw_)) {
    fail(Rule::matmul_bf16_psum,
         "matmul into bf16 PSUM needs trn3; " + hw_.name + " accumulates to fp32 only");
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->matmul(dst.view, st.view, mv.view, i.accumulate);
    exec_matmul(opts_.mode, dst.view, st.view, mv.view, i.accumulate);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&st, &mv};
  if (i.accumulate) reads.push_back(&dst);
  record(core, Engine::Tensor, reads, {&dst},
         {.partitions = K,
          .free_elems = N,
          .stationary_cols = M,
          .in = st.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Transpose& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  int64_t P = src.view.rows, F = src.view.free_elems();
  const int64_t lim = transpose_limit(i.engine, hw_);
  if (!transpose_size_ok(IntOps{}, P, F, lim)) {
    fail(Rule::transpose_size, std::string(engine_name(i.engine)) + " transpose of [" +
                                   std::to_string(P) + ", " + std::to_string(F) + "] exceeds its " +
                                   std::to_string(lim) + "x" + std::to_string(lim) + " limit");
  }
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), F, P)) {
    fail(Rule::transpose_dst_shape, "transpose of " + shape_str(src) + " writes [" +
                                        std::to_string(F) + ", " + std::to_string(P) + "] but '" +
                                        dst.tensor->name + "' is " + shape_str(dst));
  }
  if (i.engine == Engine::Tensor) check_psum_bank(dst, "transpose destination");
  if (opts_.compute_values) {
    // From NeuronCore-v3 on, the Tensor engine's transpose mode moves bits like the Vector
    // engine's transpose (model/hw/hw_config.h tensor_transpose_bit_exact); only v2 multiplies
    // by the identity.
    if (i.engine == Engine::Tensor && !hw_.tensor_transpose_bit_exact) {
      if (opts_.observer) opts_.observer->transpose_tensor(dst.view, src.view);
      exec_transpose_tensor(opts_.mode, dst.view, src.view);
    } else {
      if (opts_.observer) opts_.observer->transpose_vector(dst.view, src.view);
      exec_transpose_vector(opts_.mode, dst.view, src.view);
    }
  }
  mark_written(dst);
  // On the Tensor engine a transpose is a matmul with the data as the [P, F] stationary operand.
  record(core, i.engine, {&src}, {&dst},
         {.partitions = P,
          .free_elems = F,
          .stationary_cols = i.engine == Engine::Tensor ? P : 0,
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Activation& i) {
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
    float* regs = m_.cores[core].act_regs.data() + src.partition_begin;
    std::optional<View> rv;
    if (rr) rv = rr->view;
    if (opts_.observer) {
      opts_.observer->activation(dst.view, src.view, i.func, scale, bias, i.reduce_cmd, regs, rv);
    }
    const int64_t before = act_oor_.count;
    exec_activation(opts_.mode, dst.view, src.view, i.func, scale, bias, i.reduce_cmd, regs, rv,
                    &act_oor_);
    if (act_record_ && act_oor_.count > before && !result_.undefined_activation) {
      result_.undefined_activation =
          to_error(CheckKind::undefined_result,
                   undefined_activation_detail(i.func, act_oor_.first, act_oor_.count - before));
    }
  }
  mark_written(dst);
  if (rr) mark_written(*rr);
  std::vector<const Resolved*> reads = {&src};
  for (const Resolved& c : cols) reads.push_back(&c);
  std::vector<const Resolved*> writes = {&dst};
  if (rr) writes.push_back(&*rr);
  record(core, Engine::Scalar, reads, writes,
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .reduce_readout = rr.has_value(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorReduce& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  if (i.axes > src.view.free_rank) {
    fail(CheckKind::shape_rule, "tensor_reduce over " + std::to_string(i.axes) +
                                    " axes of a view with " + std::to_string(src.view.free_rank) +
                                    " free dims");
  }
  int64_t kept = 1;
  for (int d = 0; d < src.view.free_rank - i.axes; ++d) kept *= src.view.sizes[d];
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), src.view.rows, kept)) {
    fail(Rule::reduce_dst_shape, "tensor_reduce of " + shape_str(src) + " over " +
                                     std::to_string(i.axes) + " axes writes [" +
                                     std::to_string(src.view.rows) + ", " + std::to_string(kept) +
                                     "] but '" + dst.tensor->name + "' is " + shape_str(dst));
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->tensor_reduce(dst.view, src.view, i.op, i.axes, i.negate);
    exec_tensor_reduce(opts_.mode, dst.view, src.view, i.op, i.axes, i.negate);
  }
  mark_written(dst);
  record(core, Engine::Vector, {&src}, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorScalar& i) {
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
    if (opts_.observer) {
      opts_.observer->tensor_scalar(dst.view, src.view, i.op0, a0, i.reverse0, i.op1, a1,
                                    i.reverse1);
    }
    exec_tensor_scalar(opts_.mode, dst.view, src.view, i.op0, a0, i.reverse0, i.op1, a1,
                       i.reverse1);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&src};
  for (const Resolved& c : cols) reads.push_back(&c);
  record(core, chosen_engine(p_, i, hw_), reads, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorTensor& i) {
  Resolved a = compute_operand(core, i.src0, "src0", true);
  Resolved b = compute_operand(core, i.src1, "src1", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(a, b, "tensor_tensor inputs");
  same_shape(dst, a, "tensor_tensor");
  const Engine engine = chosen_engine(p_, i, hw_);
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->tensor_tensor(dst.view, a.view, b.view, i.op, engine);
    // GpSimd's integer result beyond the destination's range: not documented, so not judged.
    const std::string why = exec_tensor_tensor(opts_.mode, dst.view, a.view, b.view, i.op, engine);
    if (!why.empty()) fail(CheckKind::undefined_result, why);
  }
  mark_written(dst);
  record(core, engine, {&a, &b}, {&dst},
         {.partitions = a.view.rows,
          .free_elems = a.view.free_elems(),
          .in = a.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorScalarReduce& i) {
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
    if (opts_.observer) {
      opts_.observer->tensor_scalar_reduce(dst.view, src.view, i.op0, a0, i.reverse0, i.reduce_op,
                                           rr.view);
    }
    exec_tensor_scalar_reduce(opts_.mode, dst.view, src.view, i.op0, a0, i.reverse0, i.reduce_op,
                              rr.view);
    // The hardware leaves the reduction in the Vector accumulator, which later Vector
    // reductions share (the 0.6 tensor_scalar_reduce page); the model does not keep it there,
    // so a later `reduce` of those partitions stops the run instead of continuing a stale value.
    std::vector<uint8_t>& undefined = m_.cores[static_cast<size_t>(core)].vec_regs_undefined;
    for (int64_t r = src.partition_begin; r < src.partition_begin + src.view.rows; ++r) {
      undefined.at(static_cast<size_t>(r)) = kVecRegsAfterTensorScalarReduce;
    }
  }
  mark_written(dst);
  mark_written(rr);
  std::vector<const Resolved*> reads = {&src};
  if (col) reads.push_back(&*col);
  record(core, Engine::Vector, reads, {&dst, &rr},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .reduce_readout = true,
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorCopy& i) {
  if (i.engine && !tensor_copy_engine_ok(*i.engine, hw_)) {
    fail(Rule::scalar_tensor_copy, "tensor_copy on the scalar engine needs trn2 or later (" +
                                       hw_.name + ": use activation copy)");
  }
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "tensor_copy");
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->copy(dst.view, src.view);
    exec_copy(opts_.mode, dst.view, src.view);
  }
  mark_written(dst);
  const CoreState& cs = m_.cores[static_cast<size_t>(core)];
  const EngineLoad since = cs.load - cs.load_at_iteration.at(instr_scope_.at(current_->id));
  record(core, chosen_engine(p_, i, hw_, since, src.view.free_elems()), {&src}, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorCopyPredicated& i) {
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
    if (opts_.observer)
      opts_.observer->copy_predicated(dst.view, s, pred.view, i.reverse_predicate);
    exec_copy_predicated(opts_.mode, dst.view, s, pred.view, i.reverse_predicate);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&pred, &dst};
  if (src) reads.push_back(&*src);
  record(core, Engine::Vector, reads, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = dst.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const AffineSelect& i) {
  Resolved on_true = compute_operand(core, i.on_true, "on_true", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, on_true, "affine_select");
  int64_t offset =
      affine_pattern_offset(core, i.offset, i.channel_multiplier, i.steps, dst, "affine_select");
  if (opts_.compute_values) {
    if (opts_.observer) {
      opts_.observer->affine_select(dst.view, on_true.view, offset, i.channel_multiplier,
                                    i.steps.data(), i.cmp, i.on_false.value);
    }
    exec_affine_select(opts_.mode, dst.view, on_true.view, offset, i.channel_multiplier,
                       i.steps.data(), i.cmp, i.on_false.value);
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {&on_true}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = on_true.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Iota& i) {
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  int64_t offset =
      affine_pattern_offset(core, i.offset, i.channel_multiplier, i.steps, dst, "iota");
  if (opts_.compute_values) {
    if (opts_.observer) {
      opts_.observer->iota(dst.view, offset, i.channel_multiplier, i.steps.data());
    }
    exec_iota(opts_.mode, dst.view, offset, i.channel_multiplier, i.steps.data());
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = DType::int32,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Memset& i) {
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->memset(dst.view, i.value.value);
    exec_memset(opts_.mode, dst.view, i.value.value);
  }
  mark_written(dst);
  record(core, chosen_engine(p_, i, hw_), {}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = dst.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Reciprocal& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "reciprocal");
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->reciprocal(dst.view, src.view);
    exec_reciprocal(opts_.mode, dst.view, src.view);
  }
  mark_written(dst);
  record(core, chosen_engine(p_, i, hw_), {&src}, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
