// Execution of tensor_partition_reduce, select_reduce, sequence_bounds and range_select, in the
// order of every instruction (exec.cpp): resolve operands, check the instruction's rules, check
// reads, compute, mark writes, record. The operand-shape rules here are the ones
// solver/isa_rules.cpp proves; the value checks (segment ids, accumulator state) need values.
#include <cmath>

#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

// Index values of range_select are compared in fp32: the page asks for range_start + index
// within 2^24, where every integer is exact.
constexpr int64_t kRangeSelectIndexLimit = int64_t{1} << 24;

}  // namespace

void Interpreter::exec(int core, const TensorPartitionReduce& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  const int64_t n = src.view.free_elems();
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), int64_t{1}, n)) {
    fail(Rule::reduce_dst_shape, "tensor_partition_reduce of " + shape_str(src) + " writes [1, " +
                                     std::to_string(n) + "] but '" + dst.tensor->name + "' is " +
                                     shape_str(dst));
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->tensor_partition_reduce(dst.view, src.view, i.op);
    exec_tensor_partition_reduce(opts_.mode, dst.view, src.view, i.op);
  }
  mark_written(dst);
  record(
      core, Engine::GpSimd, {&src}, {&dst},
      {.partitions = src.view.rows, .free_elems = n, .in = src.view.dtype, .out = dst.view.dtype});
}

void Interpreter::check_vec_regs_defined(int core, int64_t begin, int64_t rows, ReduceCmd cmd,
                                         const char* op) {
  if (cmd != ReduceCmd::reduce) return;
  const std::vector<uint8_t>& u = m_.cores[static_cast<size_t>(core)].vec_regs_undefined;
  for (int64_t r = begin; r < begin + rows; ++r) {
    const uint8_t why = u.at(static_cast<size_t>(r));
    if (why == kVecRegsAfterIdleSelect) {
      fail(CheckKind::undefined_result,
           std::string(op) +
               " with reduce_cmd=reduce continues the Vector accumulator of "
               "partition " +
               std::to_string(r) +
               ", which a select_reduce with reduce_cmd=idle left undefined (the select_reduce "
               "page: use reset_reduce after an idle one)");
    }
    if (why == kVecRegsAfterTensorScalarReduce) {
      fail(CheckKind::undefined_result,
           std::string(op) +
               " with reduce_cmd=reduce continues the Vector accumulator of "
               "partition " +
               std::to_string(r) +
               ", which holds a tensor_scalar_reduce's reduction (the accumulator is shared, the "
               "page says); the model does not keep that value there");
    }
  }
}

void Interpreter::set_vec_regs_state(int core, int64_t begin, int64_t rows, ReduceCmd cmd,
                                     bool idle_clobbers) {
  std::vector<uint8_t>& u = m_.cores[static_cast<size_t>(core)].vec_regs_undefined;
  const bool starts =
      cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce || cmd == ReduceCmd::load_reduce;
  if (!starts && !(idle_clobbers && cmd == ReduceCmd::idle)) return;
  for (int64_t r = begin; r < begin + rows; ++r) {
    u.at(static_cast<size_t>(r)) = starts ? kVecRegsDefined : kVecRegsAfterIdleSelect;
  }
}

