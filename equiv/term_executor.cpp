// The symbolic executor (term_executor.h): one term per written element, built from the terms of
// the elements each instruction reads, step for step as the reference paths of model/semantics
// compute it (elementwise.cpp, matmul.cpp, reduce.cpp, select.cpp; exec.cpp's flat_copy).
#include "equiv/term_executor.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace ncv::equiv {

namespace {

std::string dt(DType t) {
  return std::string(dtype_name(t));
}

}  // namespace

TermId TermExecutor::read_at(const uint8_t* p, DType dtype) {
  auto it = mem_.find(p);
  if (it == mem_.end()) return ts_.opaque(dt(dtype) + " read of an element with no term");
  if (it->second.dtype != dtype) {
    return ts_.opaque(dt(dtype) + " read of an " + dt(it->second.dtype) + " element");
  }
  return it->second.term;
}

TermId TermExecutor::read(const View& v, int64_t r, int64_t f) {
  return read_at(v.at(r, f), v.dtype);
}

TermId TermExecutor::scalar(const ScalarArg& a, int64_t r) {
  if (const float* imm = std::get_if<float>(&a)) return ts_.constant_f32(*imm);
  return read(std::get<View>(a), r, 0);
}

TermId TermExecutor::reg(const float* regs, int64_t r) {
  auto it = mem_.find(reinterpret_cast<const uint8_t*>(regs + r));
  return it == mem_.end() ? ts_.constant_f32(0.0f) : it->second.term;
}

void TermExecutor::store(const uint8_t* p, DType dtype, TermId t) {
  const auto size = static_cast<unsigned>(dtype_size(dtype));
  sizes_seen_ |= size;
  if (reinterpret_cast<uintptr_t>(p) % size != 0) misaligned_ = true;
  if (misaligned_ || (sizes_seen_ & (sizes_seen_ - 1)) != 0) {
    // Drop elements that start inside this one, and those that start before it and reach into it
    // (at most 3 bytes before: no element is wider than 4 bytes).
    for (unsigned d = 1; d < size; ++d) mem_.erase(p + d);
    for (unsigned d = 1; d <= 3; ++d) {
      auto it = mem_.find(p - d);
      if (it != mem_.end() && dtype_size(it->second.dtype) > d) mem_.erase(it);
    }
  }
  mem_.insert_or_assign(p, Slot{t, dtype});
}

template <class Fn>
void TermExecutor::write_all(const View& dst, Fn&& fn) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  std::vector<TermId>& out = out_;
  out.resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) out[r * n + f] = fn(r, f);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) store(dst.at(r, f), dst.dtype, out[r * n + f]);
  }
}

void TermExecutor::write_opaque(const View& dst, const std::string& reason) {
  write_all(dst, [&](int64_t, int64_t) { return ts_.opaque(reason); });
}

void TermExecutor::opaque(const View& dst, std::string_view what) {
  write_opaque(dst, std::string(what));
}

TermId TermExecutor::converted(TermId t, DType from, DType to) {
  // Same dtype: the bits move unchanged; otherwise through fp32 (exec_copy).
  return from == to ? t : ts_.round(to, t);
}

void TermExecutor::input(const Tensor& t, const uint8_t* base, int64_t elems) {
  ts_.set_context(side_, kNoInstruction);
  const uint32_t slot = ts_.input_slot(t.name);
  const size_t size = dtype_size(t.dtype);
  mem_.reserve(mem_.size() + static_cast<size_t>(elems));
  for (int64_t k = 0; k < elems; ++k) {
    store(base + static_cast<size_t>(k) * size, t.dtype, ts_.input(slot, k, t.dtype));
  }
}

void TermExecutor::release_element_map() {
  std::unordered_map<const uint8_t*, Slot>().swap(mem_);
  ts_.set_executor_bytes(side_, 0);
}

