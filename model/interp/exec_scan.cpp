// Execution of the scans (tensor_tensor_scan, tensor_scalar_cumulative), in the order of every
// instruction (exec.cpp): resolve operands, check the instruction's rules, check reads, compute,
// mark writes, record. Both run on the Vector engine.
#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

void Interpreter::exec(int core, const TensorTensorScan& i) {
  Resolved a = compute_operand(core, i.src0, "src0", true);
  Resolved b = compute_operand(core, i.src1, "src1", true);
  std::optional<Resolved> col;
  ScalarArg initial = 0.0f;
  if (const auto* imm = std::get_if<Imm>(&i.initial)) {
    initial = imm->value;
  } else {
    col = compute_operand(core, std::get<Access>(i.initial), "initial", true);
    column_shape(*col, a.view.rows, "initial");
    initial = col->view;
  }
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(a, b, "tensor_tensor_scan inputs");
  same_shape(dst, a, "tensor_tensor_scan");
  if (opts_.compute_values) {
    if (opts_.observer) {
      opts_.observer->tensor_tensor_scan(dst.view, a.view, b.view, initial, i.op0, i.op1,
                                         i.reverse0, i.reverse1);
    }
    exec_tensor_tensor_scan(opts_.mode, dst.view, a.view, b.view, initial, i.op0, i.op1, i.reverse0,
                            i.reverse1);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&a, &b};
  if (col) reads.push_back(&*col);
  record(core, Engine::Vector, reads, {&dst},
         {.partitions = a.view.rows,
          .free_elems = a.view.free_elems(),
          .in = a.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const TensorScalarCumulative& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  std::vector<Resolved> cols;
  cols.reserve(2);
  auto operand = [&](const Operand& o, const char* role) -> ScalarArg {
    if (const auto* imm = std::get_if<Imm>(&o)) return imm->value;
    cols.push_back(compute_operand(core, std::get<Access>(o), role, true));
    column_shape(cols.back(), src.view.rows, role);
    return cols.back().view;
  };
  const ScalarArg imm0 = operand(i.imm0, "imm0");
  std::optional<ScalarArg> imm1;
  if (i.imm1) imm1 = operand(*i.imm1, "imm1");
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, src, "tensor_scalar_cumulative");
  if (opts_.compute_values) {
    check_vec_regs_defined(core, src.partition_begin, src.view.rows, i.reduce_cmd,
                           "tensor_scalar_cumulative");
    float* regs = m_.cores[core].vec_regs.data() + src.partition_begin;
    if (opts_.observer) {
      opts_.observer->tensor_scalar_cumulative(dst.view, src.view, i.op0, imm0, i.op1, i.reduce_cmd,
                                               imm1, regs);
    }
    exec_tensor_scalar_cumulative(opts_.mode, dst.view, src.view, i.op0, imm0, i.op1, i.reduce_cmd,
                                  imm1, regs);
    set_vec_regs_state(core, src.partition_begin, src.view.rows, i.reduce_cmd, false);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&src};
  for (const Resolved& c : cols) reads.push_back(&c);
  record(core, Engine::Vector, reads, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
