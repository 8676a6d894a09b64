// The execution of the top-8 family (max8, nc_find_index8, nc_match_replace8) and of the random
// draws (rand, dropout), in exec.cpp's order: resolve operands, check the instruction's rules,
// check reads, compute (value runs), mark written bytes, record the trace.
#include <cstdio>

#include "model/interp/interp.h"
#include "model/semantics/random.h"
#include "model/semantics/top8.h"

namespace ncv {
inline namespace interp {

namespace {

std::string float_str(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

}  // namespace

void Interpreter::top8_values_shape(const Resolved& r, int64_t rows, const char* what) {
  if (!shape_is(IntOps{}, r.view.rows, r.view.free_elems(), rows, kTop8Values)) {
    fail(Rule::top8_values, std::string(what) + " '" + r.tensor->name + "' is " + shape_str(r) +
                                "; it must be [" + std::to_string(rows) +
                                ", 8]: 8 values per partition");
  }
}

void Interpreter::top8_source_size(const Resolved& r, int64_t min_free, const char* what) {
  if (!top8_source_size_ok(IntOps{}, r.view.free_elems(), min_free)) {
    fail(Rule::top8_source_size, std::string(what) + " '" + r.tensor->name + "' has " +
                                     std::to_string(r.view.free_elems()) +
                                     " elements per partition; the instruction reads " +
                                     std::to_string(min_free) + " to " +
                                     std::to_string(kTop8MaxSource));
  }
}

namespace {

[[noreturn]] void undefined(const char* op, const Top8Miss& m) {
  fail_check(CheckKind::undefined_result,
             std::string(op) + ": value " + float_str(m.value) + " (vals[" + std::to_string(m.row) +
                 ", " + std::to_string(m.k) + "]) is not in partition " + std::to_string(m.row) +
                 " of the data; the ISA leaves the result undefined for a value the data does "
                 "not hold");
}

}  // namespace

void Interpreter::exec(int core, const Max8& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  top8_source_size(src, kTop8MinSource, "max8 source");
  top8_values_shape(dst, src.view.rows, "max8 destination");
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->opaque(dst.view, "max8");
    exec_max8(dst.view, src.view);
  }
  mark_written(dst);
  record(core, Engine::Vector, {&src}, {&dst},
         {.partitions = src.view.rows,
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const FindIndex8& i) {
  Resolved vals = compute_operand(core, i.vals, "vals", true);
  Resolved data = compute_operand(core, i.data, "data", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  top8_source_size(data, kTop8MinSource, "nc_find_index8 data");
  top8_values_shape(vals, data.view.rows, "nc_find_index8 vals");
  top8_values_shape(dst, data.view.rows, "nc_find_index8 destination");
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->opaque(dst.view, "nc_find_index8");
    if (auto miss = exec_find_index8(dst.view, data.view, vals.view, i.successive)) {
      undefined("nc_find_index8", *miss);
    }
  }
  mark_written(dst);
  record(core, Engine::Vector, {&data, &vals}, {&dst},
         {.partitions = data.view.rows,
          .free_elems = data.view.free_elems(),
          .in = data.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const MatchReplace8& i) {
  Resolved vals = compute_operand(core, i.vals, "vals", true);
  Resolved data = compute_operand(core, i.data, "data", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  std::optional<Resolved> idx;
  if (i.dst_idx) idx = compute_operand(core, *i.dst_idx, "dst_idx", false);
  top8_source_size(data, 1, "nc_match_replace8 data");
  top8_values_shape(vals, data.view.rows, "nc_match_replace8 vals");
  same_shape(dst, data, "nc_match_replace8");
  if (idx) top8_values_shape(*idx, data.view.rows, "nc_match_replace8 dst_idx");
  if (opts_.compute_values) {
    if (opts_.observer) {
      opts_.observer->opaque(dst.view, "nc_match_replace8");
      if (idx) opts_.observer->opaque(idx->view, "nc_match_replace8 dst_idx");
    }
    if (auto miss = exec_match_replace8(dst.view, data.view, vals.view, i.imm.value,
                                        idx ? &idx->view : nullptr, i.reverse)) {
      undefined("nc_match_replace8", *miss);
    }
  }
  mark_written(dst);
  std::vector<const Resolved*> writes = {&dst};
  if (idx) {
    mark_written(*idx);
    writes.push_back(&*idx);
  }
  record(core, Engine::Vector, {&data, &vals}, writes,
         {.partitions = data.view.rows,
          .free_elems = data.view.free_elems(),
          .in = data.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Rand& i) {
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  const uint64_t stream = random_stream(core, m_.cores[static_cast<size_t>(core)].random_draws++);
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->opaque(dst.view, "rand");
    exec_rand(dst.view, opts_.random_seed, stream);
  }
  mark_written(dst);
  record(core, Engine::Vector, {}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = dst.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const Dropout& i) {
  Resolved data = compute_operand(core, i.data, "data", true);
  std::optional<Resolved> col;
  ScalarArg prob = 0.0f;
  if (auto* imm = std::get_if<Imm>(&i.prob)) {
    prob = imm->value;
  } else {
    col = compute_operand(core, std::get<Access>(i.prob), "prob", true);
    column_shape(*col, data.view.rows, "prob");
    prob = col->view;
  }
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  same_shape(dst, data, "dropout");
  const uint64_t stream = random_stream(core, m_.cores[static_cast<size_t>(core)].random_draws++);
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->opaque(dst.view, "dropout");
    exec_dropout(dst.view, data.view, prob, opts_.random_seed, stream);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&data};
  if (col) reads.push_back(&*col);
  record(core, Engine::Vector, reads, {&dst},
         {.partitions = data.view.rows,
          .free_elems = data.view.free_elems(),
          .in = data.view.dtype,
          .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