void TermExecutor::instruction(const InstrStmt& s, int) {
  // A node of the element map: the key, the slot and the chain pointer, as malloc rounds them.
  constexpr size_t kMapNodeBytes = 32;
  ts_.set_executor_bytes(side_, mem_.size() * kMapNodeBytes + mem_.bucket_count() * sizeof(void*));
  if (ts_.held_bytes() + ts_.growth_bytes() > budget_) {
    throw TermBudgetExceeded("the terms of both programs outgrow " + std::to_string(budget_ >> 20) +
                             " MiB at this shape");
  }
  ts_.set_context(side_, s.id);
}

void TermExecutor::copy(const View& dst, const View& src) {
  write_all(dst,
            [&](int64_t r, int64_t f) { return converted(read(src, r, f), src.dtype, dst.dtype); });
}

void TermExecutor::flat_copy(const View& dst, const View& src) {
  const int64_t dfree = dst.free_elems(), sfree = src.free_elems();
  const int64_t n = std::max<int64_t>(dst.rows, 0) * dfree;
  std::vector<TermId>& staged = buf_a_;
  staged.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    staged[k] = converted(read(src, k / sfree, k % sfree), src.dtype, dst.dtype);
  }
  for (int64_t k = 0; k < n; ++k) store(dst.at(k / dfree, k % dfree), dst.dtype, staged[k]);
}

void TermExecutor::matmul(const View& dst, const View& stationary, const View& moving,
                          bool accumulate) {
  const int64_t k = stationary.rows, m = stationary.free_elems(), n = moving.free_elems();
  // Each operand element is read once, not once per output element.
  std::vector<TermId>& st = buf_a_;
  std::vector<TermId>& mv = buf_b_;
  st.resize(static_cast<size_t>(k * m));
  mv.resize(static_cast<size_t>(k * n));
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t i = 0; i < m; ++i) st[kk * m + i] = read(stationary, kk, i);
    for (int64_t j = 0; j < n; ++j) mv[kk * n + j] = read(moving, kk, j);
  }
  const TermId zero = ts_.constant_f32(0.0f);
  // Each stationary column and each moving column is one operands node, shared by the m x n
  // chains of this instruction (and by any other chain over the same column).
  std::vector<TermId> st_cols(static_cast<size_t>(m)), mv_cols(static_cast<size_t>(n));
  std::vector<TermId>& col = pairs_col_;
  col.resize(static_cast<size_t>(k));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t kk = 0; kk < k; ++kk) col[kk] = st[kk * m + i];
    st_cols[i] = ts_.operands(col);
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) col[kk] = mv[kk * n + j];
    mv_cols[j] = ts_.operands(col);
  }
  // dst = accumulate ? fl(dst_old + acc) : acc (the chain's NaN canonicalisation is part of the
  // fma_chain node), then encoded to dst's dtype.
  write_all(dst, [&](int64_t i, int64_t j) {
    TermId acc = ts_.fma_chain_of(zero, st_cols[i], mv_cols[j]);
    if (accumulate) acc = ts_.alu(AluOp::add, read(dst, i, j), acc);
    return ts_.round(dst.dtype, acc);
  });
}

void TermExecutor::transpose_tensor(const View& dst, const View& src) {
  // The identity matmul with src stationary: dst[m][n] is the chain over src's column m with the
  // identity's column n (matmul.cpp transpose_tensor_reference).
  const int64_t p = std::max<int64_t>(src.rows, 0), f = src.free_elems();
  std::vector<TermId>& cols = buf_a_;  // column-major: cols[m * p + k] = src[k][m]
  cols.resize(static_cast<size_t>(p * f));
  for (int64_t kk = 0; kk < p; ++kk) {
    for (int64_t m = 0; m < f; ++m) cols[m * p + kk] = read(src, kk, m);
  }
  write_all(dst, [&](int64_t m, int64_t n) {
    const std::span<const TermId> column(cols.data() + m * p, static_cast<size_t>(p));
    return ts_.round(dst.dtype, ts_.transpose_pe(column, static_cast<uint32_t>(n)));
  });
}

void TermExecutor::transpose_vector(const View& dst, const View& src) {
  write_all(dst,
            [&](int64_t f, int64_t p) { return converted(read(src, p, f), src.dtype, dst.dtype); });
}

