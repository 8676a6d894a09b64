// Execution of the gathers (local_gather, gather_flattened; GpSimd engine) and of
// nc_stream_shuffle (Vector engine), in exec.cpp's order: resolve operands, check the
// instruction's rules, check reads, compute (value runs), mark written bytes, record. An index
// outside its source is an out_of_bounds failure of the value run (the pages call such a read
// undefined or garbage), never a silent read.
#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

std::string name_of(const Resolved& r) {
  return "'" + r.tensor->name + "'";
}

// One row of an on-chip operand (its partitions are consecutive), for marking what a shuffle
// writes when some of dst's partitions keep their values.
Resolved row_of(const Resolved& r, int64_t row) {
  Resolved one = r;
  one.partition_begin = r.partition_begin + row;
  one.view.rows = 1;
  one.partitions = 1;  // what the shadow checks cover (resolved.h)
  if (r.view.base != nullptr) one.view.base = r.view.row(row);
  return one;
}

}  // namespace

// nki.isa.local_gather (SDK 2.26): src, index and dst on the same partitions, a multiple of 16
// of them (each 16 are one GpSimd core's); n indices per core (num_valid_indices, or all 16 * K
// of the core's index elements), at most 4096 and at most 16 * K; dst holds n * E elements per
// partition. The solver proves the same shape rules (solver/isa_rules.cpp).
void Interpreter::exec(int core, const LocalGather& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved index = compute_operand(core, i.index, "index", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  for (const Resolved* r : {&index, &dst}) {
    if (r->view.rows != src.view.rows) {
      fail(Rule::same_shape, "local_gather: " + name_of(*r) + " spans " +
                                 std::to_string(r->view.rows) + " partitions and source " +
                                 name_of(src) + " " + std::to_string(src.view.rows) +
                                 "; they must match");
    }
    if (r->partition_begin != src.partition_begin) {
      fail(Rule::partition_start, "local_gather: " + name_of(*r) + " starts at partition " +
                                      std::to_string(r->partition_begin) + " and source " +
                                      name_of(src) + " at " + std::to_string(src.partition_begin) +
                                      "; each GpSimd core gathers within its own 16 partitions");
    }
  }
  if (src.view.rows % kLocalGatherGroup != 0) {
    fail(Rule::partition_start, "local_gather: " + std::to_string(src.view.rows) +
                                    " partitions; the partition count must be a multiple of 16 "
                                    "(16 per GpSimd core)");
  }
  const int64_t per_core = kLocalGatherGroup * index.view.free_elems();
  const int64_t n = local_gather_indices(index.view, i.num_valid_indices);
  if (n > per_core || n > kLocalGatherMaxIndices) {
    fail(Rule::same_shape, "local_gather: " + std::to_string(n) + " indices per core, but " +
                               (n > per_core ? "index " + name_of(index) + " holds " +
                                                   std::to_string(per_core) + " per core"
                                             : std::string("a core gathers at most 4096")));
  }
  if (dst.view.free_elems() != n * i.num_elem_per_idx) {
    fail(Rule::same_shape, "local_gather: destination " + name_of(dst) + " has " +
                               std::to_string(dst.view.free_elems()) +
                               " elements per partition; the gather writes " + std::to_string(n) +
                               " indices x " + std::to_string(i.num_elem_per_idx) + " elements");
  }
  if (opts_.compute_values) {
    // The gathered positions depend on index values: outside the term language.
    if (opts_.observer) opts_.observer->opaque(dst.view, "local_gather");
    if (auto m = exec_local_gather(opts_.mode, dst.view, src.view, index.view, i.num_elem_per_idx,
                                   i.num_valid_indices)) {
      fail(CheckKind::out_of_bounds,
           "local_gather: index " + name_of(index) + "[" + std::to_string(m->row) + ", " +
               std::to_string(m->position) + "] = " + std::to_string(m->index) +
               " reads elements " + std::to_string(m->index) + ".." +
               std::to_string(m->index + i.num_elem_per_idx - 1) + " of each partition, but " +
               name_of(src) + " has " + std::to_string(m->limit) +
               " (the page leaves an out-of-bound index undefined)");
    }
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {&src, &index}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

// nki.isa.nc_stream_shuffle (SDK 2.26): the same elements per partition; every partition of dst
// that copies names a partition src has; src and dst start where num_active_partitions =
// ceil(max(src, dst partitions) / 32) * 32 allows (96/128: 0; 64: 0 or 64; 32: a multiple of 32),
// which is the engines' start rule at that partition count.
void Interpreter::exec(int core, const StreamShuffle& i) {
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  if (dst.view.free_elems() != src.view.free_elems()) {
    fail(Rule::same_shape, "nc_stream_shuffle: destination " + name_of(dst) + " is " +
                               shape_str(dst) + " and source " + name_of(src) + " " +
                               shape_str(src) + "; they need the same elements per partition");
  }
  const int64_t widest = std::max(src.view.rows, dst.view.rows);
  const int64_t active = (widest + kShuffleQuadrant - 1) / kShuffleQuadrant * kShuffleQuadrant;
  for (const Resolved* r : {&src, &dst}) {
    if (!partition_start_ok(IntOps{}, r->partition_begin, active, hw_)) {
      fail(Rule::partition_start,
           "nc_stream_shuffle: " + name_of(*r) + " starts at partition " +
               std::to_string(r->partition_begin) + " with " + std::to_string(active) +
               " active partitions (96/128 start at 0, 64 at 0 or 64, 32 at a multiple of 32)");
    }
  }
  bool keeps = false;
  for (int64_t r = 0; r < dst.view.rows; ++r) {
    const int64_t s = shuffle_source_row(i.shuffle_mask, r);
    keeps = keeps || s < 0;
    if (s >= src.view.rows) {
      fail(Rule::same_shape, "nc_stream_shuffle: partition " + std::to_string(r) +
                                 " of the destination copies partition " + std::to_string(s) +
                                 " of source " + name_of(src) + ", which spans " +
                                 std::to_string(src.view.rows) + " partitions");
    }
  }
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->stream_shuffle(dst.view, src.view, i.shuffle_mask);
    exec_stream_shuffle(opts_.mode, dst.view, src.view, i.shuffle_mask);
  }
  if (!keeps) {
    mark_written(dst);
  } else {
    // 255 leaves a partition unchanged: only the others become written.
    for (int64_t r = 0; r < dst.view.rows; ++r) {
      if (shuffle_source_row(i.shuffle_mask, r) >= 0) mark_written(row_of(dst, r));
    }
  }
  record(core, Engine::Vector, {&src}, {&dst},
         {.partitions = std::max(src.view.rows, dst.view.rows),
          .free_elems = src.view.free_elems(),
          .in = src.view.dtype,
          .out = dst.view.dtype});
}

// nl.gather_flattened (SDK 2.26): data, indices and dst over the same partitions; dst has the
// indices' elements per partition.
void Interpreter::exec(int core, const GatherFlattened& i) {
  Resolved data = compute_operand(core, i.data, "data", true);
  Resolved indices = compute_operand(core, i.indices, "indices", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  for (const Resolved* r : {&indices, &dst}) {
    if (r->view.rows != data.view.rows) {
      fail(Rule::same_shape, "gather_flattened: " + name_of(*r) + " spans " +
                                 std::to_string(r->view.rows) + " partitions and data " +
                                 name_of(data) + " " + std::to_string(data.view.rows) +
                                 "; they must match");
    }
  }
  if (dst.view.free_elems() != indices.view.free_elems()) {
    fail(Rule::same_shape, "gather_flattened: destination " + name_of(dst) + " is " +
                               shape_str(dst) + " and indices " + name_of(indices) + " " +
                               shape_str(indices) + "; the result has the indices' shape");
  }
  if (opts_.compute_values) {
    // The gathered positions depend on index values: outside the term language.
    if (opts_.observer) opts_.observer->opaque(dst.view, "gather_flattened");
    if (auto m = exec_gather_flattened(opts_.mode, dst.view, data.view, indices.view)) {
      fail(CheckKind::out_of_bounds,
           "gather_flattened: indices " + name_of(indices) + "[" + std::to_string(m->row) + ", " +
               std::to_string(m->position) + "] = " + std::to_string(m->index) + ", but data " +
               name_of(data) + " has " + std::to_string(m->limit) +
               " elements per partition (the page: out-of-bounds indices return garbage)");
    }
  }
  mark_written(dst);
  record(core, Engine::GpSimd, {&data, &indices}, {&dst},
         {.partitions = dst.view.rows,
          .free_elems = dst.view.free_elems(),
          .in = data.view.dtype,
          .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
