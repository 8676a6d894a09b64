// Execution of nc_matmul_mx and quantize_mx (NeuronCore-v4), in the order of every instruction
// (exec.cpp): resolve operands, check the rules, compute, mark writes, record. The shape rules
// are the ISA docstrings' "Tile size" lists (aws-neuron-sdk nki/api/nki/isa/__init__.py) and the
// scale layout of the MX deep dive (nki/deep-dives/mxfp-matmul.rst, "Scale Tensor"); the solver
// proves the same rules (solver/isa_rules.cpp). The equivalence layer gets opaque terms: MX
// arithmetic is outside its term language, so no proof rests on these values.
#include <algorithm>
#include <string>
#include <vector>

#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

constexpr int64_t kMxMaxPartitions = 128;
// nc_matmul_mx: moving free size up to the whole PSUM, 4096 fp32 or 8192 bf16 (the docstring).
constexpr int64_t kMxMaxMovingFp32 = 4096;
constexpr int64_t kMxMaxMovingBf16 = 8192;
constexpr int64_t kMxMaxStationaryFree = 128;

bool mx_partitions_ok(int64_t p) {
  return p > 0 && p % 32 == 0 && p <= kMxMaxPartitions;
}

// The parts of a scale operand the instruction reads or writes for data on `data_rows`
// partitions: the first 4 rows of each 32-row quadrant (mx_scale_row), so that the rows a
// kernel leaves unused are neither required to be written nor marked written. One part per
// quadrant; the whole operand when its rows are not consecutive partitions.
std::vector<Resolved> scale_parts(const Resolved& r, int64_t data_rows) {
  if (!r.tensor->on_chip() || r.partitions != r.view.rows || !r.row_offsets.empty()) return {r};
  std::vector<Resolved> parts;
  for (int64_t q = 0; q * 32 < data_rows; ++q) {
    Resolved part = r;
    const int64_t first = q * 32;
    const int64_t rows = std::min<int64_t>(
        mx_scale_row(std::min(data_rows, first + 32) - 1) - first + 1, r.view.rows - first);
    part.partition_begin = r.partition_begin + first;
    part.partitions = rows;
    part.view.rows = rows;
    if (part.view.base) part.view.base += first * r.view.row_stride;
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

void Interpreter::mx_scale_shape(const Resolved& scale, int64_t data_rows, int64_t data_free,
                                 const char* what) {
  const int64_t need = mx_scale_rows_needed(data_rows);
  if (scale.view.rows < need || scale.view.free_elems() != data_free) {
    fail(Rule::mx_layout,
         std::string(what) + " '" + scale.tensor->name + "' is " + shape_str(scale) + "; data on " +
             std::to_string(data_rows) + " partitions with " + std::to_string(data_free) +
             " packed elements per partition needs " + std::to_string(need) +
             "+ rows (one scale per 8 partitions, in the first 4 rows of "
             "each 32-partition quadrant) and " +
             std::to_string(data_free) + " columns (the MX deep dive, \"Scale Tensor\")");
  }
}

void Interpreter::exec(int core, const MatmulMx& i) {
  if (!mx_ok(hw_)) {
    fail(Rule::mx_generation,
         "nc_matmul_mx needs NeuronCore-v4 or newer (the ISA docstring: "
         "\"Available only on NeuronCore-v4 and newer\"); " +
             hw_.name + " is NeuronCore-v" + std::to_string(hw_.generation));
  }
  Resolved st = compute_operand(core, i.stationary, "stationary", true);
  Resolved mv = compute_operand(core, i.moving, "moving", true);
  // The scales' reads are checked on the rows the instruction reads (below).
  Resolved ss = compute_operand(core, i.stationary_scale, "stationary_scale", false);
  Resolved ms = compute_operand(core, i.moving_scale, "moving_scale", false);
  Resolved dst = compute_operand(core, i.dst, "matmul_mx destination", i.accumulate,
                                 /*carried=*/false);
  const int64_t K = st.view.rows, M = st.view.free_elems(), N = mv.view.free_elems();
  const IntOps o;
  if (!matmul_contraction_ok(o, K, mv.view.rows)) {
    fail(Rule::matmul_contraction, "nc_matmul_mx contracts over partitions: stationary has " +
                                       std::to_string(K) + ", moving has " +
                                       std::to_string(mv.view.rows));
  }
  if (!mx_partitions_ok(K)) {
    fail(Rule::mx_layout, "nc_matmul_mx: stationary and moving span " + std::to_string(K) +
                              " partitions; the docstring asks for a multiple of 32, at most 128");
  }
  if (M % 2 != 0 || M > kMxMaxStationaryFree) {
    fail(Rule::matmul_m, "nc_matmul_mx: stationary has " + std::to_string(M) +
                             " elements per partition; the docstring asks for an even number, "
                             "at most 128");
  }
  const int64_t n_max = dst.view.dtype == DType::bf16 ? kMxMaxMovingBf16 : kMxMaxMovingFp32;
  if (N > n_max) {
    fail(Rule::matmul_n, "nc_matmul_mx: moving has " + std::to_string(N) +
                             " elements per partition; at most " + std::to_string(n_max) +
                             " for a " + std::string(dtype_name(dst.view.dtype)) +
                             " destination (the docstring: 8 PSUM banks)");
  }
  if (!shape_is(o, dst.view.rows, dst.view.free_elems(), M, N)) {
    fail(Rule::matmul_dst_shape, "nc_matmul_mx of [K=" + std::to_string(K) +
                                     ", M=" + std::to_string(M) + "] x [K, N=" + std::to_string(N) +
                                     "] writes [M, N] but '" + dst.tensor->name + "' is " +
                                     shape_str(dst));
  }
  mx_scale_shape(ss, K, M, "stationary_scale");
  mx_scale_shape(ms, K, N, "moving_scale");
  for (const Resolved& part : scale_parts(ss, K)) check_read(part, "stationary_scale");
  for (const Resolved& part : scale_parts(ms, K)) check_read(part, "moving_scale");
  if (opts_.compute_values) {
    if (opts_.observer) opts_.observer->opaque(dst.view, "nc_matmul_mx");
    exec_matmul_mx(dst.view, st.view, mv.view, ss.view, ms.view, i.accumulate);
  }
  mark_written(dst);
  std::vector<const Resolved*> reads = {&st, &mv, &ss, &ms};
  if (i.accumulate) reads.push_back(&dst);
  record(core, Engine::Tensor, reads, {&dst},
         {.partitions = K,
          .free_elems = N,
          .stationary_cols = M,
          .in = st.view.dtype,
          .out = dst.view.dtype});
}

void Interpreter::exec(int core, const QuantizeMx& i) {
  if (!mx_ok(hw_)) {
    fail(Rule::mx_generation,
         "quantize_mx needs NeuronCore-v4 or newer (the ISA docstring: "
         "\"Available only on NeuronCore-v4 and newer\"); " +
             hw_.name + " is NeuronCore-v" + std::to_string(hw_.generation));
  }
  Resolved src = compute_operand(core, i.src, "source", true);
  Resolved dst = compute_operand(core, i.dst, "destination", false);
  Resolved sc = compute_operand(core, i.dst_scale, "dst_scale", false);
  const int64_t P = src.view.rows, F4 = src.view.free_elems();
  if (!mx_partitions_ok(P) || F4 % 4 != 0) {
    fail(Rule::mx_layout, "quantize_mx: source '" + src.tensor->name + "' is " + shape_str(src) +
                              "; the docstring asks for a multiple of 32 partitions (at most "
                              "128) and a multiple of 4 elements per partition");
  }
  if (!shape_is(IntOps{}, dst.view.rows, dst.view.free_elems(), P, F4 / 4)) {
    fail(Rule::mx_layout, "quantize_mx of " + shape_str(src) + " writes [" + std::to_string(P) +
                              ", " + std::to_string(F4 / 4) + "] packed elements but '" +
                              dst.tensor->name + "' is " + shape_str(dst));
  }
  mx_scale_shape(sc, P, F4 / 4, "dst_scale");
  if (opts_.compute_values) {
    const std::string why = exec_quantize_mx(dst.view, src.view, sc.view);
    if (!why.empty()) fail(CheckKind::undefined_result, why);
    if (opts_.observer) {
      opts_.observer->opaque(dst.view, "quantize_mx");
      opts_.observer->opaque(sc.view, "quantize_mx scales");
    }
  }
  mark_written(dst);
  for (const Resolved& part : scale_parts(sc, P)) mark_written(part);
  record(core, Engine::Vector, {&src}, {&dst, &sc},
         {.partitions = P, .free_elems = F4, .in = src.view.dtype, .out = dst.view.dtype});
}

}  // namespace interp
}  // namespace ncv