void Interpreter::exec(int core, const SelectReduce& i) {
  Resolved pred = compute_operand(core, i.predicate, "predicate", true);
  Resolved on_true = compute_operand(core, i.on_true, "on_true", true);
  std::optional<Resolved> col;
  ScalarArg on_false = 0.0f;
  if (const auto* imm = std::get_if<Imm>(&i.on_false)) {
    on_false = imm->value;
  } else {
    col = compute_operand(core, std::get<Access>(i.on_false), "on_false", true);
    column_shape(*col, on_true.view.rows, "on_false");
    on_false = col->view;
  }
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(pred, on_true, "select_reduce predicate");
  same_shape(dst, on_true, "select_reduce");
  std::optional<Resolved> rr;
  if (i.reduce_res) {
    rr = compute_operand(core, *i.reduce_res, "reduce_res", false);
    column_shape(*rr, on_true.view.rows, "reduce_res");
  }
  const int64_t rows = on_true.view.rows;
  if (opts_.compute_values) {
    check_vec_regs_defined(core, on_true.partition_begin, rows, i.reduce_cmd, "select_reduce");
    float* regs = m_.cores[core].vec_regs.data() + on_true.partition_begin;
    std::optional<View> rv;
    if (rr) rv = rr->view;
    if (opts_.observer) {
      opts_.observer->select_reduce(dst.view, pred.view, on_true.view, on_false, i.reverse_pred,
                                    i.reduce_cmd, regs, rv);
    }
    exec_select_reduce(opts_.mode, dst.view, pred.view, on_true.view, on_false, i.reverse_pred,
                       i.reduce_cmd, regs, rv);
    set_vec_regs_state(core, on_true.partition_begin, rows, i.reduce_cmd, true);
  }
  mark_written(dst);
  if (rr) mark_written(*rr);
  std::vector<const Resolved*> reads = {&pred, &on_true};
  if (col) reads.push_back(&*col);
  std::vector<const Resolved*> writes = {&dst};
  if (rr) writes.push_back(&*rr);
  record(core, Engine::Vector, reads, writes,
         {.partitions = rows,
          .free_elems = on_true.view.free_elems(),
          .reduce_readout = rr.has_value(),
          .in = on_true.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const SequenceBounds& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  const int64_t n = src.view.free_elems();
  if (src.view.rows != 1) {
    fail(Rule::reduce_dst_shape,
         "sequence_bounds reads one partition of segment ids (the page: "
         "\"the partition dimension must always be 1\"); '" +
             src.tensor->name + "' is " + shape_str(src));
  }
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), int64_t{1}, 2 * n)) {
    fail(Rule::reduce_dst_shape, "sequence_bounds of " + std::to_string(n) + " ids writes [1, 2, " +
                                     std::to_string(n) + "] but '" + dst.tensor->name + "' is " +
                                     shape_str(dst));
  }
  if (opts_.compute_values) {
    if (const auto bad = sequence_bounds_bad_id(src.view)) {
      fail(CheckKind::undefined_result,
           "sequence_bounds: segment id " + std::to_string(*bad) + " of '" + src.tensor->name +
               "' is " +
               std::to_string(decode_to_float(src.view.dtype,
                                              load_bits(src.view.dtype, src.view.at(0, *bad)))) +
               "; the page defines bounds for non-negative integer ids only");
    }
    if (opts_.observer) opts_.observer->opaque(dst.view, "sequence_bounds");
    exec_sequence_bounds(opts_.mode, dst.view, src.view);
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {&src}, {&dst},
         {.partitions = 1, .free_elems = n, .in = src.view.dtype, .out = dst.view.dtype});
}

void Interpreter::exec(int core, const RangeSelect& i) {
  if (!range_select_ok(hw_)) {
    fail(Rule::range_select_generation,
         "range_select needs NeuronCore-v3 or newer (the page: "
         "\"Available only on NeuronCore-v3 and newer\"); " +
             hw_.name + " is NeuronCore-v" + std::to_string(hw_.generation));
  }
  Resolved on_true = compute_operand(core, i.on_true, "on_true", true);
  const int64_t rows = on_true.view.rows;
  Resolved b0 = compute_operand(core, i.bound0, "bound0", true);
  column_shape(b0, rows, "bound0");
  Resolved b1 = compute_operand(core, i.bound1, "bound1", true);
  column_shape(b1, rows, "bound1");
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, on_true, "range_select");
  std::optional<Resolved> rr;
  if (i.reduce_res) {
    rr = compute_operand(core, *i.reduce_res, "reduce_res", false);
    column_shape(*rr, rows, "reduce_res");
  }
  const int64_t start = eval(i.range_start, m_.cores[core].env);
  const int64_t n = on_true.view.free_elems();
  const int64_t last = start + std::max<int64_t>(n - 1, 0);
  if (start < -kRangeSelectIndexLimit || last > kRangeSelectIndexLimit) {
    fail(CheckKind::undefined_result, "range_select compares range_start + index in fp32; " +
                                          std::to_string(start) + " .. " + std::to_string(last) +
                                          " leaves [-2^24, 2^24] (the page: keep it within 2^24)");
  }
  if (opts_.compute_values) {
    check_vec_regs_defined(core, on_true.partition_begin, rows, i.reduce_cmd, "range_select");
    float* regs = m_.cores[core].vec_regs.data() + on_true.partition_begin;
    std::optional<View> rv;
    if (rr) rv = rr->view;
    if (opts_.observer) {
      opts_.observer->range_select(dst.view, on_true.view, b0.view, b1.view, i.cmp0, i.cmp1, start,
                                   i.on_false.value, i.reduce_cmd, regs, rv);
    }
    exec_range_select(opts_.mode, dst.view, on_true.view, b0.view, b1.view, i.cmp0, i.cmp1, start,
                      i.on_false.value, i.reduce_cmd, regs, rv);
    set_vec_regs_state(core, on_true.partition_begin, rows, i.reduce_cmd, false);
  }
  mark_written(dst);
  if (rr) mark_written(*rr);
  std::vector<const Resolved*> writes = {&dst};
  if (rr) writes.push_back(&*rr);
  record(core, Engine::Vector, {&on_true, &b0, &b1}, writes,
         {.partitions = rows,
          .free_elems = n,
          .reduce_readout = rr.has_value(),
          .in = on_true.view.dtype,
          .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
