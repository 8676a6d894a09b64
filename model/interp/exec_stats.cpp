// Execution of bn_stats and bn_aggr (Vector engine), in the order of every instruction
// (exec.cpp). Their operand-shape rules (at most kBnStatsMaxFree elements in and [P, 6] out;
// whole triples in and [P, 2] out) are the ones solver/isa_rules.cpp proves.
#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

void Interpreter::exec(int core, const BnStats& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  const int64_t n = src.view.free_elems();
  if (!within_limit(IntOps{}, n, kBnStatsMaxFree)) {
    fail(Rule::free_size, "bn_stats reads at most " + std::to_string(kBnStatsMaxFree) +
                              " elements per partition (nl.tile_size.bn_stats_fmax); '" +
                              src.tensor->name + "' is " + shape_str(src));
  }
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), src.view.rows, 6)) {
    fail(Rule::reduce_dst_shape, "bn_stats writes [" + std::to_string(src.view.rows) +
                                     ", 6] but '" + dst.tensor->name + "' is " + shape_str(dst));
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->bn_stats(dst.view, src.view);
    exec_bn_stats(opts_.mode, dst.view, src.view);
  }
  mark_written(dst);
  record(
      core, Engine::Vector, {&src}, {&dst},
      {.partitions = src.view.rows, .free_elems = n, .in = src.view.dtype, .out = dst.view.dtype});
}

void Interpreter::exec(int core, const BnAggr& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  const int64_t n = src.view.free_elems();
  if (n % 3 != 0) {
    fail(Rule::free_size, "bn_aggr reads (count, mean, variance * count) triples: '" +
                              src.tensor->name + "' is " + shape_str(src) +
                              ", not a multiple of 3 elements per partition");
  }
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), src.view.rows, 2)) {
    fail(Rule::reduce_dst_shape, "bn_aggr writes [" + std::to_string(src.view.rows) + ", 2] but '" +
                                     dst.tensor->name + "' is " + shape_str(dst));
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->bn_aggr(dst.view, src.view);
    exec_bn_aggr(opts_.mode, dst.view, src.view);
  }
  mark_written(dst);
  record(
      core, Engine::Vector, {&src}, {&dst},
      {.partitions = src.view.rows, .free_elems = n, .in = src.view.dtype, .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
