// Reductions: tensor_reduce and tensor_scalar_reduce.
//
// Every reduction is sequential in row-major order of the reduced elements, starting from the
// operator's identity (add 0, multiply 1, max -inf, min +inf; model/semantics/internal.h lists the
// rest), acc = acc op x. This order is part of the model's contract: the fast paths run the
// same sequential loop (one specialised loop per operator), never a tree. Bitwise reduction
// operators (and/or/xor) reduce in the integer domain.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

// Sequential fp32 reduction of x[0..n) onto acc.
float reduce_run(AluOp op, float acc, const float* x, int64_t n) {
  dispatch_float_op(op, [&](auto op_c) {
    const AluOp o = op_c;
    for (int64_t i = 0; i < n; ++i) acc = alu_float(o, acc, x[i]);
  });
  return acc;
}

// A key whose signed integer order is the fp32 order of non-NaN values, with -0 below +0. The map
// flips the 31 low bits of negative patterns only, so it is its own inverse.
inline int32_t order_key(float x) {
  const auto b = static_cast<int32_t>(to_bits(x));
  return b ^ ((b >> 31) & 0x7fffffff);
}
inline float from_order_key(int32_t k) {
  return from_bits(static_cast<uint32_t>(k ^ ((k >> 31) & 0x7fffffff)));
}

// reduce_run for max/min: without NaN operands the result is the same for every order (the
// largest/smallest value, +0 above -0), so the keys are compared in a loop that vectorises; a
// run with a NaN takes the sequential loop (it decides which NaN comes out).
float reduce_run_max_min(AluOp op, float acc, const float* x, int64_t n) {
  if (is_nan(acc) || any_nan(x, n)) return reduce_run(op, acc, x, n);
  int32_t best = order_key(acc);
  if (op == AluOp::max) {
    for (int64_t i = 0; i < n; ++i) best = std::max(best, order_key(x[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) best = std::min(best, order_key(x[i]));
  }
  return from_order_key(best);
}

// Row-wise sums, each sequential: y[r] = acc_r + x[r][0] + x[r][1] + ... in order. Rows run
// interleaved so that the chains overlap; a row whose plain sum is NaN is redone with f_add
// (which decides the NaN's payload).
void sum_rows(float acc0, const float* x, int64_t ld, int64_t rows, int64_t n, float* y) {
  constexpr int64_t kLanes = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kLanes) {
    const int64_t lanes = std::min(kLanes, rows - r0);
    float acc[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) acc[l] = acc0;
    if (lanes == kLanes) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t l = 0; l < kLanes; ++l) acc[l] += x[(r0 + l) * ld + i];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t l = 0; l < lanes; ++l) acc[l] += x[(r0 + l) * ld + i];
      }
    }
    for (int64_t l = 0; l < lanes; ++l) {
      y[r0 + l] = is_nan(acc[l]) ? reduce_run(AluOp::add, acc0, x + (r0 + l) * ld, n) : acc[l];
    }
  }
}

}  // namespace

