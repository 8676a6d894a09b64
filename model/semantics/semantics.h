// Functional semantics of every instruction (ISA-NEW), over resolved Views.
//
// Each instruction has one plain per-element reference implementation (ExecMode::reference:
// obviously correct, slow) and a fast path (ExecMode::fast: row-wise decoding, blocked matmul).
// The two agree bit for bit; unit tests and the fuzzer hold them to it. The interpreter has
// already checked bounds, partitions, shapes and engine rules; these functions assume valid
// operands whose shapes match as documented per function.
//
// Arithmetic rule: inputs convert to fp32, compute in fp32, convert to the destination dtype
// with round-to-nearest-even (dtype.h). Every reduction runs sequentially in row-major order of
// the reduced elements: that order is part of the contract (model/README.md).
//
// Further model choices, defined in model/semantics/internal.h and documented there:
//  * Aliasing: an instruction reads all of its inputs before writing any output and writes in
//    row-major order, so overlapping operands (in-place ops included) have one defined result.
//  * NaN: a NaN result is the first NaN operand, quieted (payload and sign kept); a NaN made
//    from non-NaN operands is 0x7fc00000; a NaN matmul accumulator is written as 0x7fc00000.
//    max/min propagate NaN; max(-0, +0) = +0, min(-0, +0) = -0.
//  * Bitwise ops and shifts run on int64 values (integer dtypes read exactly, floats rounded to
//    nearest even), shift counts outside [0, 31] give 0, results saturate into the dst type.
//    So do GpSimd's tensor_tensor arithmetic operators on int32/uint32 tiles (native integer
//    arithmetic, ISA-NEW tensor_tensor); what the hardware does on overflow is not documented.
//  * Activation inputs outside a function's documented range have no documented result:
//    act_apply gives NaN there (so sqrt(0) is NaN), exec_activation a caller's substitute
//    (ActOutOfRange), which the interpreter varies to see whether anything depends on it.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/ir/instruction.h"
#include "model/semantics/view.h"