void TermExecutor::activation(const View& dst, const View& src, ActFunc func,
                              const ScalarArg& scale, const std::optional<ScalarArg>& bias,
                              ReduceCmd cmd, const float* regs,
                              const std::optional<View>& reduce_res) {
  const bool reset = cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce;
  const bool accumulate =
      (cmd == ReduceCmd::reduce || cmd == ReduceCmd::reset_reduce) && regs != nullptr;
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  std::vector<TermId>& acc = buf_b_;
  acc.resize(static_cast<size_t>(regs ? rows : 0));
  for (int64_t r = 0; r < static_cast<int64_t>(acc.size()); ++r) {
    acc[r] = reset ? ts_.constant_f32(0.0f) : reg(regs, r);
  }
  // out = func(fl(fl(x * scale) + bias)); each register adds the fp32 outs in row-major order.
  write_all(dst, [&](int64_t r, int64_t f) {
    TermId t = ts_.alu(AluOp::multiply, read(src, r, f), scalar(scale, r));
    if (bias) t = ts_.alu(AluOp::add, t, scalar(*bias, r));
    const TermId o = ts_.act(func, t);
    if (accumulate) acc[r] = ts_.alu(AluOp::add, acc[r], o);
    return ts_.round(dst.dtype, o);
  });
  if (regs == nullptr) return;
  // reduce_res receives the registers after every dst write.
  store_registers(regs, acc, rows, reset || accumulate, reduce_res);
}

void TermExecutor::tensor_reduce(const View& dst, const View& src, AluOp op, int axes,
                                 bool negate) {
  if (is_bitwise(op)) return write_opaque(dst, "tensor_reduce " + std::string(alu_op_name(op)));
  const int rank = src.free_rank;
  axes = std::clamp(axes, 0, rank);
  int64_t inner = 1;
  for (int d = rank - axes; d < rank; ++d) inner *= src.sizes[d];
  const TermId identity = ts_.constant_f32(reduction_identity(op));
  const TermId minus_one = ts_.constant_f32(-1.0f);
  // Sequential from the identity, acc = acc op x; negate multiplies the fp32 result by -1.
  write_all(dst, [&](int64_t r, int64_t o) {
    TermId acc = identity;
    for (int64_t i = 0; i < inner; ++i) acc = ts_.alu(op, acc, read(src, r, o * inner + i));
    if (negate) acc = ts_.alu(AluOp::multiply, acc, minus_one);
    return ts_.round(dst.dtype, acc);
  });
}

void TermExecutor::tensor_scalar(const View& dst, const View& src, AluOp op0, const ScalarArg& a0,
                                 bool reverse0, std::optional<AluOp> op1, const ScalarArg& a1,
                                 bool reverse1) {
  if (is_bitwise(op0) || (op1 && is_bitwise(*op1))) {
    return write_opaque(dst, "tensor_scalar with a bitwise operator");
  }
  write_all(dst, [&](int64_t r, int64_t f) {
    TermId v = read(src, r, f);
    const TermId s0 = scalar(a0, r);
    v = reverse0 ? ts_.alu(op0, s0, v) : ts_.alu(op0, v, s0);
    if (op1) {
      const TermId s1 = scalar(a1, r);
      v = reverse1 ? ts_.alu(*op1, s1, v) : ts_.alu(*op1, v, s1);
    }
    return ts_.round(dst.dtype, v);
  });
}

void TermExecutor::tensor_tensor(const View& dst, const View& src0, const View& src1, AluOp op,
                                 Engine engine) {
  if (is_bitwise(op)) return write_opaque(dst, "tensor_tensor " + std::string(alu_op_name(op)));
  // GpSimd's exact int32 arithmetic is not the fp32 term the language has.
  if (tensor_tensor_native_int(op, dst.dtype, src0.dtype, src1.dtype, engine)) {
    return write_opaque(
        dst, "tensor_tensor " + std::string(alu_op_name(op)) + " in GpSimd integer arithmetic");
  }
  write_all(dst, [&](int64_t r, int64_t f) {
    return ts_.round(dst.dtype, ts_.alu(op, read(src0, r, f), read(src1, r, f)));
  });
}

