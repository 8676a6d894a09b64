// Elementwise instructions: copy, tensor_scalar, tensor_tensor, memset, reciprocal, activation.
//
// Rules (semantics.h, model/semantics/internal.h): inputs decode to fp32, compute in fp32 with the
// model's NaN rules, encode to the dst dtype (RNE + saturation). Bitwise operators run in the
// integer domain instead. Same-dtype copies move bits. All inputs are read before any output is
// written.
//
// Fast paths: per row, decode the inputs into contiguous fp32 buffers (runs of the coalesced
// free dims, table or checked inline decoders), run one loop specialised for the operator,
// encode and store the row; rows stream directly into dst unless dst aliases an input in a way
// that row streaming would observe (then the rows are staged, see RowWriter).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

// Same dtype: the bits move unchanged (NaN payloads included). Different dtypes: through fp32
// (decode_to_float, then encode_from_float with the dst's rounding and saturation).
void exec_copy(ExecMode mode, const View& dst, const View& src) {
  const bool same = dst.dtype == src.dtype;
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t f) {
      const uint32_t bits = ref_load(src, r, f);
      return same ? bits : encode_from_float(dst.dtype, decode_to_float(src.dtype, bits));
    });
    return;
  }
  const int64_t n = dst.free_elems();
  const RowShape ss = row_shape(src);
  const bool stream = rows_independent(dst, src);
  RowWriter w(dst, stream);
  const auto contiguous = [](const View& v, const RowShape& s) {
    return s.rank == 1 && !s.empty && s.strides[0] == static_cast<int64_t>(dtype_size(v.dtype));
  };
  if (same && stream && contiguous(src, ss) && contiguous(dst, w.shape()) &&
      ss.sizes[0] == w.shape().sizes[0]) {
    // Same bits, one contiguous run per row on both sides: a byte copy per row.
    const auto bytes = static_cast<size_t>(n) * dtype_size(dst.dtype);
    for (int64_t r = 0; r < dst.rows; ++r) {
      prefetch_row(src, ss, r + kPrefetchRows, false);
      prefetch_row(dst, w.shape(), r + kPrefetchRows, true);
      std::memmove(dst.row(r), src.row(r), bytes);
    }
    return;
  }
  std::vector<uint32_t> bits(n);
  std::vector<float> x(same ? 0 : n);
  for (int64_t r = 0; r < dst.rows; ++r) {
    if (same) {
      load_row_bits(src, ss, r, bits.data());
      w.emit(r, bits.data());
    } else {
      decode_row(src, ss, r, x.data());
      w.emit_floats(r, x.data());
    }
  }
  w.finish();
}

// dst = (src op0 a0) op1 a1. A bitwise operator takes its operands in the integer domain (the
// previous step's fp32 result, if any, rounded to an integer); an fp32 operator after a bitwise
// one takes the integer result rounded to fp32.
void exec_tensor_scalar(ExecMode mode, const View& dst, const View& src, AluOp op0,
                        const ScalarArg& a0, bool reverse0, std::optional<AluOp> op1,
                        const ScalarArg& a1, bool reverse1) {
  const bool int0 = is_bitwise(op0);
  auto element = [&](uint32_t bits, const Scalar& s0, const Scalar& s1) {
    Val v = alu_step(op0, load_val(src.dtype, bits, int0), s0, reverse0);
    if (op1) v = alu_step(*op1, v, s1, reverse1);
    return encode_val(dst.dtype, v);
  };
  const Scalar none{};
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t f) {
      return element(ref_load(src, r, f), resolve_scalar(a0, r),
                     op1 ? resolve_scalar(a1, r) : none);
    });
    return;
  }
  const std::vector<Scalar> s0 = resolve_scalars(a0, dst.rows);
  const std::vector<Scalar> s1 = op1 ? resolve_scalars(a1, dst.rows) : std::vector<Scalar>{};
  const int64_t n = dst.free_elems();
  const RowShape ss = row_shape(src);
  RowWriter w(dst, rows_independent(dst, src));
  std::vector<uint32_t> bits(n);
  const bool float_path = !int0 && !(op1 && is_bitwise(*op1));
  std::vector<float> x(float_path ? n : 0);
  for (int64_t r = 0; r < dst.rows; ++r) {
    if (float_path) {
      decode_row(src, ss, r, x.data());
      alu_scalar_row(op0, x.data(), n, s0[r].f, reverse0);
      if (op1) alu_scalar_row(*op1, x.data(), n, s1[r].f, reverse1);
      w.emit_floats(r, x.data());
    } else {
      load_row_bits(src, ss, r, bits.data());
      for (int64_t i = 0; i < n; ++i) bits[i] = element(bits[i], s0[r], op1 ? s1[r] : none);
      w.emit(r, bits.data());
    }
  }
  w.finish();
}

