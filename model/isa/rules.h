// The ISA rules every instruction instance must obey, each stated once. The interpreter
// evaluates them on the numbers of one instance (IntOps below); the solver evaluates the same
// templates on Z3 terms over params and loop variables (solver/z3_ops.h), so the two cannot
// drift apart. rule_info() gives each rule's obligation name, the CheckKind the interpreter
// raises when it fails and its source (keys: docs/SOURCES.md); the limits come from HwConfig.
//
// A predicate is written over a number domain O with types O::Int and O::Bool, the operators
// + - * == <= > && || on them, and o.lit(int64_t), o.ite(Bool, Bool, Bool), o.mod(Int, int64_t),
// o.div(Int, int64_t), o.abs(Int).
//
// Not here: the static legality rules (which engine reads which memory, dtypes, access ranks)
// that the validator checks once per Program (model/ir/validate.cpp), and the allocation rules
// (capacity, placements; model/interp and solver/allocation.h).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/hw/engine.h"
#include "model/hw/hw_config.h"
#include "model/hw/memory.h"
#include "model/isa/check_kind.h"
#include "model/numerics/dtype.h"

namespace ncv {
inline namespace isa {

enum class Rule : uint8_t {
  access_size,              // every index dim of an access has size >= 1
  indirect_not_partition,   // an on-chip tensor is never indexed indirectly on its partition dim
  indirect_offsets_column,  // the offsets of an indirect dim are a [rows, 1] column
  partition_start,          // start-partition alignment and the partition count of an operand
  free_size,                // elements per partition of an engine operand
  psum_bank,                // a PSUM tile lies inside one bank
  dma_element_counts,       // a DMA writes as many elements as it reads
  dma_rows_paired,          // oob_skip / dst_rmw: row r of the source meets row r of dst
  matmul_contraction,       // stationary and moving have the same K (partitions)
  matmul_k,                 // K within the Tensor engine's limit
  matmul_m,                 // M (stationary free size) within the limit
  matmul_n,                 // N (moving free size) within the limit
  matmul_dst_shape,         // the destination is [M, N]
  matmul_bf16_psum,         // a bf16 PSUM destination needs a generation that has it
  transpose_size,           // [P, F] within the engine's L x L
  transpose_dst_shape,      // the destination is [F, P]
  column_operand,           // a per-partition scalar operand (or reduce_res) is [P, 1]
  same_shape,               // operands of an elementwise instruction agree in P and free size
  reduce_dst_shape,         // tensor_reduce writes [P, product of the kept free dims]
  affine_pattern_int32,     // affine_select / iota pattern values fit int32
  scalar_tensor_copy,       // tensor_copy on the Scalar engine needs a generation that has it
  top8_values,              // an 8-value operand of the top-8 family is [P, 8]
  top8_source_size,   // the top-8 family's data: 8 (1 for match_replace8) to 16384 per partition
  buffer_partitions,  // an on-chip buffer spans at most the generation's partitions
  range_select_generation,  // range_select needs NeuronCore-v3 or newer
  mx_generation,            // quantize_mx / nc_matmul_mx need NeuronCore-v4 or newer
  mx_layout,                // MX tile sizes, dtypes and the scale tile's shape
};
inline constexpr int kNumRules = static_cast<int>(Rule::mx_layout) + 1;

struct RuleInfo {
  std::string_view name;    // the obligation name; rule_label() adds a limit or instruction
  CheckKind kind;           // what the interpreter raises when the rule fails
  std::string_view source;  // where the rule is documented
};
const RuleInfo& rule_info(Rule r);

// The obligation names that carry a limit or the instruction: "matmul K <= 128",
// "buffer partitions <= 128", "transpose size <= 32x32" (limit), "free size <= 4096 (PSUM)",
// "operand shapes match (activation)". Other rules: rule_info(r).name.
std::string rule_label(Rule r, int64_t limit);
std::string free_size_label(Memory m, const HwConfig& hw);
std::string same_shape_label(std::string_view instruction);

// --- limits and rules that no param changes ------------------------------------------------

// Elements per partition an engine operand in memory m may have.
int64_t free_size_limit(Memory m, const HwConfig& hw);
// The largest transpose side on engine e (Tensor or Vector).
int64_t transpose_limit(Engine e, const HwConfig& hw);
// Whether a matmul (or Tensor-engine transpose) destination must lie inside one PSUM bank.
inline bool matmul_dst_in_one_bank(const HwConfig& hw) {
  return !hw.matmul_dst_spans_banks;
}
inline bool matmul_dst_dtype_ok(DType dst, const HwConfig& hw) {
  return dst != DType::bf16 || hw.psum_bf16_matmul_dst;
}
inline bool tensor_copy_engine_ok(Engine e, const HwConfig& hw) {
  return e != Engine::Scalar || hw.scalar_tensor_copy;
}
// nki.isa.range_select (SDK 2.26): "Available only on NeuronCore-v3 and beyond".
inline bool range_select_ok(const HwConfig& hw) {
  return hw.generation >= 3;
}
inline bool mx_ok(const HwConfig& hw) {
  return hw.generation >= 4;
}
inline bool indirect_dim_ok(bool on_chip, int dim) {
  return !(on_chip && dim == 0);
}

// bn_stats reads at most this many elements per partition (nki.isa.bn_stats, SDK 2.26: "must
// not exceed 512 (nl.tile_size.bn_stats_fmax)").
inline constexpr int64_t kBnStatsMaxFree = 512;

// --- the predicates over a number domain -----------------------------------------------------

// Start-partition alignment (ARCH2 partition constraints): a tile of P partitions starts at 0
// when P > 64 (two quadrants), at 0 or 64 when 32 < P <= 64, at a multiple of 32 up to 96 when
// P <= 32; and P never exceeds the generation's partitions.
inline constexpr int64_t kPartitionQuadrant = 32;

template <class O>
typename O::Bool partition_start_ok(const O& o, const typename O::Int& start,
                                    const typename O::Int& parts, const HwConfig& hw) {
  const int64_t q = kPartitionQuadrant;
  return o.ite(parts > o.lit(2 * q), start == o.lit(0),
               o.ite(parts > o.lit(q), start == o.lit(0) || start == o.lit(2 * q),
                     o.mod(start, q) == o.lit(0) && start <= o.lit(3 * q))) &&
         parts <= o.lit(hw.partitions);
}

template <class O>
typename O::Bool access_size_ok(const O& o, const typename O::Int& size) {
  return size >= o.lit(1);
}

// x <= limit: the matmul K/M/N limits, the free-size limit, the buffer partition count.
template <class O>
typename O::Bool within_limit(const O& o, const typename O::Int& x, int64_t limit) {
  return x <= o.lit(limit);
}

// A [rows, free] view is exactly [want_rows, want_free]: destinations of matmul, transpose and
// tensor_reduce, operands of one shape, [P, 1] columns.
template <class O>
typename O::Bool shape_is(const O& o, const typename O::Int& rows, const typename O::Int& free,
                          const typename O::Int& want_rows, const typename O::Int& want_free) {
  (void)o;
  return rows == want_rows && free == want_free;
}

template <class O>
typename O::Bool column_ok(const O& o, const typename O::Int& rows, const typename O::Int& free,
                           const typename O::Int& want_rows) {
  return shape_is(o, rows, free, want_rows, o.lit(1));
}

template <class O>
typename O::Bool matmul_contraction_ok(const O& o, const typename O::Int& k_stationary,
                                       const typename O::Int& k_moving) {
  (void)o;
  return k_moving == k_stationary;
}

template <class O>
typename O::Bool transpose_size_ok(const O& o, const typename O::Int& rows,
                                   const typename O::Int& free, int64_t limit) {
  return rows <= o.lit(limit) && free <= o.lit(limit);
}

// The bytes [begin, end) a PSUM tile covers in each partition lie in one bank.
template <class O>
typename O::Bool psum_bank_ok(const O& o, const typename O::Int& begin, const typename O::Int& end,
                              const HwConfig& hw) {
  return o.div(begin, hw.psum_bank_bytes) == o.div(end - o.lit(1), hw.psum_bank_bytes);
}

template <class O>
typename O::Bool dma_counts_ok(const O& o, const typename O::Int& src_elems,
                               const typename O::Int& dst_elems) {
  (void)o;
  return src_elems == dst_elems;
}

// A DMA that skips out-of-bounds rows or reads-modifies-writes its destination pairs row r of
// the source with row r of the destination, so both views have the same rows.
template <class O>
typename O::Bool dma_rows_paired_ok(const O& o, const typename O::Int& src_rows,
                                    const typename O::Int& dst_rows) {
  (void)o;
  return src_rows == dst_rows;
}

// The largest magnitude of offset + p * cm + sum_k steps[k] * i_k over a view of `rows`
// partitions and free sizes `sizes[0..n)`: |offset| + |cm| (rows - 1) + sum |steps[k]| (sizes[k]
// - 1). The hardware computes the pattern in int32 (ISA-NEW iota, affine_select).
template <class O>
typename O::Int affine_pattern_magnitude(const O& o, const typename O::Int& offset, int64_t cm,
                                         const typename O::Int& rows, const typename O::Int* sizes,
                                         size_t n, const int64_t* steps, size_t n_steps) {
  // abs in the number domain, not in int64: -INT64_MIN does not exist.
  typename O::Int m = o.abs(offset) + o.abs(o.lit(cm)) * (rows - o.lit(1));
  for (size_t k = 0; k < n_steps && k < n; ++k) {
    m = m + o.abs(o.lit(steps[k])) * (sizes[k] - o.lit(1));
  }
  return m;
}

// The top-8 family (ISA-OLD max8, nc_find_index8, nc_match_replace8): 8 values per partition,
// and the data's elements per partition within [kTop8MinSource, kTop8MaxSource] (max8,
// nc_find_index8; nc_match_replace8 states the upper bound only, so its lower bound is 1).
inline constexpr int64_t kTop8Values = 8;
inline constexpr int64_t kTop8MinSource = 8;
inline constexpr int64_t kTop8MaxSource = 16384;

template <class O>
typename O::Bool top8_source_size_ok(const O& o, const typename O::Int& free, int64_t min_free) {
  return free >= o.lit(min_free) && free <= o.lit(kTop8MaxSource);
}

template <class O>
typename O::Bool affine_pattern_ok(const O& o, const typename O::Int& magnitude) {
  return magnitude <= o.lit(INT32_MAX);
}

// --- number domains ----------------------------------------------------------------------------

// Concrete int64 values, as the interpreter has them. mod and div are C++'s (truncating); the
// rules only compare mod with 0 and divide non-negative byte offsets, where Euclidean division
// (Z3's) agrees.
struct IntOps {
  using Int = int64_t;
  using Bool = bool;
  Int lit(int64_t v) const { return v; }
  Bool ite(Bool c, Bool a, Bool b) const { return c ? a : b; }
  Int mod(Int a, int64_t m) const { return a % m; }
  Int div(Int a, int64_t d) const { return a / d; }
  Int abs(Int a) const { return a < 0 ? -a : a; }
};

// Sums of products of int64 values without overflow: exact below 2^64 and monotone above, so a
// comparison with an int32 bound is exact (the interpreter's affine pattern magnitude).
struct WideOps {
  using Int = long double;
  using Bool = bool;
  Int lit(int64_t v) const { return static_cast<long double>(v); }
  Int abs(Int a) const { return a < 0 ? -a : a; }
};

}  // namespace isa
}  // namespace ncv
