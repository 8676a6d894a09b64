// What each instruction must write, computed from its documented semantics (semantics.h,
// model/README.md) on host-side tiles with the independent arithmetic of instruction_exact.h.
// Used by the instruction-level property (property 5, properties/README.md) as the second opinion
// next to the model's reference path. Elements whose value the documentation leaves to a host
// library function (exp, tanh, powf, ... inside their valid ranges) are left unset in the Expected.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "model/ir/instruction.h"
#include "properties/instruction_case.h"

namespace ncv::props::instr::expect {

// A per-partition scalar operand: an immediate, or a [rows, 1] column.
struct ScalarOperand {
  std::optional<float> imm;
  Tile column;
  uint32_t f32(int64_t row) const;     // as an fp32 operand
  int64_t integer(int64_t row) const;  // in the bitwise operators' integer domain
};

// The activation accumulator registers of one core, one fp32 pattern per physical partition
// (unset once an unknown value was added); they start at +0.
using Registers = std::vector<std::optional<uint32_t>>;
Registers fresh_registers();

Expected copy(const Tile& src, DType dst);
Expected matmul(const Tile& stationary, const Tile& moving, DType dst, const Tile* accumulate_onto);
Expected transpose_tensor(const Tile& src, DType dst);
Expected transpose_vector(const Tile& src);
// `first_partition`: the physical partition of the source view's row 0 (the registers are per
// partition, not per view row).
// Outside func's documented range the value is the default NaN (the strict runs' value; the
// documentation gives none); `outside`, when given, is added the number of such inputs.
Expected activation(const Tile& src, DType dst, ActFunc func, const ScalarOperand& scale,
                    const std::optional<ScalarOperand>& bias, ReduceCmd cmd,
                    int64_t first_partition, Registers& regs, int64_t* outside = nullptr);
Expected registers_read_out(const Registers& regs, int64_t first_partition, int64_t rows,
                            DType dst);
Expected tensor_reduce(const Tile& src, DType dst, AluOp op, int axes, bool negate);
Expected tensor_scalar(const Tile& src, DType dst, AluOp op0, const ScalarOperand& a0,
                       bool reverse0, std::optional<AluOp> op1, const ScalarOperand& a1,
                       bool reverse1);
// `engine`: GpSimd computes int32/uint32 arithmetic in integers (exact::gpsimd_native_int).
Expected tensor_tensor(const Tile& a, const Tile& b, DType dst, AluOp op,
                       Engine engine = Engine::Vector);
// Whether some GpSimd integer result of tensor_tensor falls outside dst's range (an int32 add
// that overflows, a negative result into uint32): the documentation defines none (ISA-NEW
// tensor_tensor promises exact 32-bit results only), so the run must stop with undefined_result.
bool tensor_tensor_undefined(const Tile& a, const Tile& b, DType dst, AluOp op, Engine engine);
struct WithReduction {
  Expected dst;
  Expected reduce_res;
};
WithReduction tensor_scalar_reduce(const Tile& src, DType dst, AluOp op0, const ScalarOperand& a0,
                                   bool reverse0, AluOp reduce_op, DType reduce_dtype);
Expected copy_predicated(const Tile& old_dst, const std::variant<float, Tile>& src,
                         const Tile& predicate, bool reverse);
// The affine value runs over the destination view's free dims (`dst_free`); on_true's elements
// pair with the destination's by row-major index.
Expected affine_select(const Tile& on_true, DType dst, const std::vector<int64_t>& dst_free,
                       int64_t offset, int64_t channel_multiplier,
                       const std::vector<int64_t>& steps, CmpOp cmp, float on_false);
Expected iota(DType dst, int64_t rows, const std::vector<int64_t>& free, int64_t offset,
              int64_t channel_multiplier, const std::vector<int64_t>& steps);
Expected memset(DType dst, int64_t elements, float value);
Expected reciprocal(const Tile& src, DType dst);

// The fp32 result of one activation function (nullopt: a host library function decides it).
std::optional<uint32_t> activation_function(ActFunc func, uint32_t x);

}  // namespace ncv::props::instr::expect
