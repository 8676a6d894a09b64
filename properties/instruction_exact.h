// An independent implementation of the model's element arithmetic, for the instruction-level
// properties (property 5, properties/README.md): dtype conversions and fp32 operations written from
// the documented rules (model/README.md "Rounding and saturation" and "ALU operators and NaN",
// dtype.h, semantics.h), never by calling the model's dtype or semantics code.
//
// How it stays independent: every value is carried as its fp32 bit pattern; arithmetic is done
// on the host in double where the result is exact (products of two floats, and the pair
// (sum, error) of TwoSum), or as a correctly rounded double plus the sign of its remainder
// (division, square root). Rounding to a narrower format is one explicit round-to-nearest-even
// on the exact value's magnitude, with the remainder's sign breaking exact-midpoint ties.
#pragma once

#include <cstdint>

#include "model/ir/instruction.h"
#include "model/numerics/dtype.h"

namespace ncv::props::instr::exact {

inline constexpr uint32_t kDefaultNaN = 0x7fc00000u;

bool is_nan(uint32_t f32);
bool is_inf(uint32_t f32);
// The value of a non-NaN fp32 pattern.
double value(uint32_t f32);
uint32_t f32_bits(float f);

// Element bits of dtype `t` -> fp32 bits: exact for every float type (any NaN of a narrower
// float type becomes the quiet NaN with its sign, fp32 patterns pass unchanged); integers are
// rounded to nearest even when they exceed 2^24.
uint32_t to_f32(DType t, uint32_t bits);
// fp32 bits -> element bits of dtype `t`: round to nearest even, then the type's overflow rule
// (bf16/fp16: Inf; fp8 e4m3/e5m2: saturate finite values, keep Inf; e4m3fn: saturate Inf too),
// canonical quiet NaN with the sign kept; integers saturate and NaN becomes 0.
uint32_t from_f32(DType t, uint32_t f32);
// What an instruction stores when it moves an element of `from` into `to`: the same bits when the
// dtypes match, otherwise through fp32.
uint32_t convert(DType from, DType to, uint32_t bits);

// Rounds the exact value hi + lo (|lo| below half an ulp of hi, as TwoSum or a remainder gives)
// to fp32 with round-to-nearest-even; overflow gives +-Inf. Only the sign of lo is used.
uint32_t round_f32(double hi, double lo);

// fp32 operations with one rounding and the model's NaN rule: a NaN result is the first NaN
// operand quieted (sign and payload kept), a NaN made from non-NaN operands is 0x7fc00000.
uint32_t add(uint32_t a, uint32_t b);
uint32_t sub(uint32_t a, uint32_t b);
uint32_t mul(uint32_t a, uint32_t b);
uint32_t div(uint32_t a, uint32_t b);
uint32_t sqrt(uint32_t a);
// acc + a * b with one rounding (the matmul accumulation step, an fma).
uint32_t fma(uint32_t a, uint32_t b, uint32_t acc);
// max/min propagate NaN; max(-0, +0) = +0, min(-0, +0) = -0.
uint32_t max(uint32_t a, uint32_t b);
uint32_t min(uint32_t a, uint32_t b);

// The fp32 ALU operators whose result this file computes exactly: every non-bitwise operator
// except pow (the model uses the host's powf, which is not correctly rounded).
bool alu_is_exact(AluOp op);
uint32_t alu(AluOp op, uint32_t a, uint32_t b);

// The integer domain of the bitwise operators: integer dtypes read exactly, an fp32 value (an
// immediate) rounded to nearest even with NaN -> 0 and saturation to int64.
int64_t int_value(DType t, uint32_t bits);
int64_t int_of_f32(uint32_t f32);
int64_t alu_int(AluOp op, int64_t a, int64_t b);
// An integer result stored as dtype t: saturated for integer types; float types get the value
// rounded to fp32 and then encoded.
uint32_t from_int(DType t, int64_t v);

// GpSimd's tensor_tensor on int32/uint32 tiles (ISA-NEW tensor_tensor: "native integer
// arithmetic ... exact results for all 32-bit integer values"): whether `op` on these dtypes is
// computed so (add, subtract, multiply, max, min, abs_max, abs_min, comparisons; not divide or
// pow, whose integer forms are undocumented), and its exact value, clamped to int64 (from_int
// then saturates into the destination).
bool gpsimd_native_int(AluOp op, DType a, DType b, DType dst);
int64_t native_int(AluOp op, int64_t a, int64_t b);

}  // namespace ncv::props::instr::exact
