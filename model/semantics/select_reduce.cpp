// select_reduce and range_select: a per-element choice between a tile and a per-partition value,
// with a max over the chosen values in the Vector engine's accumulator registers.
//
// The chosen value is the fp32 value of on_true (or of on_false), converted once to dst's dtype;
// the accumulator takes the fp32 value before that conversion (range_select's page: with an fp32
// reduce_res the fill value stays fp32's lowest value while a bf16 dst holds -inf). The register
// follows reduce_cmd: reset and reset_reduce start it at -inf (the select_reduce page: "Reset
// accumulators to -inf"), reduce and reset_reduce take max(reg, x) per element in row-major
// order, idle leaves it. reduce_res, when given, receives the registers after the instruction.
//
// One per-element path for both modes (as top8.cpp): every input is read before any output is
// written, so overlapping operands see the old values.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

bool accumulates(ReduceCmd cmd) {
  return cmd == ReduceCmd::reduce || cmd == ReduceCmd::reset_reduce;
}

// Runs `choose(r, f) -> fp32` over dst, then updates the registers and writes dst and reduce_res.
template <class Choose>
void select_rows(const View& dst, ReduceCmd cmd, float* regs, const std::optional<View>& rr,
                 Choose&& choose) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  std::vector<float> x(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) x[static_cast<size_t>(r * n + f)] = choose(r, f);
  }
  if (cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce) {
    std::fill(regs, regs + rows, -std::numeric_limits<float>::infinity());
  }
  if (accumulates(cmd)) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) regs[r] = f_max(regs[r], x[static_cast<size_t>(r * n + f)]);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      store_bits(dst.dtype, dst.at(r, f),
                 encode_from_float(dst.dtype, x[static_cast<size_t>(r * n + f)]));
    }
  }
  if (rr) {
    for (int64_t r = 0; r < std::min(rr->rows, rows); ++r) {
      store_bits(rr->dtype, rr->at(r, 0), encode_from_float(rr->dtype, regs[r]));
    }
  }
}

bool compare(CmpOp op, float a, float b) {
  switch (op) {
    case CmpOp::eq:
      return a == b;
    case CmpOp::ne:
      return a != b;
    case CmpOp::lt:
      return a < b;
    case CmpOp::le:
      return a <= b;
    case CmpOp::gt:
      return a > b;
    case CmpOp::ge:
      return a >= b;
  }
  return false;
}

}  // namespace

void exec_select_reduce(ExecMode, const View& dst, const View& predicate, const View& on_true,
                        const ScalarArg& on_false, bool reverse_pred, ReduceCmd cmd, float* regs,
                        const std::optional<View>& reduce_res) {
  select_rows(dst, cmd, regs, reduce_res, [&](int64_t r, int64_t f) {
    const bool p = int_from_bits(predicate.dtype, ref_load(predicate, r, f)) != 0;
    if (p != reverse_pred) return decode_to_float(on_true.dtype, ref_load(on_true, r, f));
    return resolve_scalar(on_false, r).f;
  });
}

void exec_range_select(ExecMode, const View& dst, const View& on_true, const View& bound0,
                       const View& bound1, CmpOp cmp0, CmpOp cmp1, int64_t range_start,
                       float on_false, ReduceCmd cmd, float* regs,
                       const std::optional<View>& reduce_res) {
  select_rows(dst, cmd, regs, reduce_res, [&](int64_t r, int64_t f) {
    // The page: the index and the bounds are compared in fp32 (the interpreter keeps the index
    // within 2^24, where fp32 holds it exactly).
    const auto i = static_cast<float>(range_start + f);
    const float b0 = decode_to_float(bound0.dtype, ref_load(bound0, r, 0));
    const float b1 = decode_to_float(bound1.dtype, ref_load(bound1, r, 0));
    if (compare(cmp0, i, b0) && compare(cmp1, i, b1)) {
      return decode_to_float(on_true.dtype, ref_load(on_true, r, f));
    }
    return on_false;
  });
}

}  // namespace semantics
}  // namespace ncv