bool tensor_tensor_native_int(AluOp op, DType dst, DType src0, DType src1, Engine engine) {
  const auto int32ish = [](DType t) { return t == DType::int32 || t == DType::uint32; };
  return engine == Engine::GpSimd && has_native_int(op) && int32ish(dst) && int32ish(src0) &&
         int32ish(src1);
}

namespace {

// 128-bit integers: every product of two 32-bit values is exact in them (a GCC/Clang extension).
__extension__ typedef __int128 Int128;

// The first element (rows in order, each row's elements in order; the same in both modes) whose
// exact native-integer result dst's type cannot hold, as the reason the result is undefined; ""
// when every result fits. ISA-NEW tensor_tensor promises "exact results for all 32-bit integer
// values" and says nothing of a result beyond the destination's range (an int32 add, subtract or
// multiply that overflows, |-2^31| from abs_max, a negative result into uint32); neither do
// ISA-OLD tensor_tensor nor SHARED's ALU operators. Saturating or wrapping would be a guess.
std::string native_int_overflow(const View& dst, const View& src0, const View& src1, AluOp op) {
  const Int128 lo = dst.dtype == DType::int32 ? std::numeric_limits<int32_t>::min() : 0;
  const Int128 hi = dst.dtype == DType::int32 ? std::numeric_limits<int32_t>::max()
                                              : std::numeric_limits<uint32_t>::max();
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      const int64_t a = int_from_bits(src0.dtype, ref_load(src0, r, f));
      const int64_t b = int_from_bits(src1.dtype, ref_load(src1, r, f));
      // |a|, |b| <= 2^32: the product fits 128 bits, everything else 64.
      const Int128 exact = op == AluOp::multiply ? static_cast<Int128>(a) * b
                                                 : static_cast<Int128>(alu_native_int(op, a, b));
      if (exact >= lo && exact <= hi) continue;
      const std::string x = exact < 0 ? "-" + std::to_string(static_cast<uint64_t>(-exact))
                                      : std::to_string(static_cast<uint64_t>(exact));
      return std::string("tensor_tensor ") + std::string(alu_op_name(op)) +
             " on GpSimd: " + std::to_string(a) + " " + std::string(alu_op_name(op)) + " " +
             std::to_string(b) + " = " + x + " (partition " + std::to_string(r) + ", element " +
             std::to_string(f) + ") does not fit the " + std::string(dtype_name(dst.dtype)) +
             " destination; the ISA promises exact integer results and documents none beyond the "
             "destination's range";
    }
  }
  return "";
}

}  // namespace

std::string exec_tensor_tensor(ExecMode mode, const View& dst, const View& src0, const View& src1,
                               AluOp op, Engine engine) {
  const bool native = tensor_tensor_native_int(op, dst.dtype, src0.dtype, src1.dtype, engine);
  // Nothing is written when a result is undefined: the run stops there (undefined_result).
  if (native) {
    std::string why = native_int_overflow(dst, src0, src1, op);
    if (!why.empty()) return why;
  }
  const bool integer = is_bitwise(op) || native;
  auto element = [&](uint32_t b0, uint32_t b1) {
    if (integer) {
      const int64_t a = int_from_bits(src0.dtype, b0), b = int_from_bits(src1.dtype, b1);
      return encode_int(dst.dtype, native ? alu_native_int(op, a, b) : alu_int(op, a, b));
    }
    return encode_from_float(
        dst.dtype, alu_float(op, decode_to_float(src0.dtype, b0), decode_to_float(src1.dtype, b1)));
  };
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t f) {
      return element(ref_load(src0, r, f), ref_load(src1, r, f));
    });
    return "";
  }
  const int64_t n = dst.free_elems();
  const RowShape s0 = row_shape(src0), s1 = row_shape(src1);
  RowWriter w(dst, rows_independent(dst, src0) && rows_independent(dst, src1));
  std::vector<uint32_t> bits(n), bits1(integer ? n : 0);
  std::vector<float> x(integer ? 0 : n), y(integer ? 0 : n);
  for (int64_t r = 0; r < dst.rows; ++r) {
    if (integer) {
      load_row_bits(src0, s0, r, bits.data());
      load_row_bits(src1, s1, r, bits1.data());
      for (int64_t i = 0; i < n; ++i) bits[i] = element(bits[i], bits1[i]);
    } else {
      decode_row(src0, s0, r, x.data());
      decode_row(src1, s1, r, y.data());
      dispatch_float_op(op, [&](auto op_c) {
        const AluOp o = op_c;
        for (int64_t i = 0; i < n; ++i) x[i] = alu_float(o, x[i], y[i]);
      });
      w.emit_floats(r, x.data());
      continue;
    }
    w.emit(r, bits.data());
  }
  w.finish();
  return "";
}

// The value is encoded once (RNE + saturation of the dst dtype) and stored everywhere.
void exec_memset(ExecMode mode, const View& dst, float value) {
  const uint32_t v = encode_from_float(dst.dtype, value);
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t, int64_t) { return v; });
    return;
  }
  RowWriter w(dst, true);
  std::vector<uint32_t> bits(dst.free_elems(), v);
  for (int64_t r = 0; r < dst.rows; ++r) w.emit(r, bits.data());
  w.finish();
}

