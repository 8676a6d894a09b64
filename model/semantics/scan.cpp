// Scans: tensor_tensor_scan and tensor_scalar_cumulative. Each partition's free elements are
// visited in row-major order of the view; the running value is an fp32 register (the Vector
// engine computes in fp32) and each output element is that register converted to dst's dtype.
// A scan is sequential by nature, so the fast path differs from the reference only in how a
// row is read and written (decode_row / RowWriter instead of per-element View::at); the
// arithmetic is the same loop.
#include <algorithm>
#include <optional>
#include <vector>

#include "model/semantics/internal.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace semantics {

namespace {

// One row of inputs decoded to fp32, by either path.
void load_row(ExecMode mode, const View& v, const RowShape& s, int64_t r, float* out) {
  if (mode == ExecMode::fast) return decode_row(v, s, r, out);
  const int64_t n = v.free_elems();
  for (int64_t f = 0; f < n; ++f) out[f] = decode_to_float(v.dtype, ref_load(v, r, f));
}

// One ALU step, kept out of line: inlined into a loop that switches on two operators and two
// flags, GCC's loop unswitching at -O3 multiplies the loop into every combination (gigabytes of
// compiler memory). A scan is sequential anyway; the call costs little next to it.
[[gnu::noinline]] float alu(AluOp op, float a, float b) {
  return alu_float(op, a, b);
}

float scalar_of(const ScalarArg& a, int64_t r) {
  return resolve_scalar(a, r).f;
}

// Computes every row's fp32 outputs with `row_fn(r, out)` first, then writes them: so a dst that
// overlaps an input still sees the inputs' old values (semantics.h, aliasing).
template <class RowFn>
void write_rows(ExecMode mode, const View& dst, const std::vector<const View*>& inputs,
                RowFn&& row_fn) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  if (mode == ExecMode::reference) {
    std::vector<float> all(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) row_fn(r, all.data() + r * n);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) {
        store_bits(dst.dtype, dst.at(r, f), encode_from_float(dst.dtype, all[r * n + f]));
      }
    }
    return;
  }
  bool stream = true;
  for (const View* in : inputs) stream = stream && rows_independent(dst, *in);
  RowWriter w(dst, stream);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    row_fn(r, out.data());
    w.emit_floats(r, out.data());
  }
  w.finish();
}

}  // namespace

void exec_tensor_tensor_scan(ExecMode mode, const View& dst, const View& src0, const View& src1,
                             const ScalarArg& initial, AluOp op0, AluOp op1, bool reverse0,
                             bool reverse1) {
  const int64_t n = dst.free_elems();
  const RowShape s0 = row_shape(src0), s1 = row_shape(src1);
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  std::vector<const View*> inputs = {&src0, &src1};
  if (const View* col = std::get_if<View>(&initial)) inputs.push_back(col);
  write_rows(mode, dst, inputs, [&](int64_t r, float* out) {
    load_row(mode, src0, s0, r, a.data());
    load_row(mode, src1, s1, r, b.data());
    float acc = scalar_of(initial, r);
    for (int64_t f = 0; f < n; ++f) {
      const float x = reverse0 ? alu(op0, acc, a[f]) : alu(op0, a[f], acc);
      acc = reverse1 ? alu(op1, b[f], x) : alu(op1, x, b[f]);
      out[f] = acc;
    }
  });
}

void exec_tensor_scalar_cumulative(ExecMode mode, const View& dst, const View& src, AluOp op0,
                                   const ScalarArg& imm0, AluOp op1, ReduceCmd cmd,
                                   const std::optional<ScalarArg>& imm1, float* regs) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  const RowShape ss = row_shape(src);
  std::vector<float> x(static_cast<size_t>(n));
  // The registers' starting values are read before anything is written.
  std::vector<float> acc(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    if (cmd == ReduceCmd::load_reduce && imm1) {
      acc[r] = scalar_of(*imm1, r);
    } else if (cmd == ReduceCmd::reduce) {
      acc[r] = regs[r];
    } else {
      acc[r] = reduction_identity(op1);  // reset_reduce
    }
  }
  std::vector<const View*> inputs = {&src};
  if (const View* col = std::get_if<View>(&imm0)) inputs.push_back(col);
  if (imm1) {
    if (const View* col = std::get_if<View>(&*imm1)) inputs.push_back(col);
  }
  write_rows(mode, dst, inputs, [&](int64_t r, float* out) {
    load_row(mode, src, ss, r, x.data());
    const float s = scalar_of(imm0, r);
    float reg = acc[r];
    for (int64_t f = 0; f < n; ++f) {
      reg = alu(op1, alu(op0, x[f], s), reg);
      out[f] = reg;
    }
    acc[r] = reg;
  });
  for (int64_t r = 0; r < rows; ++r) regs[r] = acc[r];
}

}  // namespace semantics
}  // namespace ncv
