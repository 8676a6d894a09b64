// How each instruction's fields are spelled in the .nkir text form. One description drives both
// the printer (model/ir/printer.cpp) and the parser (model/nkir/parser.cpp), so they cannot
// disagree, and the defaults are read from the instruction structs themselves. Internal; see
// model/nkir/NKIR.md.
#pragma once

#include <type_traits>

#include "model/ir/instruction.h"

namespace ncv {
inline namespace ir {

// describe(ins, v) calls, in print order:
//   v.pos(name, field)            a positional argument (required)
//   v.req(name, field)            a required `name=value` attribute
//   v.opt(name, field, default)   `name=value`, printed only when it differs from the default
//   v.show(name, field, default)  `name=value`, always printed, the default when omitted
// `I` is an instruction struct, possibly const.
template <typename I, typename V>
void describe(I& i, V& v) {
  using T = std::remove_const_t<I>;
  const T d{};  // defaults
  if constexpr (std::is_same_v<T, DmaCopy>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.opt("queue", i.queue, d.queue);
    v.opt("oob_skip", i.oob_skip, d.oob_skip);
    v.opt("dst_rmw", i.dst_rmw, d.dst_rmw);
  } else if constexpr (std::is_same_v<T, Matmul>) {
    v.pos("dst", i.dst);
    v.req("stationary", i.stationary);
    v.req("moving", i.moving);
    v.opt("accumulate", i.accumulate, d.accumulate);
  } else if constexpr (std::is_same_v<T, Transpose>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, Activation>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("func", i.func, d.func);
    v.opt("scale", i.scale, d.scale);
    v.opt("bias", i.bias, d.bias);
    v.opt("reduce_cmd", i.reduce_cmd, d.reduce_cmd);
    v.opt("reduce_res", i.reduce_res, d.reduce_res);
  } else if constexpr (std::is_same_v<T, TensorReduce>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("op", i.op, d.op);
    v.opt("axes", i.axes, d.axes);
    v.opt("negate", i.negate, d.negate);
  } else if constexpr (std::is_same_v<T, TensorScalar>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("op0", i.op0, d.op0);
    v.show("operand0", i.operand0, d.operand0);
    v.opt("reverse0", i.reverse0, d.reverse0);
    v.opt("op1", i.op1, d.op1);
    v.opt("operand1", i.operand1, d.operand1);
    v.opt("reverse1", i.reverse1, d.reverse1);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, TensorTensor>) {
    v.pos("dst", i.dst);
    v.pos("src0", i.src0);
    v.pos("src1", i.src1);
    v.show("op", i.op, d.op);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, TensorScalarReduce>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("op0", i.op0, d.op0);
    v.show("operand0", i.operand0, d.operand0);
    v.opt("reverse0", i.reverse0, d.reverse0);
    v.show("reduce_op", i.reduce_op, d.reduce_op);
    v.req("reduce_res", i.reduce_res);
  } else if constexpr (std::is_same_v<T, TensorCopy>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, TensorCopyPredicated>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.req("predicate", i.predicate);
    v.opt("reverse_predicate", i.reverse_predicate, d.reverse_predicate);
  } else if constexpr (std::is_same_v<T, AffineSelect>) {
    v.pos("dst", i.dst);
    v.req("on_true", i.on_true);
    v.show("offset", i.offset, d.offset);
    v.show("channel_multiplier", i.channel_multiplier, d.channel_multiplier);
    v.show("steps", i.steps, d.steps);
    v.show("cmp", i.cmp, d.cmp);
    v.show("on_false", i.on_false, d.on_false);
  } else if constexpr (std::is_same_v<T, Iota>) {
    v.pos("dst", i.dst);
    v.show("offset", i.offset, d.offset);
    v.show("channel_multiplier", i.channel_multiplier, d.channel_multiplier);
    v.show("steps", i.steps, d.steps);
  } else if constexpr (std::is_same_v<T, Memset>) {
    v.pos("dst", i.dst);
    v.show("value", i.value, d.value);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, Reciprocal>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.opt("engine", i.engine, d.engine);
  } else if constexpr (std::is_same_v<T, TensorTensorScan>) {
    v.pos("dst", i.dst);
    v.pos("src0", i.src0);
    v.pos("src1", i.src1);
    v.show("initial", i.initial, d.initial);
    v.show("op0", i.op0, d.op0);
    v.show("op1", i.op1, d.op1);
    v.opt("reverse0", i.reverse0, d.reverse0);
    v.opt("reverse1", i.reverse1, d.reverse1);
  } else if constexpr (std::is_same_v<T, TensorScalarCumulative>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("op0", i.op0, d.op0);
    v.show("imm0", i.imm0, d.imm0);
    v.show("op1", i.op1, d.op1);
    v.show("reduce_cmd", i.reduce_cmd, d.reduce_cmd);
    v.opt("imm1", i.imm1, d.imm1);
  } else if constexpr (std::is_same_v<T, BnStats> || std::is_same_v<T, BnAggr> ||
                       std::is_same_v<T, SequenceBounds>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
  } else if constexpr (std::is_same_v<T, LocalGather>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.req("index", i.index);
    v.show("num_elem_per_idx", i.num_elem_per_idx, d.num_elem_per_idx);
    v.opt("num_valid_indices", i.num_valid_indices, d.num_valid_indices);
  } else if constexpr (std::is_same_v<T, StreamShuffle>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.req("shuffle_mask", i.shuffle_mask);
  } else if constexpr (std::is_same_v<T, GatherFlattened>) {
    v.pos("dst", i.dst);
    v.pos("data", i.data);
    v.req("indices", i.indices);
  } else if constexpr (std::is_same_v<T, TensorPartitionReduce>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.show("op", i.op, d.op);
  } else if constexpr (std::is_same_v<T, SelectReduce>) {
    v.pos("dst", i.dst);
    v.req("predicate", i.predicate);
    v.req("on_true", i.on_true);
    v.show("on_false", i.on_false, d.on_false);
    v.opt("reduce_cmd", i.reduce_cmd, d.reduce_cmd);
    v.opt("reduce_res", i.reduce_res, d.reduce_res);
    v.opt("reverse_pred", i.reverse_pred, d.reverse_pred);
  } else if constexpr (std::is_same_v<T, MatmulMx>) {
    v.pos("dst", i.dst);
    v.req("stationary", i.stationary);
    v.req("moving", i.moving);
    v.req("stationary_scale", i.stationary_scale);
    v.req("moving_scale", i.moving_scale);
    v.opt("accumulate", i.accumulate, d.accumulate);
  } else if constexpr (std::is_same_v<T, QuantizeMx>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
    v.req("dst_scale", i.dst_scale);
  } else if constexpr (std::is_same_v<T, RangeSelect>) {
    v.pos("dst", i.dst);
    v.req("on_true", i.on_true);
    v.req("bound0", i.bound0);
    v.req("bound1", i.bound1);
    v.show("cmp0", i.cmp0, d.cmp0);
    v.show("cmp1", i.cmp1, d.cmp1);
    v.show("range_start", i.range_start, d.range_start);
    v.opt("on_false", i.on_false, d.on_false);
    v.opt("reduce_cmd", i.reduce_cmd, d.reduce_cmd);
    v.opt("reduce_res", i.reduce_res, d.reduce_res);
  } else if constexpr (std::is_same_v<T, Max8>) {
    v.pos("dst", i.dst);
    v.pos("src", i.src);
  } else if constexpr (std::is_same_v<T, FindIndex8>) {
    v.pos("dst", i.dst);
    v.req("data", i.data);
    v.req("vals", i.vals);
    v.opt("successive", i.successive, d.successive);
  } else if constexpr (std::is_same_v<T, MatchReplace8>) {
    v.pos("dst", i.dst);
    v.req("data", i.data);
    v.req("vals", i.vals);
    v.show("imm", i.imm, d.imm);
    v.opt("dst_idx", i.dst_idx, d.dst_idx);
    v.opt("reverse", i.reverse, d.reverse);
  } else if constexpr (std::is_same_v<T, Rand>) {
    v.pos("dst", i.dst);
  } else if constexpr (std::is_same_v<T, Dropout>) {
    v.pos("dst", i.dst);
    v.pos("data", i.data);
    v.show("prob", i.prob, d.prob);
  } else {
    static_assert(sizeof(T) == 0, "every instruction needs a text-form description");
  }
}

}  // namespace ir
}  // namespace ncv