void TermExecutor::tensor_scalar_reduce(const View& dst, const View& src, AluOp op0,
                                        const ScalarArg& a0, bool reverse0, AluOp reduce_op,
                                        const View& reduce_res) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  if (is_bitwise(op0) || is_bitwise(reduce_op)) {
    const std::string reason = "tensor_scalar_reduce with a bitwise operator";
    write_opaque(dst, reason);
    for (int64_t r = 0; r < std::min(reduce_res.rows, rows); ++r) {
      store(reduce_res.at(r, 0), reduce_res.dtype, ts_.opaque(reason));
    }
    return;
  }
  std::vector<TermId>& acc = buf_b_;
  acc.assign(static_cast<size_t>(rows), ts_.constant_f32(reduction_identity(reduce_op)));
  write_all(dst, [&](int64_t r, int64_t f) {
    const TermId x = read(src, r, f), s = scalar(a0, r);
    const TermId v = reverse0 ? ts_.alu(op0, s, x) : ts_.alu(op0, x, s);
    acc[r] = ts_.alu(reduce_op, acc[r], v);
    return ts_.round(dst.dtype, v);
  });
  for (int64_t r = 0; r < std::min(reduce_res.rows, rows); ++r) {
    store(reduce_res.at(r, 0), reduce_res.dtype, ts_.round(reduce_res.dtype, acc[r]));
  }
}

void TermExecutor::copy_predicated(const View& dst, const std::variant<float, View>& src,
                                   const View& predicate, bool reverse) {
  const View* sv = std::get_if<View>(&src);
  const TermId imm =
      sv ? 0 : ts_.constant(dst.dtype, encode_from_float(dst.dtype, std::get<float>(src)));
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  // kNoWrite: a constant predicate left the element unselected, so it is not written at all.
  constexpr TermId kNoWrite = UINT32_MAX;
  std::vector<TermId>& out = buf_a_;
  out.resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      const TermId pred = read(predicate, r, f);
      const TermNode& pn = ts_.node(pred);
      bool fixed = false, selected = false;
      if (pn.op == TermOp::constant) {
        // A predicate element is selected where it is nonzero (integer bits != 0, which for
        // every integer dtype is value != 0; float value != 0, NaN included).
        fixed = true;
        selected =
            (decode_to_float(pn.dtype, static_cast<uint32_t>(pn.payload)) != 0.0f) != reverse;
      }
      if (fixed && !selected) {
        out[r * n + f] = kNoWrite;
        continue;
      }
      const TermId on_true = sv ? converted(read(*sv, r, f), sv->dtype, dst.dtype) : imm;
      out[r * n + f] =
          fixed ? on_true : ts_.select(pred, reverse, on_true, read(dst, r, f), dst.dtype);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      if (out[r * n + f] != kNoWrite) store(dst.at(r, f), dst.dtype, out[r * n + f]);
    }
  }
}

void TermExecutor::affine_select(const View& dst, const View& on_true, int64_t offset,
                                 int64_t channel_multiplier, const int64_t* steps, CmpOp cmp,
                                 float on_false) {
  // The predicate depends on indices only, so it is decided here.
  const TermId false_term = ts_.constant(dst.dtype, encode_from_float(dst.dtype, on_false));
  write_all(dst, [&](int64_t r, int64_t f) {
    const int64_t v = affine_pattern_value(dst, offset, channel_multiplier, steps, r, f);
    return affine_compare(cmp, v) ? converted(read(on_true, r, f), on_true.dtype, dst.dtype)
                                  : false_term;
  });
}

void TermExecutor::iota(const View& dst, int64_t offset, int64_t channel_multiplier,
                        const int64_t* steps) {
  write_all(dst, [&](int64_t r, int64_t f) {
    const int64_t v = affine_pattern_value(dst, offset, channel_multiplier, steps, r, f);
    return ts_.constant(dst.dtype, iota_bits(dst.dtype, v));
  });
}

void TermExecutor::memset(const View& dst, float value) {
  const TermId c = ts_.constant(dst.dtype, encode_from_float(dst.dtype, value));
  write_all(dst, [&](int64_t, int64_t) { return c; });
}

