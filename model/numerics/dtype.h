// Element types of the NeuronCore model and their conversions from fp32.
//
// Every arithmetic instruction converts its inputs to fp32, computes in fp32 and converts the
// result to the destination type (SHARED: the general arithmetic rule). These conversions are the
// only place where the model rounds, so they are exhaustively tested against an independent method.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ncv {
inline namespace numerics {

enum class DType : uint8_t {
  fp32,
  bf16,
  fp16,
  fp8_e4m3,    // Neuron legacy e4m3: IEEE-like (has Inf, NaN), max finite 240 (NKILIB)
  fp8_e4m3fn,  // OCP e4m3fn: no Inf, single NaN pattern S.1111.111, max finite 448
  fp8_e5m2,    // IEEE-like, max finite 57344
  int32,
  uint8,
  uint16,
  uint32,
  // MX (microscaling) packed operands of nisa.quantize_mx / nisa.nc_matmul_mx (NeuronCore-v4):
  // four quantized values in one element, value q of an element in bits [8q, 8q+8) (fp8) or
  // [4q, 4q+4) (fp4). The MX deep dive (aws-neuron-sdk nki/deep-dives/mxfp-matmul.rst, "Data
  // Tensor"): float8_*_x4 are 32 bits wide, float4_e2m1fn_x4 16 bits. They have no single value:
  // encode_from_float/decode_to_float refuse them (std::logic_error); the validator lets them
  // only into same-dtype DMA copies and the two MX instructions (model/semantics/README.md "MX").
  fp8_e4m3fn_x4,
  fp8_e5m2_x4,
  fp4_e2m1fn_x4,
};

inline constexpr DType kAllDTypes[] = {
    DType::fp32,     DType::bf16,  DType::fp16,  DType::fp8_e4m3, DType::fp8_e4m3fn,
    DType::fp8_e5m2, DType::int32, DType::uint8, DType::uint16,   DType::uint32};

// The MX packed dtypes (not in kAllDTypes: they have no fp32 round trip).
inline constexpr DType kMxPackedDTypes[] = {DType::fp8_e4m3fn_x4, DType::fp8_e5m2_x4,
                                            DType::fp4_e2m1fn_x4};
inline constexpr bool is_mx_packed(DType t) {
  return t == DType::fp8_e4m3fn_x4 || t == DType::fp8_e5m2_x4 || t == DType::fp4_e2m1fn_x4;
}
// The exact value of quantized value q (0..3) of a packed element: fp8 through the fp8 dtype's
// decoding (e4m3fn's S.1111.111 is NaN), fp4 e2m1 (OCP MX v1.0 section 5.3.3: 1 sign, 2 exponent
// bits with bias 1, 1 mantissa bit, no Inf or NaN: 0, 0.5, 1, 1.5, 2, 3, 4, 6).
float mx_packed_value(DType packed, uint32_t bits, int q);
// The E8M0 scale byte's value (OCP MX v1.0 section 5.4.1): 2^(b - 127); 0xFF is NaN.
float e8m0_value(uint8_t b);

// MX group: 8 partitions x one packed element, 32 values (ISA docstrings of quantize_mx and
// nc_matmul_mx). The scale row of the group holding partition p: scales stay in their data's
// 32-partition quadrant, in its first 4 rows (MX deep dive "Scale Tensor").
inline constexpr int64_t kMxGroupPartitions = 8;
inline constexpr int64_t mx_scale_row(int64_t p) {
  return (p / 32) * 32 + (p / kMxGroupPartitions) % 4;
}
// The rows a scale view must have for data on p partitions (p >= 1).
inline constexpr int64_t mx_scale_rows_needed(int64_t p) {
  return mx_scale_row(p - 1) + 1;
}

// Bytes per element.
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_integer(DType t);
// Canonical name used by the text form and the CLI ("fp32", "bf16", "fp8_e4m3fn", ...).
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

// Largest finite value of a float type (fp32: FLT_MAX).
float dtype_max_finite(DType t);

// fp32 -> destination bit pattern (low dtype_size(t) bytes are meaningful), round-to-nearest-even.
//   bf16, fp16: IEEE behaviour: overflow -> +-Inf, NaN -> quiet NaN with the sign kept.
//   fp8_e4m3, fp8_e5m2: saturating: a finite value beyond max finite -> +-max finite,
//     +-Inf -> +-Inf, NaN -> NaN.
//   fp8_e4m3fn: saturating; +-Inf -> +-448; NaN -> S.1111.111.
//   int32/uint*: round-to-nearest-even, saturate to the type's range, NaN -> 0.
// See model/README.md "Rounding and saturation" for why each choice was made.
uint32_t encode_from_float(DType t, float value);
// Destination bit pattern -> exact fp32 value (every value of every type is exact in fp32 except
// int32/uint32 values above 2^24, which round to nearest even).
float decode_to_float(DType t, uint32_t bits);

// Rounds a fp32 value to what storing it as `t` and reading it back gives.
inline float quantize(DType t, float value) {
  return decode_to_float(t, encode_from_float(t, value));
}

// Raw element access at a byte address (little-endian, unaligned allowed).
uint32_t load_bits(DType t, const uint8_t* p);
void store_bits(DType t, uint8_t* p, uint32_t bits);

}  // namespace numerics
}  // namespace ncv
