// The ISA operations the model executes (semantics in
// model/semantics/README.md; sources ISA-NEW, ISA-OLD, SHARED: docs/SOURCES.md). One struct per
// operation; an Instruction is a variant of them. Accesses are symbolic; the interpreter resolves
// them per loop iteration.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "model/hw/engine.h"
#include "model/ir/access.h"
#include "model/ir/expr.h"

namespace ncv {
inline namespace ir {

// ALU operators (SHARED ALU op table): arithmetic ones compute in fp32; comparisons give 1.0 / 0.0;
// bitwise ones and shifts operate on the integer value and need integer dtypes.
enum class AluOp : uint8_t {
  add,
  subtract,
  multiply,
  divide,
  max,
  min,
  pow,
  abs_max,
  abs_min,
  is_equal,
  not_equal,
  is_gt,
  is_ge,
  is_lt,
  is_le,
  bitwise_and,
  bitwise_or,
  bitwise_xor,
  shift_left,
  shift_right,
  // Unary arithmetic operators (ISA-NEW "Supported Math Operators", Arithmetic Unary): they act
  // on the data operand alone, in fp32 like the binary ones; the instruction's other operand is
  // not read (validate.cpp allows them as tensor_scalar / tensor_scalar_reduce op0 only).
  abs,
  square,
  relu,
  rsqrt,
  reciprocal,
};

// Scalar-engine activation functions: out = func(in * scale + bias).
enum class ActFunc : uint8_t {
  copy,
  exp,
  log,
  relu,
  sigmoid,
  tanh,
  gelu,
  silu,
  square,
  sqrt,
  rsqrt,
  reciprocal,
  sin,
  abs,
};

// Accumulator register control (nisa.reduce_cmd). activation takes idle/reset/reduce/reset_reduce;
// load_reduce (load a value, then accumulate) exists for tensor_scalar_cumulative only.
enum class ReduceCmd : uint8_t { idle, reset, reduce, reset_reduce, load_reduce };

enum class CmpOp : uint8_t { eq, ne, lt, le, gt, ge };

// A float immediate compared bit for bit, so that Programs holding NaN immediates still equal
// themselves and the text form round-trips exactly.
struct Imm {
  float value = 0.0f;
  bool operator==(const Imm& o) const {
    return std::bit_cast<uint32_t>(value) == std::bit_cast<uint32_t>(o.value);
  }
};

// Either an immediate or an access. For tensor_scalar-like operands the access is a [P,1]
// per-partition column; for tensor_copy_predicated's source it is a full tile.
using Operand = std::variant<Imm, Access>;

// The engine of an instruction that several engines can run. Empty ("unpinned") when the kernel
// leaves the choice to the compiler, as an NKI call without `engine=` does; the compiler-choice
// rules (model/compiler/README.md) pick the engine when the program runs. Pinned when the source
// names one (`engine=nisa.vector_engine`); the text form prints `engine=` only when pinned.
using EngineChoice = std::optional<Engine>;

struct DmaCopy {  // dst = src, cast through fp32 when dtypes differ; one DMA queue
  Access dst, src;
  int queue = 0;
  // oob_mode.skip (ISA-OLD dma_copy): a row of an indirect operand whose run-time index puts it
  // outside its tensor is not transferred (that row of neither side is read or written) instead
  // of stopping the run. Needs an indirect operand; false is oob_mode.error.
  bool oob_skip = false;
  // dst_rmw_op (ISA-OLD dma_copy): dst = dst_rmw(dst, src), both read as fp32, the result cast
  // to dst's dtype (the DMA engines compute in fp32). Only add is documented.
  std::optional<AluOp> dst_rmw;
  bool operator==(const DmaCopy&) const = default;
};

struct Matmul {  // dst[M,N] (+)= stationary[K,M]^T @ moving[K,N]; fp32 accumulation in PSUM
  Access dst, stationary, moving;
  bool accumulate = false;  // false: overwrite; true: add to the PSUM value already there
  bool operator==(const Matmul&) const = default;
};

struct Transpose {  // dst[F,P] = src[P,F]: Tensor engine (via identity matmul) or Vector (32x32)
  Access dst, src;
  Engine engine = Engine::Tensor;
  bool operator==(const Transpose&) const = default;
};

struct Activation {
  Access dst, src;
  ActFunc func = ActFunc::copy;
  Operand scale = Imm{1.0f};
  std::optional<Operand> bias;
  ReduceCmd reduce_cmd = ReduceCmd::idle;
  std::optional<Access> reduce_res;  // [P,1]: read-out of the accumulator after this instruction
  bool operator==(const Activation&) const = default;
};

struct TensorReduce {  // reduce the last `axes` free dims of src's view; optional negation
  Access dst, src;
  AluOp op = AluOp::add;
  int axes = 1;
  bool negate = false;
  bool operator==(const TensorReduce&) const = default;
};

struct TensorScalar {  // dst = (src op0 operand0) op1 operand1; reverseK swaps operand order
  Access dst, src;
  AluOp op0 = AluOp::add;
  Operand operand0 = Imm{0.0f};
  bool reverse0 = false;
  std::optional<AluOp> op1;
  Operand operand1 = Imm{0.0f};
  bool reverse1 = false;
  EngineChoice engine;  // unpinned by default
  bool operator==(const TensorScalar&) const = default;
};

struct TensorTensor {  // dst = src0 op src1, elementwise
  Access dst, src0, src1;
  AluOp op = AluOp::add;
  EngineChoice engine;  // unpinned by default
  bool operator==(const TensorTensor&) const = default;
};

struct TensorScalarReduce {  // dst = src op0 operand0; reduce_res[P,1] = reduce(reduce_op, dst)
  Access dst, src;
  AluOp op0 = AluOp::multiply;
  Operand operand0 = Imm{1.0f};
  bool reverse0 = false;
  AluOp reduce_op = AluOp::add;
  Access reduce_res;
  bool operator==(const TensorScalarReduce&) const = default;
};

struct TensorCopy {
  Access dst, src;
  EngineChoice engine;  // unpinned by default
  bool operator==(const TensorCopy&) const = default;
};

struct TensorCopyPredicated {  // where predicate (xor reverse) is nonzero: dst = src
  Access dst;
  Operand src;  // full tile or scalar immediate
  Access predicate;
  bool reverse_predicate = false;
  bool operator==(const TensorCopyPredicated&) const = default;
};

// value(p, i...) = offset + p * channel_multiplier + sum_k steps[k] * i_k over the free view dims
// of dst (p, i_k relative to the view). affine_select: dst = cmp(value, 0) ? on_true : on_false.
struct AffineSelect {
  Access dst, on_true;
  Expr offset;
  int64_t channel_multiplier = 0;
  std::vector<int64_t> steps;
  CmpOp cmp = CmpOp::ge;
  Imm on_false;
  bool operator==(const AffineSelect&) const = default;
};

struct Iota {  // dst = value(p, i...) computed in int32, converted to dst's dtype
  Access dst;
  Expr offset;
  int64_t channel_multiplier = 0;
  std::vector<int64_t> steps;
  bool operator==(const Iota&) const = default;
};

struct Memset {
  Access dst;
  Imm value;
  EngineChoice engine;  // unpinned by default
  bool operator==(const Memset&) const = default;
};

struct Reciprocal {  // dst = 1 / src in fp32
  Access dst, src;
  EngineChoice engine;  // unpinned by default
  bool operator==(const Reciprocal&) const = default;
};

// The top-8 family (ISA-OLD max8, nc_find_index8, nc_match_replace8; Vector engine): the free
// dims of each partition are flattened row-major and compared in fp32. An "8-value" operand is
// [P, 8] (its free dims hold 8 elements per partition).
struct Max8 {  // dst[P,8] = the 8 largest source values of each partition, descending
  Access dst, src;
  bool operator==(const Max8&) const = default;
};

// dst[P,8] (uint16/uint32) = the flat index of the first occurrence of vals[p,k] in data[p,:].
// successive (NKI 0.6 nc_find_index8): for k = 0..7 in order, the first occurrence not taken by
// an earlier k (duplicate values take successive occurrences), and all ones (0xFFFF / 0xFFFFFFFF)
// for a value with no such occurrence. Without it (ISA-OLD) duplicates share the first
// occurrence and a value not found has no documented result.
struct FindIndex8 {
  Access dst, data, vals;
  bool successive = false;
  bool operator==(const FindIndex8&) const = default;
};

// dst = data with, for k = 0..7 in order, the first element still equal to vals[p,k] replaced
// by imm; dst_idx[p,k] (when given) = that element's flat index. reverse (NKI 0.6
// nc_match_replace8, the hardware's tie-break): k = 7..0 instead.
struct MatchReplace8 {
  Access dst, data, vals;
  Imm imm;
  std::optional<Access> dst_idx;
  bool reverse = false;
  bool operator==(const MatchReplace8&) const = default;
};

// Random values (nl.rand: uniform in [0, 1)). The hardware's generator cannot be reproduced, so
// the interpreter draws from its own counter-based generator (model/semantics/random.h); the
// program records that the values are random, and a verification verdict never rests on them
// (draws_random_values).
struct Rand {
  Access dst;
  bool operator==(const Rand&) const = default;
};

// nisa.dropout: dst = 0 where a uniform draw in [0, 1) is below the drop probability, else data
// (no rescaling: ISA-OLD dropout documents none). prob: an immediate or a [P,1] column.
struct Dropout {
  Access dst, data;
  Operand prob = Imm{0.0f};
  bool operator==(const Dropout&) const = default;
};

// Scans along each partition's free elements (row-major), in fp32 (model/semantics/scan.cpp).
// tensor_tensor_scan: acc = initial; per element acc = op1(op0(src0, acc), src1), dst = acc;
// reverse0 gives op0(acc, src0), reverse1 op1(src1, x). initial: immediate or [P,1] column.
struct TensorTensorScan {
  Access dst, src0, src1;
  Operand initial = Imm{0.0f};
  AluOp op0 = AluOp::multiply;
  AluOp op1 = AluOp::add;
  bool reverse0 = false;
  bool reverse1 = false;
  bool operator==(const TensorTensorScan&) const = default;
};

// tensor_scalar_cumulative: the Vector engine's accumulator register of each partition starts
// as reduce_cmd says (reset_reduce: op1's identity, reduce: its value, load_reduce: imm1), then
// per element reg = op1(op0(src, imm0), reg) and dst = reg. imm0/imm1: immediate or [P,1] fp32.
struct TensorScalarCumulative {
  Access dst, src;
  AluOp op0 = AluOp::add;
  Operand imm0 = Imm{0.0f};
  AluOp op1 = AluOp::add;
  ReduceCmd reduce_cmd = ReduceCmd::reset_reduce;
  std::optional<Operand> imm1;  // exactly when reduce_cmd is load_reduce
  bool operator==(const TensorScalarCumulative&) const = default;
};

// Per-partition statistics in fp32 (model/semantics/bn_stats.cpp). bn_stats: src holds at most
// 512 elements per partition; dst [P, 6] = (count, mean, variance * count) of the even-indexed
// elements (row-major), then of the odd-indexed ones. bn_aggr: src [P, 3k] holds k such triples;
// dst [P, 2] = (mean, variance) of all the elements they describe.
struct BnStats {
  Access dst, src;
  bool operator==(const BnStats&) const = default;
};
struct BnAggr {
  Access dst, src;
  bool operator==(const BnAggr&) const = default;
};

// Data movement by index and across partitions (model/semantics/gather.cpp; the NKI API
// reference, Neuron SDK 2.26 pages of nki.isa.local_gather, nki.isa.nc_stream_shuffle and
// nki.language.gather_flattened). Values move bit for bit (gather_flattened converts through fp32
// when dst's dtype differs).
//
// local_gather (GpSimd): each group of 16 partitions (one GpSimd core) flattens its uint16 index
// rows partition-first into indices_1d and keeps the first num_valid_indices of them (0: all
// 16 * K, K = index elements per partition); every partition r of the group then writes, for each
// j, the num_elem_per_idx contiguous elements of its own src row (flattened row-major) starting
// at indices_1d[j]: dst[r, j * E + e] = src[r, indices_1d[j] + e].
// The documented limits: 16 partitions per GpSimd core, at most 4096 indices per core; 32
// partitions per shuffle quadrant, and the mask entry that leaves a partition unchanged.
inline constexpr int64_t kLocalGatherGroup = 16;
inline constexpr int64_t kLocalGatherMaxIndices = 4096;
inline constexpr int64_t kShuffleQuadrant = 32;
inline constexpr int64_t kShuffleKeep = 255;

struct LocalGather {
  Access dst, src, index;
  int64_t num_elem_per_idx = 1;   // E: 1, 2, 4, 8, 16 or 32
  int64_t num_valid_indices = 0;  // 0: every index of the group's 16 partitions
  bool operator==(const LocalGather&) const = default;
};

// nc_stream_shuffle (Vector): within each quadrant q of 32 partitions of dst, partition 32q + i
// takes partition 32q + shuffle_mask[i] of src (all of src is read before dst is written);
// shuffle_mask[i] = 255 leaves that partition of dst unchanged. 32 entries, each 0..31 or 255.
struct StreamShuffle {
  Access dst, src;
  std::vector<int64_t> shuffle_mask;
  bool operator==(const StreamShuffle&) const = default;
};

// gather_flattened (GpSimd, as nki.isa.nc_n_gather documents the same gather): per partition r,
// dst[r, j] = data[r, indices[r, j]] over the flattened free elements; uint32 indices.
struct GatherFlattened {
  Access dst, data, indices;
  bool operator==(const GatherFlattened&) const = default;
};

// nisa.tensor_partition_reduce (GpSimd): dst [1, F] = op over the partitions of src [P, F], per
// free element (row-major). op: add, max (fp32), bitwise_or, bitwise_and (integer domain). The
// model reduces partitions 0..P-1 in order (model/semantics/partition_reduce.cpp says why).
struct TensorPartitionReduce {
  Access dst, src;
  AluOp op = AluOp::add;
  bool operator==(const TensorPartitionReduce&) const = default;
};

// nisa.select_reduce (Vector): dst = (predicate != 0) xor reverse_pred ? on_true : on_false, in
// fp32, converted to dst's dtype; on_false an fp32 immediate or a [P, 1] column. The Vector
// accumulator registers (shared with tensor_scalar_cumulative) follow reduce_cmd with max over
// the fp32 selected values; reduce_res, when given, receives them after the instruction.
struct SelectReduce {
  Access dst, predicate, on_true;
  Operand on_false = Imm{0.0f};
  ReduceCmd reduce_cmd = ReduceCmd::idle;
  std::optional<Access> reduce_res;
  bool reverse_pred = false;
  bool operator==(const SelectReduce&) const = default;
};

// nisa.sequence_bounds (GpSimd): src [1, n] segment ids (fp32 or int32, non-negative integers,
// 0 = padding); dst [1, 2n] (a [1, 2, n] tile): first the start index of each element's segment
// (n for padding), then its end index, one past the last element (-1 for padding).
struct SequenceBounds {
  Access dst, src;
  bool operator==(const SequenceBounds&) const = default;
};

// nisa.range_select (Vector, NeuronCore-v3 on): with i = range_start + the element's free index
// (row-major) in fp32, dst = cmp0(i, bound0[p]) && cmp1(i, bound1[p]) ? on_true : on_false;
// bound0/bound1 are fp32 [P, 1] columns; on_false is fp32's lowest value (the page: a hardware
// constraint). The accumulator registers follow reduce_cmd with max, as select_reduce's.
struct RangeSelect {
  Access dst, on_true, bound0, bound1;
  CmpOp cmp0 = CmpOp::ge;
  CmpOp cmp1 = CmpOp::lt;
  Expr range_start;
  Imm on_false{-3.40282347e+38f};
  ReduceCmd reduce_cmd = ReduceCmd::idle;
  std::optional<Access> reduce_res;
  bool operator==(const RangeSelect&) const = default;
};

// nisa.nc_matmul_mx (Tensor engine, NeuronCore-v4; ISA docstring, aws-neuron-sdk
// nki/api/nki/isa/__init__.py): dst[M, N] (+)= sum over k < K and q < 4 of
// S[k, i, q] * 2^(ss[g(k), i] - 127) * V[k, j, q] * 2^(ms[g(k), j] - 127), where S/V are the
// quantized values of the packed stationary [K, M] / moving [K, N] tiles and ss/ms the uint8
// (E8M0) scales. One scale per group of 8 partitions x one packed element (32 values); group
// k / 8 is read from scale row g = (k / 32) * 32 + (k / 8) % 4 (the quadrant rule of the MX deep
// dive, "Scale Tensor"). fp32 accumulation in PSUM as Matmul; accumulate as Matmul's.
struct MatmulMx {
  Access dst, stationary, moving, stationary_scale, moving_scale;
  bool accumulate = false;
  bool operator==(const MatmulMx&) const = default;
};

// nisa.quantize_mx (Vector engine, NeuronCore-v4; ISA docstring): src [P, 4F] bf16/fp16 ->
// dst [P, F] fp8 x4 and one uint8 (E8M0) scale per group of 8 partitions x 4 values, written to
// dst_scale row (p / 32) * 32 + (p / 8) % 4, column f. The scale is
// 2^(floor(log2 amax) - (Emax - 1)) (2^-127 for an all-zero group).
struct QuantizeMx {
  Access dst, src, dst_scale;
  bool operator==(const QuantizeMx&) const = default;
};

using Instruction =
    std::variant<DmaCopy, Matmul, Transpose, Activation, TensorReduce, TensorScalar, TensorTensor,
                 TensorScalarReduce, TensorCopy, TensorCopyPredicated, AffineSelect, Iota, Memset,
                 Reciprocal, Max8, FindIndex8, MatchReplace8, Rand, Dropout, TensorTensorScan,
                 TensorScalarCumulative, BnStats, BnAggr, LocalGather, StreamShuffle,
                 GatherFlattened, TensorPartitionReduce, SelectReduce, SequenceBounds, RangeSelect,
                 MatmulMx, QuantizeMx>;

// For consumers that visit an Instruction with one generic lambda: `static_assert(
// kDependentFalse<T>, ...)` in the last `if constexpr` branch makes a new instruction kind a
// compile error until that consumer handles it.
template <class>
inline constexpr bool kDependentFalse = false;

// Text-form names ("dma_copy", "matmul", ...), engine of an instruction, and the accesses it
// writes and reads (in a fixed order), for generic consumers such as checks and the trace.
// engine_of is empty for an unpinned instruction (the compiler's choice: model/compiler).
std::string_view op_name(const Instruction& ins);
EngineChoice engine_of(const Instruction& ins);
std::vector<const Access*> written_accesses(const Instruction& ins);
std::vector<const Access*> read_accesses(const Instruction& ins);
// Whether the instruction's values come from a random draw (rand, dropout): no run of it says
// what the hardware computes, so no verification verdict may rest on its values.
bool draws_random_values(const Instruction& ins);

std::string_view alu_op_name(AluOp op);
std::string_view act_func_name(ActFunc f);
std::string_view reduce_cmd_name(ReduceCmd c);
std::string_view cmp_op_name(CmpOp c);
std::optional<AluOp> parse_alu_op(std::string_view s);
std::optional<ActFunc> parse_act_func(std::string_view s);
std::optional<ReduceCmd> parse_reduce_cmd(std::string_view s);
std::optional<CmpOp> parse_cmp_op(std::string_view s);

bool is_bitwise(AluOp op);
bool is_unary(AluOp op);  // abs, square, relu, rsqrt, reciprocal
bool is_comparison(AluOp op);

}  // namespace ir
}  // namespace ncv
