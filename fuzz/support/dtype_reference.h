// The exact reference of fuzz_dtype: fp32 -> every storage type and back, written from the format
// definitions (bit fields -> value with ldexp in double) rather than from
// model/numerics/dtype.cpp's bit tricks, so that a shared mistake is unlikely.
//
// Rounding is decided on exact values: for a finite |x| the reference finds the two neighbouring
// representable magnitudes lo <= |x| < hi by binary search over the positive patterns (their values
// increase with the pattern in every format here) and compares |x| with the midpoint (lo + hi) / 2.
// Every fp32 value, every target value and every such midpoint is exact in double (at most 25
// significant bits, exponents inside double's range), so the comparison is exact.
//
// Semantics (dtype.h, model/numerics/README.md: RNE, integer casts RNE + saturate):
//   bf16, fp16      IEEE: |x| >= max + ulp/2 -> Inf (the tie rounds to the even 2^(emax+1)).
//   fp8 e4m3/e5m2   saturating: finite |x| > max -> max; Inf -> Inf.
//   fp8 e4m3fn      saturating: finite |x| > max -> max; Inf -> max (no Inf encoding).
//   NaN             the canonical quiet NaN of the format with the input's sign (dtype.cpp).
//   integers        RNE, saturate to the range, NaN -> 0, +-Inf -> the range ends.
// Decoding: the exact value; NaN patterns -> fp32 quiet NaN with the sign; int32/uint32 above
// 2^24 round to nearest even in fp32 (through double, which holds every 32-bit integer exactly).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "model/numerics/dtype.h"