void TermExecutor::reciprocal(const View& dst, const View& src) {
  // exec_tensor_scalar(divide, 1.0, reverse): 1 / x.
  const TermId one = ts_.constant_f32(1.0f);
  write_all(dst, [&](int64_t r, int64_t f) {
    return ts_.round(dst.dtype, ts_.alu(AluOp::divide, one, read(src, r, f)));
  });
}

// The scans as chains of fp32 ALU terms (model/semantics/scan.cpp): write_all visits each row's
// elements in order, so the running term of row r is the previous element's.
void TermExecutor::tensor_tensor_scan(const View& dst, const View& src0, const View& src1,
                                      const ScalarArg& initial, AluOp op0, AluOp op1, bool reverse0,
                                      bool reverse1) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  std::vector<TermId>& acc = buf_b_;
  acc.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) acc[r] = scalar(initial, r);
  write_all(dst, [&](int64_t r, int64_t f) {
    const TermId a = read(src0, r, f), b = read(src1, r, f);
    const TermId x = reverse0 ? ts_.alu(op0, acc[r], a) : ts_.alu(op0, a, acc[r]);
    acc[r] = reverse1 ? ts_.alu(op1, b, x) : ts_.alu(op1, x, b);
    return ts_.round(dst.dtype, acc[r]);
  });
}

void TermExecutor::tensor_scalar_cumulative(const View& dst, const View& src, AluOp op0,
                                            const ScalarArg& imm0, AluOp op1, ReduceCmd cmd,
                                            const std::optional<ScalarArg>& imm1,
                                            const float* regs) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  std::vector<TermId>& acc = buf_b_;
  acc.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    if (cmd == ReduceCmd::load_reduce && imm1) {
      acc[r] = scalar(*imm1, r);
    } else if (cmd == ReduceCmd::reduce) {
      acc[r] = reg(regs, r);
    } else {
      acc[r] = ts_.constant_f32(reduction_identity(op1));
    }
  }
  write_all(dst, [&](int64_t r, int64_t f) {
    acc[r] = ts_.alu(op1, ts_.alu(op0, read(src, r, f), scalar(imm0, r)), acc[r]);
    return ts_.round(dst.dtype, acc[r]);
  });
  for (int64_t r = 0; r < rows; ++r) {
    store(reinterpret_cast<const uint8_t*>(regs + r), DType::fp32, acc[r]);
  }
}

// The statistics are outside the term language (counts, a division by a count, two passes).
void TermExecutor::bn_stats(const View& dst, const View&) {
  write_opaque(dst, "bn_stats");
}

void TermExecutor::bn_aggr(const View& dst, const View&) {
  write_opaque(dst, "bn_aggr");
}

void TermExecutor::stream_shuffle(const View& dst, const View& src,
                                  const std::vector<int64_t>& mask) {
  // exec_stream_shuffle: every moved row is read before the first store; a row whose entry is
  // 255 keeps its elements (and their terms).
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  std::vector<TermId>& out = out_;
  out.resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t s = shuffle_source_row(mask, r);
    if (s < 0) continue;
    for (int64_t f = 0; f < n; ++f) out[r * n + f] = read(src, s, f);
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (shuffle_source_row(mask, r) < 0) continue;
    for (int64_t f = 0; f < n; ++f) store(dst.at(r, f), dst.dtype, out[r * n + f]);
  }
}

// Partition reduce: max is a chain of max terms over partitions 0..P-1 (any order gives the
// same value up to which NaN comes out). The hardware's order of an fp32 add is not documented
// (model/semantics/partition_reduce.cpp), so the add is opaque: no proof rests on the model's
// order. Bitwise operators are outside the term language.
void TermExecutor::tensor_partition_reduce(const View& dst, const View& src, AluOp op) {
  if (op != AluOp::max) {
    return write_opaque(dst,
                        "tensor_partition_reduce " + std::string(alu_op_name(op)) +
                            (op == AluOp::add ? " (the partitions' order is not documented)" : ""));
  }
  const TermId identity = ts_.constant_f32(reduction_identity(op));
  write_all(dst, [&](int64_t, int64_t f) {
    TermId acc = identity;
    for (int64_t p = 0; p < src.rows; ++p) acc = ts_.alu(op, acc, read(src, p, f));
    return ts_.round(dst.dtype, acc);
  });
}