namespace ncv {
inline namespace semantics {

enum class ExecMode : uint8_t { fast, reference };

// A per-partition scalar: an immediate, or a [rows, 1] column View (row r's value).
using ScalarArg = std::variant<float, View>;

// dst = src elementwise, same dtype: bit copy; otherwise through fp32. Same rows and free
// element count (flattened row-major).
void exec_copy(ExecMode mode, const View& dst, const View& src);

// dst[M, N] = (accumulate ? dst : 0) + stationary[K, M]^T @ moving[K, N].
// Contract: for each (m, n), acc = +0.0f; for k = 0..K-1: acc = fma(st[k][m], mv[k][n], acc)
// (the exact product is added with one rounding, the PE array's fp32 accumulation); then
// dst = accumulate ? fl(dst_old + acc) : acc, converted to dst's dtype.
void exec_matmul(ExecMode mode, const View& dst, const View& stationary, const View& moving,
                 bool accumulate);

// nc_matmul_mx (mx.cpp): dst[M, N] = (accumulate ? dst : 0) + the MX product of packed
// stationary [K, M] and moving [K, N] with their uint8 E8M0 scales (row mx_scale_row(k) of a
// scale view holds group k / 8; column = the data column). Contract: for each (m, n),
// acc = +0.0f; for k = 0..K-1, q = 0..3: acc = acc + fp32(S * V * 2^(ss + ms - 254)), the
// product exact in double and rounded once to fp32; then dst = dtype(acc (+ dst)). A NaN
// value, a NaN scale (0xFF) or Inf * 0 makes the sum NaN (IEEE).
void exec_matmul_mx(const View& dst, const View& stationary, const View& moving,
                    const View& stationary_scale, const View& moving_scale, bool accumulate);
// quantize_mx (mx.cpp): src [P, 4F] bf16/fp16 -> dst [P, F] fp8 x4, scale bytes at row
// mx_scale_row(p) of dst_scale, column f. Returns an empty string, or (writing nothing) why the
// documentation leaves a group's result open: a NaN/Inf in it, or a block maximum so small
// that its scale is below E8M0's 2^-127.
std::string exec_quantize_mx(const View& dst, const View& src, const View& dst_scale);

// Tensor engine transpose: dst[F, P] = src[P, F] computed as a matmul of src (stationary) with
// the P x P identity (moving), so -0 becomes +0 and a NaN/Inf spreads along its output row,
// as on NeuronCore-v2 (ARCH3: the v2 transpose is not bit-accurate for NaN/Inf). From v3 on the
// interpreter uses exec_transpose_vector's bit movement for it instead (transpose mode).
void exec_transpose_tensor(ExecMode mode, const View& dst, const View& src);
// Vector engine transpose (<= 32x32): exact bit movement (same dtype).
void exec_transpose_vector(ExecMode mode, const View& dst, const View& src);

// Inputs of exec_activation outside its function's documented range (ISA-NEW activation
// function table: outside them "the hardware output is invalid"; internal.h act_range): the
// hardware writes some value the documentation does not give. exec_activation writes (and
// accumulates) `substitute` for each, and counts them, so that a caller can rerun with other
// substitutes and see whether anything depends on that value (model/interp run_program).
struct ActOutOfRange {
  float substitute = std::bit_cast<float>(0x7fc00000u);  // the default NaN, as act_apply
  int64_t count = 0;   // out-of-range inputs met, added to by each call
  float first = 0.0f;  // the first of them (row-major within a call), when count > 0
};

// out = func(src * scale + bias) (two fp32 roundings: product, then sum). Accumulator
// registers regs[rows] (per partition, fp32) follow reduce_cmd: idle leaves them, reset zeroes
// them, reduce adds each fp32 out (before the dst conversion) in order, reset_reduce zeroes then
// adds. If reduce_res is given, regs are written to it ([rows,1]) after the instruction. An input
// outside func's documented range gives out_of_range->substitute (the default NaN without one).
void exec_activation(ExecMode mode, const View& dst, const View& src, ActFunc func,
                     const ScalarArg& scale, const std::optional<ScalarArg>& bias, ReduceCmd cmd,
                     float* regs, const std::optional<View>& reduce_res,
                     ActOutOfRange* out_of_range = nullptr);

// Reduces the last `axes` free dims of src (dst has the remaining free dims, same rows).
// negate multiplies the result by -1 (arithmetic ops only).
void exec_tensor_reduce(ExecMode mode, const View& dst, const View& src, AluOp op, int axes,
                        bool negate);

// dst = (src op0 a0) op1 a1, with reverseK swapping operand order of opK.
void exec_tensor_scalar(ExecMode mode, const View& dst, const View& src, AluOp op0,
                        const ScalarArg& a0, bool reverse0, std::optional<AluOp> op1,
                        const ScalarArg& a1, bool reverse1);

// On the GpSimd engine, with src0, src1 and dst all int32 or uint32, the arithmetic operators
// but divide and pow compute in native integer arithmetic (tensor_tensor_native_int); everything
// else in fp32, bitwise operators on integers. Returns why the result is undefined, "" when it is
// defined: a native-integer result that dst's type cannot hold (an int32 add that overflows),
// which the ISA does not define (elementwise.cpp native_int_overflow); then nothing is written.
std::string exec_tensor_tensor(ExecMode mode, const View& dst, const View& src0, const View& src1,
                               AluOp op, Engine engine = Engine::Vector);
// Whether exec_tensor_tensor computes `op` in native integer arithmetic for these dtypes on
// `engine` (ISA-NEW tensor_tensor: "When all input/output tiles are int32 or uint32, the
// operation defaults to GpSimd Engine, which uses native integer arithmetic").
bool tensor_tensor_native_int(AluOp op, DType dst, DType src0, DType src1, Engine engine);

// dst = src op0 a0; reduce_res[r, 0] = reduction with reduce_op of row r's fp32 results
// (identity: add 0, multiply 1, max -inf, min +inf).
void exec_tensor_scalar_reduce(ExecMode mode, const View& dst, const View& src, AluOp op0,
                               const ScalarArg& a0, bool reverse0, AluOp reduce_op,
                               const View& reduce_res);

// Where (predicate != 0) xor reverse: dst = src (a tile View, or an immediate); else unchanged.
void exec_copy_predicated(ExecMode mode, const View& dst, const std::variant<float, View>& src,
                          const View& predicate, bool reverse);

// value(r, f) = offset + r * channel_multiplier + sum_k steps[k] * i_k (i_k: free indices of f).
// affine_select: dst = cmp(value, 0) ? on_true : on_false. iota: dst = value (int32 -> dtype).
void exec_affine_select(ExecMode mode, const View& dst, const View& on_true, int64_t offset,
                        int64_t channel_multiplier, const int64_t* steps, CmpOp cmp,
                        float on_false);
void exec_iota(ExecMode mode, const View& dst, int64_t offset, int64_t channel_multiplier,
               const int64_t* steps);

void exec_memset(ExecMode mode, const View& dst, float value);
void exec_reciprocal(ExecMode mode, const View& dst, const View& src);

// Scans along each row's free elements in row-major order, with an fp32 running value; every
// output element is the running value converted to dst's dtype (scan.cpp).
// tensor_tensor_scan: acc = initial[r]; acc = op1(op0(src0, acc), src1) per element (reverse0:
// op0(acc, src0); reverse1: op1(src1, .)); dst = acc. Same rows and free count for all three.
void exec_tensor_tensor_scan(ExecMode mode, const View& dst, const View& src0, const View& src1,
                             const ScalarArg& initial, AluOp op0, AluOp op1, bool reverse0,
                             bool reverse1);
// tensor_scalar_cumulative: regs[rows] are the Vector engine's accumulator registers of the
// source's partitions. They start as cmd says (reset_reduce: reduction_identity(op1); reduce:
// unchanged; load_reduce: imm1[r]), then reg = op1(op0(src, imm0), reg) per element, dst = reg;
// regs keep the last value of each row.
void exec_tensor_scalar_cumulative(ExecMode mode, const View& dst, const View& src, AluOp op0,
                                   const ScalarArg& imm0, AluOp op1, ReduceCmd cmd,
                                   const std::optional<ScalarArg>& imm1, float* regs);

// bn_stats: per row, for the even-indexed and then the odd-indexed free elements (row-major):
// count; mean = fl(sum / count) with the sum sequential in fp32; variance * count = the
// sequential fp32 sum of fl(fl(x - mean)^2). An empty half gives (0, 0, 0). dst is [rows, 6].
// bn_aggr: src [rows, 3k] of (count, mean, m2) triples; n = sequential sum of the counts,
// mean = fl(sum_i fl(count_i * mean_i) / n), m2 = sum_i fl(m2_i + fl(count_i * fl(d_i^2)))
// with d_i = fl(mean_i - mean), variance = fl(m2 / n); dst [rows, 2] = (mean, variance). All
// sums sequential in triple order; n = 0 gives NaN (0/0). Model choices: the pages give the
// outputs, not the hardware's order of operations (model/semantics/README.md, "Statistics").
void exec_bn_stats(ExecMode mode, const View& dst, const View& src);
void exec_bn_aggr(ExecMode mode, const View& dst, const View& src);

// Gathers and the stream shuffle (gather.cpp): values move bit for bit; every output is computed
// before the first store. A gather index whose elements lie outside its source row is reported
// (the first one, in the order the instruction reads them) and nothing is written: the pages
// leave such a read undefined, so the interpreter fails the run there.
struct GatherMiss {
  int64_t row = 0;       // the view row holding the index
  int64_t position = 0;  // its flat free position in that row
  int64_t index = 0;     // its value
  int64_t limit = 0;     // elements per partition of the source
};
// local_gather: rows in groups of 16 (one GpSimd core each, rows a multiple of 16); a group's
// indices_1d[j] = index[16g + j % 16, j / 16] for j < n (n = local_gather_indices); each row r of
// the group writes dst[r, j * E + e] = src[r, indices_1d[j] + e]. A miss: indices_1d[j] + E >
// src's elements per partition. dst has n * E elements per partition, src's dtype.
int64_t local_gather_indices(const View& index, int64_t valid_indices);
std::optional<GatherMiss> exec_local_gather(ExecMode mode, const View& dst, const View& src,
                                            const View& index, int64_t elems_per_index,
                                            int64_t valid_indices);
// nc_stream_shuffle: dst row r takes src row shuffle_source_row(mask, r) = 32 * (r / 32) +
// mask[r % 32], or keeps its value (-1: the entry is 255). Same dtype and elements per row; every
// source row exists (checked by the interpreter).
int64_t shuffle_source_row(const std::vector<int64_t>& mask, int64_t row);
void exec_stream_shuffle(ExecMode mode, const View& dst, const View& src,
                         const std::vector<int64_t>& mask);
// gather_flattened: dst[r, j] = data[r, indices[r, j]] (flattened row-major, converted to dst's
// dtype through fp32 when it differs). A miss: an index >= data's elements per partition. Same
// rows; dst has indices' elements per partition.
std::optional<GatherMiss> exec_gather_flattened(ExecMode mode, const View& dst, const View& data,
                                                const View& indices);
// tensor_partition_reduce: dst[0, f] = op over p = 0..P-1, in that order from op's identity, of
// src[p, f] (fp32; bitwise ops in the integer domain); dst [1, F], src [P, F]. The hardware's
// order is not documented (partition_reduce.cpp says what follows from that).
void exec_tensor_partition_reduce(ExecMode mode, const View& dst, const View& src, AluOp op);
// select_reduce: x = (predicate != 0) != reverse_pred ? on_true : on_false[r] in fp32, dst = x
// converted. range_select: x = cmp0(i, bound0[r]) && cmp1(i, bound1[r]) ? on_true : on_false
// with i = fp32(range_start + f). Both: regs[rows] (the Vector accumulators) start at -inf for
// reset/reset_reduce and take max(reg, x) for reduce/reset_reduce, in row-major order; idle
// leaves them; reduce_res ([rows, 1]) receives them afterwards (select_reduce.cpp).
void exec_select_reduce(ExecMode mode, const View& dst, const View& predicate, const View& on_true,
                        const ScalarArg& on_false, bool reverse_pred, ReduceCmd cmd, float* regs,
                        const std::optional<View>& reduce_res);
void exec_range_select(ExecMode mode, const View& dst, const View& on_true, const View& bound0,
                       const View& bound1, CmpOp cmp0, CmpOp cmp1, int64_t range_start,
                       float on_false, ReduceCmd cmd, float* regs,
                       const std::optional<View>& reduce_res);
// sequence_bounds: src [1, n] ids, dst [1, 2n]: starts, then ends (sequence_bounds.cpp).
// sequence_bounds_bad_id: the first id that is not a non-negative integer, if any.
void exec_sequence_bounds(ExecMode mode, const View& dst, const View& src);
std::optional<int64_t> sequence_bounds_bad_id(const View& src);

// The scalar building blocks, exposed for tests and for independent checks (equiv/ builds its
// terms from them, so they are stated once).
float alu_apply(AluOp op, float a, float b);
float act_apply(ActFunc f, float x);
// f's documented valid input range for messages ("2^-42 <= |x| <= 2^42"), "" when every input is
// valid; and whether x lies in it (a NaN does: it is returned as is).
std::string act_range_text(ActFunc f);
bool act_in_documented_range(ActFunc f, float x);
// The identity a reduction with `op` starts from (fp32 operators).
float reduction_identity(AluOp op);
// affine_select/iota: the pattern value of element (r, f) of dst (modulo 2^64), whether
// affine_select's comparison holds for it, and iota's int -> dtype encoding (integer dtypes
// saturate, float dtypes round through fp32).
int64_t affine_pattern_value(const View& dst, int64_t offset, int64_t channel_multiplier,
                             const int64_t* steps, int64_t r, int64_t f);
bool affine_compare(CmpOp cmp, int64_t value);
uint32_t iota_bits(DType t, int64_t value);

}  // namespace semantics
}  // namespace ncv