// Reduces the last `axes` free dims (clamped to [0, free_rank]); dst's flat free index o covers
// the remaining dims. negate multiplies the fp32 result by -1 (so +0 becomes -0 and a NaN stays
// that NaN, quieted); it is ignored for bitwise operators, which the hardware does not negate.
void exec_tensor_reduce(ExecMode mode, const View& dst, const View& src, AluOp op, int axes,
                        bool negate) {
  const int rank = src.free_rank;
  axes = std::clamp(axes, 0, rank);
  int64_t inner = 1, outer = 1;
  for (int d = 0; d < rank; ++d) (d >= rank - axes ? inner : outer) *= src.sizes[d];
  const bool integer = is_bitwise(op);
  auto finish_val = [&](Val acc) {
    if (negate && !acc.is_int) acc.f = f_mul(acc.f, -1.0f);
    return encode_val(dst.dtype, acc);
  };
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t o) {
      Val acc = reduce_identity(op);
      for (int64_t i = 0; i < inner; ++i) {
        acc = reduce_step(op, acc, load_val(src.dtype, ref_load(src, r, o * inner + i), integer));
      }
      return finish_val(acc);
    });
    return;
  }
  const int64_t n = src.free_elems();
  const RowShape ss = row_shape(src);
  RowWriter w(dst, rows_independent(dst, src));
  if (integer) {
    std::vector<uint32_t> bits(std::max(n, outer)), out(std::max(outer, dst.free_elems()));
    for (int64_t r = 0; r < dst.rows; ++r) {
      load_row_bits(src, ss, r, bits.data());
      for (int64_t o = 0; o < outer; ++o) {
        Val acc = reduce_identity(op);
        for (int64_t i = 0; i < inner; ++i) {
          acc = reduce_step(op, acc, val_i(int_from_bits(src.dtype, bits[o * inner + i])));
        }
        out[o] = finish_val(acc);
      }
      w.emit(r, out.data());
    }
    w.finish();
    return;
  }
  // Blocks of rows are decoded first (so that add chains of several rows can run interleaved),
  // then each row is written; with a streaming writer that is still row r after src row r.
  constexpr int64_t kBlock = 8;
  const float id = reduce_identity_float(op);
  std::vector<float> x(static_cast<size_t>(kBlock * n)), y(static_cast<size_t>(kBlock * outer)),
      sums(static_cast<size_t>(kBlock));
  for (int64_t r0 = 0; r0 < dst.rows; r0 += kBlock) {
    const int64_t rows = std::min(kBlock, dst.rows - r0);
    for (int64_t l = 0; l < rows; ++l) decode_row(src, ss, r0 + l, x.data() + l * n);
    for (int64_t o = 0; o < outer; ++o) {
      const float* xo = x.data() + o * inner;
      if (op == AluOp::add) {
        sum_rows(id, xo, n, rows, inner, sums.data());
        for (int64_t l = 0; l < rows; ++l) y[l * outer + o] = sums[l];
      } else if (op == AluOp::max || op == AluOp::min) {
        for (int64_t l = 0; l < rows; ++l) {
          y[l * outer + o] = reduce_run_max_min(op, id, xo + l * n, inner);
        }
      } else {
        for (int64_t l = 0; l < rows; ++l) y[l * outer + o] = reduce_run(op, id, xo + l * n, inner);
      }
    }
    for (int64_t l = 0; l < rows; ++l) {
      float* yl = y.data() + l * outer;
      if (negate) {
        for (int64_t o = 0; o < outer; ++o) yl[o] = f_mul(yl[o], -1.0f);
      }
      w.emit_floats(r0 + l, yl);
    }
  }
  w.finish();
}

// dst = src op0 a0; reduce_res[r] = reduce_op over row r's results before the dst conversion
// (fp32, or int64 for a bitwise op0), written after every dst element.
void exec_tensor_scalar_reduce(ExecMode mode, const View& dst, const View& src, AluOp op0,
                               const ScalarArg& a0, bool reverse0, AluOp reduce_op,
                               const View& reduce_res) {
  const bool int0 = is_bitwise(op0);
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  std::vector<Val> acc(rows, reduce_identity(reduce_op));
  if (mode == ExecMode::reference) {
    std::vector<uint32_t> out(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) {
        const Val v = alu_step(op0, load_val(src.dtype, ref_load(src, r, f), int0),
                               resolve_scalar(a0, r), reverse0);
        acc[r] = reduce_step(reduce_op, acc[r], v);
        out[r * n + f] = encode_val(dst.dtype, v);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) store_bits(dst.dtype, dst.at(r, f), out[r * n + f]);
    }
  } else {
    const std::vector<Scalar> s0 = resolve_scalars(a0, rows);
    const RowShape ss = row_shape(src);
    RowWriter w(dst, rows_independent(dst, src));
    std::vector<uint32_t> bits(n);
    const bool float_path = !int0 && !is_bitwise(reduce_op);
    std::vector<float> x(float_path ? n : 0);
    for (int64_t r = 0; r < rows; ++r) {
      if (float_path) {
        decode_row(src, ss, r, x.data());
        alu_scalar_row(op0, x.data(), n, s0[r].f, reverse0);
        acc[r] = val_f(reduce_run(reduce_op, acc[r].f, x.data(), n));
        encode_floats(dst.dtype, x.data(), bits.data(), n);
      } else {
        load_row_bits(src, ss, r, bits.data());
        for (int64_t i = 0; i < n; ++i) {
          const Val v = alu_step(op0, load_val(src.dtype, bits[i], int0), s0[r], reverse0);
          acc[r] = reduce_step(reduce_op, acc[r], v);
          bits[i] = encode_val(dst.dtype, v);
        }
      }
      w.emit(r, bits.data());
    }
    w.finish();
  }
  for (int64_t r = 0; r < std::min(reduce_res.rows, rows); ++r) {
    store_bits(reduce_res.dtype, reduce_res.at(r, 0), encode_val(reduce_res.dtype, acc[r]));
  }
}

}  // namespace semantics
}  // namespace ncv