namespace ncv::fuzz::dtype_ref {

struct Format {
  int bits;               // 16 or 8
  int exp_bits;           // exponent field width
  int mant_bits;          // fraction field width
  int bias;               // exponent bias
  bool fn;                // no Inf, the only NaN is all ones (OCP e4m3fn)
  bool saturating;        // finite overflow -> max finite
  uint32_t inf_result;    // |result| for an Inf input
  uint32_t nan_result;    // |result| for a NaN input (canonical quiet NaN)
  double max_from_facts;  // the max finite value the sources (NKILIB, SHARED) and dtype.h state
};

inline Format format_of(DType t) {
  switch (t) {
    case DType::bf16:
      return {16, 8, 7, 127, false, false, 0x7f80u, 0x7fc0u, 0x1.fep127};
    case DType::fp16:
      return {16, 5, 10, 15, false, false, 0x7c00u, 0x7e00u, 65504.0};
    case DType::fp8_e4m3:
      return {8, 4, 3, 7, false, true, 0x78u, 0x7cu, 240.0};
    case DType::fp8_e4m3fn:
      return {8, 4, 3, 7, true, true, 0x7eu, 0x7fu, 448.0};
    case DType::fp8_e5m2:
      return {8, 5, 2, 15, false, true, 0x7cu, 0x7eu, 57344.0};
    default:
      return {};
  }
}

inline uint32_t abs_mask(const Format& f) {
  return (1u << (f.bits - 1)) - 1u;
}
inline uint32_t frac_mask(const Format& f) {
  return (1u << f.mant_bits) - 1u;
}
inline uint32_t exp_field(const Format& f, uint32_t a) {
  return a >> f.mant_bits;
}
inline uint32_t exp_max(const Format& f) {
  return (1u << f.exp_bits) - 1u;
}

inline bool is_nan_pattern(const Format& f, uint32_t h) {
  const uint32_t a = h & abs_mask(f);
  if (f.fn) return a == abs_mask(f);
  return exp_field(f, a) == exp_max(f) && (a & frac_mask(f)) != 0;
}
inline bool is_inf_pattern(const Format& f, uint32_t h) {
  const uint32_t a = h & abs_mask(f);
  return !f.fn && exp_field(f, a) == exp_max(f) && (a & frac_mask(f)) == 0;
}

// Largest finite magnitude pattern.
inline uint32_t max_pattern(const Format& f) {
  return f.fn ? abs_mask(f) - 1u : (exp_max(f) << f.mant_bits) - 1u;
}

// Exact magnitude of a finite non-negative pattern.
inline double magnitude(const Format& f, uint32_t a) {
  const uint32_t e = exp_field(f, a);
  const double frac = static_cast<double>(a & frac_mask(f));
  if (e == 0) return std::ldexp(frac, 1 - f.bias - f.mant_bits);
  return std::ldexp(std::ldexp(frac, -f.mant_bits) + 1.0, static_cast<int>(e) - f.bias);
}

// fp32 -> pattern of a narrow float format.
inline uint32_t encode_float(const Format& f, float x) {
  const uint32_t sign = std::signbit(x) ? (1u << (f.bits - 1)) : 0u;
  if (std::isnan(x)) return sign | f.nan_result;
  if (std::isinf(x)) return sign | f.inf_result;
  const double a = std::fabs(static_cast<double>(x));
  const uint32_t top = max_pattern(f);
  const double max = magnitude(f, top);
  if (a > max) {
    if (f.saturating) return sign | top;
    const double ulp = max - magnitude(f, top - 1);
    return sign | (a >= max + ulp / 2 ? f.inf_result : top);
  }
  // Largest pattern lo with magnitude(lo) <= a (magnitude(0) = 0 <= a).
  uint32_t lo = 0, hi = top;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (magnitude(f, mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (magnitude(f, lo) == a || lo == top) return sign | lo;
  const double midpoint = (magnitude(f, lo) + magnitude(f, lo + 1)) / 2;
  uint32_t r = lo;
  if (a > midpoint || (a == midpoint && (lo & 1u) != 0)) r = lo + 1;
  return sign | r;
}

// Pattern of a narrow float format -> fp32 bits.
inline uint32_t decode_float(const Format& f, uint32_t h) {
  h &= (1u << f.bits) - 1u;
  const uint32_t sign = (h >> (f.bits - 1)) != 0 ? 0x80000000u : 0u;
  if (is_nan_pattern(f, h)) return sign | 0x7fc00000u;
  if (is_inf_pattern(f, h)) return sign | 0x7f800000u;
  const float v = static_cast<float>(magnitude(f, h & abs_mask(f)));  // exact
  return sign | std::bit_cast<uint32_t>(v);
}

// fp32 -> integer pattern: RNE on the exact value, saturated to [lo, hi], NaN -> 0.
inline uint32_t encode_integer(float x, double lo, double hi) {
  if (std::isnan(x)) return 0;
  double v = static_cast<double>(x);
  if (std::isfinite(v)) {
    const double fl = std::floor(v);
    const double rest = v - fl;  // exact: fl and v share v's ulp or finer
    v = fl;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(fl, 2.0) != 0.0)) v = fl + 1.0;
  }
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<uint32_t>(static_cast<int64_t>(v));  // int32: two's complement
}

inline uint32_t encode(DType t, float x) {
  switch (t) {
    case DType::fp32:
      return std::bit_cast<uint32_t>(x);
    case DType::int32:
      return encode_integer(x, -2147483648.0, 2147483647.0);
    case DType::uint8:
      return encode_integer(x, 0.0, 255.0);
    case DType::uint16:
      return encode_integer(x, 0.0, 65535.0);
    case DType::uint32:
      return encode_integer(x, 0.0, 4294967295.0);
    default:
      return encode_float(format_of(t), x);
  }
}

// Pattern (low dtype_size bytes) -> fp32 bits.
inline uint32_t decode(DType t, uint32_t bits) {
  switch (t) {
    case DType::fp32:
      return bits;
    case DType::int32:
      return std::bit_cast<uint32_t>(
          static_cast<float>(static_cast<double>(static_cast<int32_t>(bits))));
    case DType::uint8:
      return std::bit_cast<uint32_t>(static_cast<float>(bits & 0xffu));
    case DType::uint16:
      return std::bit_cast<uint32_t>(static_cast<float>(bits & 0xffffu));
    case DType::uint32:
      return std::bit_cast<uint32_t>(static_cast<float>(static_cast<double>(bits)));
    default:
      return decode_float(format_of(t), bits);
  }
}

}  // namespace ncv::fuzz::dtype_ref