// The Vector accumulators after an instruction that reset or accumulated them (`update`), and
// reduce_res, when given, rounded from them: activation's and the selects' common tail.
void TermExecutor::store_registers(const float* regs, const std::vector<TermId>& acc, int64_t rows,
                                   bool update, const std::optional<View>& reduce_res) {
  if (update) {
    for (int64_t r = 0; r < rows; ++r) {
      store(reinterpret_cast<const uint8_t*>(regs + r), DType::fp32, acc[r]);
    }
  }
  if (reduce_res) {
    const View& rr = *reduce_res;
    for (int64_t r = 0; r < std::min(rr.rows, rows); ++r) {
      store(rr.at(r, 0), rr.dtype, ts_.round(rr.dtype, acc[r]));
    }
  }
}

template <class Choose>
void TermExecutor::select_max(const View& dst, ReduceCmd cmd, const float* regs,
                              const std::optional<View>& reduce_res, Choose&& choose) {
  const bool reset = cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce;
  const bool accumulate = cmd == ReduceCmd::reduce || cmd == ReduceCmd::reset_reduce;
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  std::vector<TermId>& acc = buf_b_;
  acc.resize(static_cast<size_t>(rows));
  const TermId minus_inf = ts_.constant_f32(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) acc[r] = reset ? minus_inf : reg(regs, r);
  write_all(dst, [&](int64_t r, int64_t f) {
    const TermId x = choose(r, f);
    if (accumulate) acc[r] = ts_.alu(AluOp::max, acc[r], x);
    return ts_.round(dst.dtype, x);
  });
  store_registers(regs, acc, rows, reset || accumulate, reduce_res);
}

void TermExecutor::select_reduce(const View& dst, const View& predicate, const View& on_true,
                                 const ScalarArg& on_false, bool reverse_pred, ReduceCmd cmd,
                                 const float* regs, const std::optional<View>& reduce_res) {
  select_max(dst, cmd, regs, reduce_res, [&](int64_t r, int64_t f) {
    return ts_.select(read(predicate, r, f), reverse_pred, read(on_true, r, f), scalar(on_false, r),
                      DType::fp32);
  });
}

// The mask is two fp32 comparisons of the index with the bounds (1 or 0 each) multiplied.
void TermExecutor::range_select(const View& dst, const View& on_true, const View& bound0,
                                const View& bound1, CmpOp cmp0, CmpOp cmp1, int64_t range_start,
                                float on_false, ReduceCmd cmd, const float* regs,
                                const std::optional<View>& reduce_res) {
  auto alu_of = [](CmpOp c) {
    switch (c) {
      case CmpOp::eq:
        return AluOp::is_equal;
      case CmpOp::ne:
        return AluOp::not_equal;
      case CmpOp::lt:
        return AluOp::is_lt;
      case CmpOp::le:
        return AluOp::is_le;
      case CmpOp::gt:
        return AluOp::is_gt;
      case CmpOp::ge:
        break;
    }
    return AluOp::is_ge;
  };
  const TermId fill = ts_.constant_f32(on_false);
  select_max(dst, cmd, regs, reduce_res, [&](int64_t r, int64_t f) {
    const TermId i = ts_.constant_f32(static_cast<float>(range_start + f));
    const TermId m = ts_.alu(AluOp::multiply, ts_.alu(alu_of(cmp0), i, read(bound0, r, 0)),
                             ts_.alu(alu_of(cmp1), i, read(bound1, r, 0)));
    return ts_.select(m, false, read(on_true, r, f), fill, DType::fp32);
  });
}

void TermExecutor::output(const Tensor& t, const uint8_t* base, int64_t elems) {
  const size_t size = dtype_size(t.dtype);
  std::vector<TermId>& terms = outputs_[t.name];
  terms.resize(static_cast<size_t>(elems));
  for (int64_t k = 0; k < elems; ++k) {
    terms[k] = read_at(base + static_cast<size_t>(k) * size, t.dtype);
  }
}

}  // namespace ncv::equiv