// Vector engine reciprocal: 1 / x in fp32, full range (the activation's range limit for
// reciprocal is a Scalar engine property).
void exec_reciprocal(ExecMode mode, const View& dst, const View& src) {
  exec_tensor_scalar(mode, dst, src, AluOp::divide, ScalarArg{1.0f}, /*reverse0=*/true,
                     std::nullopt, ScalarArg{0.0f}, false);
}

namespace {

// y[i] = fl(fl(x[i] * s) + b) (b optional) with the model's NaN rule (f_mul, f_add). The plain
// arithmetic (which vectorises) is the same whenever no NaN comes out; otherwise the row is
// redone with the rule.
void scale_bias_row(const float* x, float* y, int64_t n, float s, const float* b) {
  if (b != nullptr) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + bv;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
  }
  if (!any_nan(y, n)) return;
  for (int64_t i = 0; i < n; ++i) y[i] = b ? f_add(f_mul(x[i], s), *b) : f_mul(x[i], s);
}

}  // namespace

// out = func(fl(fl(x * scale) + bias)); regs follow reduce_cmd with each fp32 out added in
// row-major order (before the dst conversion); reduce_res receives regs after all dst writes.
// A null regs pointer (no accumulator state available) skips the register updates and the
// read-out. An input outside func's range gives the substitute and is counted (semantics.h).
void exec_activation(ExecMode mode, const View& dst, const View& src, ActFunc func,
                     const ScalarArg& scale, const std::optional<ScalarArg>& bias, ReduceCmd cmd,
                     float* regs, const std::optional<View>& reduce_res,
                     ActOutOfRange* out_of_range) {
  ActOutOfRange local;  // without a caller's: the default NaN, counted for nobody
  ActOutOfRange& oor = out_of_range ? *out_of_range : local;
  const float substitute = oor.substitute;
  // func(v), or the substitute (counted, the first kept) for an input outside func's range.
  auto apply = [&oor, substitute](ActFunc fn, float v) {
    if (!act_in_range(fn, v)) [[unlikely]] {
      if (oor.count++ == 0) oor.first = v;
      return substitute;
    }
    return act_value(fn, v);
  };
  const bool reset = cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce;
  const bool accumulate =
      (cmd == ReduceCmd::reduce || cmd == ReduceCmd::reset_reduce) && regs != nullptr;
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  if (reset && regs != nullptr) std::fill(regs, regs + rows, 0.0f);

  auto pre = [&](float x, float sc, const float* b) {
    const float t = f_mul(x, sc);
    return b ? f_add(t, *b) : t;
  };
  if (mode == ExecMode::reference) {
    std::vector<uint32_t> out(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) {
        const float sc = resolve_scalar(scale, r).f;
        const std::optional<float> b =
            bias ? std::optional<float>(resolve_scalar(*bias, r).f) : std::nullopt;
        const float x = decode_to_float(src.dtype, ref_load(src, r, f));
        const float o = apply(func, pre(x, sc, b ? &*b : nullptr));
        if (accumulate) regs[r] = f_add(regs[r], o);
        out[r * n + f] = encode_from_float(dst.dtype, o);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) store_bits(dst.dtype, dst.at(r, f), out[r * n + f]);
    }
  } else {
    const std::vector<Scalar> sc = resolve_scalars(scale, rows);
    const std::vector<Scalar> bi = bias ? resolve_scalars(*bias, rows) : std::vector<Scalar>{};
    const RowShape ss = row_shape(src);
    RowWriter w(dst, rows_independent(dst, src));
    std::vector<float> x(n), t(n);
    for (int64_t r = 0; r < rows; ++r) {
      decode_row(src, ss, r, t.data());
      scale_bias_row(t.data(), x.data(), n, sc[r].f, bias ? &bi[r].f : nullptr);
      if (func == ActFunc::exp) {
        exp_f32_array(x.data(), x.data(), n);
      } else {
        // One loop per function: for one without a range act_in_range folds to true, so the
        // loop is the plain one; for one with a range the check is two compares and a branch
        // taken only for inputs outside it.
        dispatch_act(func, [&](auto func_c) {
          const ActFunc fn = func_c;
          for (int64_t i = 0; i < n; ++i) x[i] = apply(fn, x[i]);
        });
      }
      if (accumulate) {
        float acc = regs[r];
        for (int64_t i = 0; i < n; ++i) acc = f_add(acc, x[i]);
        regs[r] = acc;
      }
      w.emit_floats(r, x.data());
    }
    w.finish();
  }
  if (reduce_res && regs != nullptr) {
    const View& rr = *reduce_res;
    for (int64_t r = 0; r < std::min(rr.rows, rows); ++r) {
      store_bits(rr.dtype, rr.at(r, 0), encode_from_float(rr.dtype, regs[r]));
    }
  }
}

}  // namespace semantics
}  // namespace ncv
