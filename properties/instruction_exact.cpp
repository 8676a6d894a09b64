#include "properties/instruction_exact.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ncv::props::instr::exact {

namespace {

// A binary float format, described by its documented constants (dtype.cpp's header comment).
struct Format {
  int total_bits;
  int mant_bits;  // stored fraction bits
  int bias;
  double max_finite;
  bool saturate_finite;  // a finite value that rounds beyond max_finite -> max_finite, not Inf
  bool no_inf;           // e4m3fn: Inf input -> max finite; only S.1111.111 is NaN
  uint32_t inf;          // unsigned Inf pattern (unused when no_inf)
  uint32_t nan;          // unsigned canonical quiet NaN
};

const Format kF32{32, 23, 127, 0x1.fffffep127, false, false, 0x7f800000u, 0x7fc00000u};
const Format kBf16{16, 7, 127, 0x1.fep127, false, false, 0x7f80u, 0x7fc0u};
const Format kFp16{16, 10, 15, 65504.0, false, false, 0x7c00u, 0x7e00u};
const Format kE4M3{8, 3, 7, 240.0, true, false, 0x78u, 0x7cu};
const Format kE4M3Fn{8, 3, 7, 448.0, true, true, 0u, 0x7fu};
const Format kE5M2{8, 2, 15, 57344.0, true, false, 0x7cu, 0x7eu};

const Format& format_of(DType t) {
  switch (t) {
    case DType::fp32:
      return kF32;
    case DType::bf16:
      return kBf16;
    case DType::fp16:
      return kFp16;
    case DType::fp8_e4m3:
      return kE4M3;
    case DType::fp8_e4m3fn:
      return kE4M3Fn;
    case DType::fp8_e5m2:
      return kE5M2;
    default:
      throw std::logic_error("format_of: not a float dtype");
  }
}

uint32_t sign_bit(const Format& f) {
  return 1u << (f.total_bits - 1);
}

// Round-to-nearest-even of a finite magnitude `mag` onto the format's grid, with an unbounded
// exponent above. `tail` is the sign of what the exact value has beyond `mag` (-1, 0, +1); it
// only matters at an exact midpoint, because it is smaller than half a double ulp of `mag`.
double round_magnitude(const Format& f, double mag, int tail) {
  if (mag == 0.0) return 0.0;
  const int min_exp = 1 - f.bias;
  const int e = std::max(std::ilogb(mag), min_exp);
  const double quantum = std::ldexp(1.0, e - f.mant_bits);
  const double scaled = mag / quantum;  // exact: a power-of-two scaling, < 2^(mant_bits + 1)
  double n = std::floor(scaled);
  const double frac = scaled - n;  // exact
  const bool odd = std::fmod(n, 2.0) != 0.0;
  if (frac > 0.5 || (frac == 0.5 && (tail > 0 || (tail == 0 && odd)))) n += 1.0;
  return n * quantum;
}

// The bit pattern of a representable magnitude (<= max finite) with a sign.
uint32_t encode_fields(const Format& f, bool negative, double mag) {
  uint32_t field = 0;
  if (mag != 0.0) {
    const int min_exp = 1 - f.bias;
    const int e = std::ilogb(mag);
    if (e < min_exp) {
      field = static_cast<uint32_t>(std::ldexp(mag, f.mant_bits - min_exp));
    } else {
      const auto frac =
          static_cast<uint32_t>(std::ldexp(mag, f.mant_bits - e)) - (1u << f.mant_bits);
      field = (static_cast<uint32_t>(e + f.bias) << f.mant_bits) | frac;
    }
  }
  return (negative ? sign_bit(f) : 0u) | field;
}

// Exact value (hi + tail) -> format bits, applying the format's overflow rule.
uint32_t round_to_format(const Format& f, bool negative, double mag, int tail) {
  const uint32_t sign = negative ? sign_bit(f) : 0u;
  if (std::isinf(mag)) {
    return sign | (f.no_inf ? encode_fields(f, false, f.max_finite) : f.inf);
  }
  const double r = round_magnitude(f, mag, tail);
  if (r > f.max_finite) {
    return f.saturate_finite ? encode_fields(f, negative, f.max_finite) : (sign | f.inf);
  }
  return encode_fields(f, negative, r);
}

// Format bits -> (is NaN, value).
struct Decoded {
  bool nan = false;
  bool negative = false;
  double value = 0.0;
};
Decoded decode_format(const Format& f, uint32_t bits) {
  Decoded d;
  d.negative = (bits & sign_bit(f)) != 0;
  const uint32_t abs = bits & (sign_bit(f) - 1u);
  const uint32_t frac = abs & ((1u << f.mant_bits) - 1u);
  const uint32_t exp = abs >> f.mant_bits;
  const uint32_t exp_all_ones = (1u << (f.total_bits - 1 - f.mant_bits)) - 1u;
  if (f.no_inf ? abs == sign_bit(f) - 1u : exp == exp_all_ones) {
    if (f.no_inf || frac != 0) {
      d.nan = true;
      return d;
    }
    d.value = std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    d.value = std::ldexp(static_cast<double>(frac), 1 - f.bias - f.mant_bits);
  } else {
    d.value = std::ldexp(static_cast<double>(frac + (1u << f.mant_bits)),
                         static_cast<int>(exp) - f.bias - f.mant_bits);
  }
  if (d.negative) d.value = -d.value;
  return d;
}

uint32_t quiet(uint32_t a) {
  return a | 0x00400000u;
}
uint32_t nan_of(uint32_t a, uint32_t b) {
  if (is_nan(a)) return quiet(a);
  return is_nan(b) ? quiet(b) : kDefaultNaN;
}
uint32_t abs_bits(uint32_t a) {
  return a & 0x7fffffffu;
}
bool negative(uint32_t a) {
  return (a >> 31) != 0;
}
const uint32_t kPosInf = 0x7f800000u;
const uint32_t kOne = 0x3f800000u;

// hi + lo exactly (Knuth's TwoSum: exact for any finite doubles without overflow).
void two_sum(double a, double b, double& hi, double& lo) {
  hi = a + b;
  const double bv = hi - a;
  lo = (a - (hi - bv)) + (b - bv);
}

// Rounds the exact sum of two finite doubles to fp32. An exact zero keeps the sign IEEE gives
// (the host's double addition applies the same rule: -0 only for -0 + -0).
uint32_t round_sum(double a, double b) {
  double hi = 0, lo = 0;
  two_sum(a, b, hi, lo);
  return round_f32(hi, lo);
}

int64_t round_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (v <= -0x1p63) return std::numeric_limits<int64_t>::min();
  const double a = std::fabs(v);
  double n = std::floor(a);
  const double frac = a - n;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0.0)) n += 1.0;
  const auto i = static_cast<int64_t>(n);
  return v < 0 ? -i : i;
}

int64_t int_min(DType t) {
  return t == DType::int32 ? std::numeric_limits<int32_t>::min() : 0;
}
int64_t int_max(DType t) {
  switch (t) {
    case DType::int32:
      return std::numeric_limits<int32_t>::max();
    case DType::uint8:
      return 0xff;
    case DType::uint16:
      return 0xffff;
    default:
      return 0xffffffffLL;
  }
}

}  // namespace

bool is_nan(uint32_t f32) {
  return abs_bits(f32) > kPosInf;
}
bool is_inf(uint32_t f32) {
  return abs_bits(f32) == kPosInf;
}
double value(uint32_t f32) {
  if (is_nan(f32)) throw std::logic_error("exact::value of a NaN");
  const uint64_t sign = static_cast<uint64_t>(f32 >> 31) << 63;
  const uint32_t exp = (f32 >> 23) & 0xffu, frac = f32 & 0x7fffffu;
  if (exp == 0xffu) return std::bit_cast<double>(sign | 0x7ff0000000000000ull);
  if (exp == 0) {  // subnormal: frac * 2^-149, exact in double
    const double mag = static_cast<double>(frac) * 0x1p-149;
    return sign ? -mag : mag;
  }
  // A normal fp32 value as the double with the same sign, exponent and (widened) fraction.
  return std::bit_cast<double>(sign | (static_cast<uint64_t>(exp - 127 + 1023) << 52) |
                               (static_cast<uint64_t>(frac) << 29));
}
uint32_t f32_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

uint32_t round_f32(double hi, double lo) {
  const bool neg = std::signbit(hi);
  if (lo == 0.0) {
    // Already an fp32 value (a zero, or a normal double whose fraction fits in 23 bits): no
    // rounding, so the bits are rearranged directly (the common case in long accumulations).
    const auto d = std::bit_cast<uint64_t>(hi);
    const int e = static_cast<int>((d >> 52) & 0x7ffu) - 1023;
    const uint64_t frac = d & ((uint64_t{1} << 52) - 1u);
    const uint32_t sign = neg ? 0x80000000u : 0u;
    if (hi == 0.0) return sign;
    if (e >= -126 && e <= 127 && (frac & ((uint64_t{1} << 29) - 1u)) == 0) {
      return sign | (static_cast<uint32_t>(e + 127) << 23) | static_cast<uint32_t>(frac >> 29);
    }
  }
  const int tail = lo == 0.0 ? 0 : ((lo > 0.0) != neg ? 1 : -1);
  return round_to_format(kF32, neg, std::fabs(hi), tail);
}

uint32_t to_f32(DType t, uint32_t bits) {
  if (t == DType::fp32) return bits;
  if (is_integer(t)) {
    const double v = t == DType::int32
                         ? static_cast<double>(static_cast<int32_t>(bits))
                         : static_cast<double>(bits & static_cast<uint32_t>(int_max(t)));
    return round_f32(v, 0.0);
  }
  const Format& f = format_of(t);
  const Decoded d = decode_format(f, bits);
  if (d.nan) return (d.negative ? 0x80000000u : 0u) | kDefaultNaN;
  return round_to_format(kF32, d.negative, std::fabs(d.value), 0);
}

uint32_t from_f32(DType t, uint32_t f32) {
  if (t == DType::fp32) return f32;
  if (is_integer(t)) {
    if (is_nan(f32)) return 0;
    const double v = value(f32);
    const int64_t i = std::clamp(round_to_int64(v), int_min(t), int_max(t));
    return static_cast<uint32_t>(i);  // two's complement for negative int32
  }
  const Format& f = format_of(t);
  const bool neg = negative(f32);
  if (is_nan(f32)) return (neg ? sign_bit(f) : 0u) | f.nan;
  return round_to_format(f, neg, std::fabs(value(f32)), 0);
}

uint32_t convert(DType from, DType to, uint32_t bits) {
  return from == to ? bits : from_f32(to, to_f32(from, bits));
}

uint32_t add(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  if (is_inf(a) && is_inf(b) && negative(a) != negative(b)) return kDefaultNaN;
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  return round_sum(value(a), value(b));
}

uint32_t sub(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  return add(a, b ^ 0x80000000u);
}

uint32_t mul(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  const bool zero_a = abs_bits(a) == 0, zero_b = abs_bits(b) == 0;
  if ((is_inf(a) && zero_b) || (is_inf(b) && zero_a)) return kDefaultNaN;
  const uint32_t sign = (a ^ b) & 0x80000000u;
  if (is_inf(a) || is_inf(b)) return sign | kPosInf;
  return round_f32(value(a) * value(b), 0.0);  // the double product of two floats is exact
}

uint32_t div(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  const bool zero_a = abs_bits(a) == 0, zero_b = abs_bits(b) == 0;
  if ((is_inf(a) && is_inf(b)) || (zero_a && zero_b)) return kDefaultNaN;
  const uint32_t sign = (a ^ b) & 0x80000000u;
  if (is_inf(a) || zero_b) return sign | kPosInf;
  if (is_inf(b) || zero_a) return sign;
  const double x = value(a), y = value(b);
  const double q = x / y;
  // The remainder of a correctly rounded quotient is exact: x/y - q = r/y.
  const double r = std::fma(-q, y, x);
  return round_f32(q, (r > 0) == (y > 0) ? std::fabs(r) : -std::fabs(r));
}

uint32_t sqrt(uint32_t a) {
  if (is_nan(a)) return quiet(a);
  if (abs_bits(a) == 0) return a;
  if (negative(a)) return kDefaultNaN;
  if (is_inf(a)) return a;
  const double x = value(a);
  const double s = std::sqrt(x);
  return round_f32(s, std::fma(-s, s, x));  // sign of x - s^2 = sign of sqrt(x) - s
}

uint32_t fma(uint32_t a, uint32_t b, uint32_t acc) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  if (is_nan(acc)) return quiet(acc);
  if (is_inf(a) || is_inf(b)) {
    // The exact product is infinite only for an infinite operand (a finite product beyond
    // fp32's range may still be pulled back by acc, so it takes the exact path below).
    const uint32_t product = mul(a, b);  // +-Inf, or the default NaN for Inf * 0
    return is_nan(product) ? product : add(product, acc);
  }
  if (is_inf(acc)) return acc;
  return round_sum(value(a) * value(b), value(acc));
}

uint32_t max(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  const double x = value(a), y = value(b);
  if (x > y) return a;
  if (y > x) return b;
  return negative(a) ? b : a;
}

uint32_t min(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  const double x = value(a), y = value(b);
  if (x < y) return a;
  if (y < x) return b;
  return negative(a) ? a : b;
}

bool alu_is_exact(AluOp op) {
  return op != AluOp::pow && !is_bitwise(op) && !is_unary(op);
}

uint32_t alu(AluOp op, uint32_t a, uint32_t b) {
  auto compare = [&](auto pred) -> uint32_t {
    if (is_nan(a) || is_nan(b)) return op == AluOp::not_equal ? kOne : 0u;
    return pred(value(a), value(b)) ? kOne : 0u;
  };
  switch (op) {
    case AluOp::add:
      return add(a, b);
    case AluOp::subtract:
      return sub(a, b);
    case AluOp::multiply:
      return mul(a, b);
    case AluOp::divide:
      return div(a, b);
    case AluOp::max:
      return max(a, b);
    case AluOp::min:
      return min(a, b);
    case AluOp::abs_max:
      return max(abs_bits(a), abs_bits(b));
    case AluOp::abs_min:
      return min(abs_bits(a), abs_bits(b));
    case AluOp::is_equal:
      return compare([](double x, double y) { return x == y; });
    case AluOp::not_equal:
      return compare([](double x, double y) { return x != y; });
    case AluOp::is_gt:
      return compare([](double x, double y) { return x > y; });
    case AluOp::is_ge:
      return compare([](double x, double y) { return x >= y; });
    case AluOp::is_lt:
      return compare([](double x, double y) { return x < y; });
    case AluOp::is_le:
      return compare([](double x, double y) { return x <= y; });
    default:
      throw std::logic_error("exact::alu: no exact fp32 result for " +
                             std::string(alu_op_name(op)));
  }
}

int64_t int_of_f32(uint32_t f32) {
  return is_nan(f32) ? 0 : round_to_int64(value(f32));
}

int64_t int_value(DType t, uint32_t bits) {
  switch (t) {
    case DType::int32:
      return static_cast<int32_t>(bits);
    case DType::uint8:
      return bits & 0xffu;
    case DType::uint16:
      return bits & 0xffffu;
    case DType::uint32:
      return bits;
    default:
      return int_of_f32(to_f32(t, bits));
  }
}

int64_t alu_int(AluOp op, int64_t a, int64_t b) {
  switch (op) {
    case AluOp::bitwise_and:
      return a & b;
    case AluOp::bitwise_or:
      return a | b;
    case AluOp::bitwise_xor:
      return a ^ b;
    case AluOp::shift_left:
      // Counts outside [0, 31] give 0; the shift wraps modulo 2^64 before saturation.
      return b < 0 || b > 31 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case AluOp::shift_right:
      return b < 0 || b > 31 ? 0 : a >> b;  // arithmetic
    default:
      throw std::logic_error("exact::alu_int: not a bitwise operator");
  }
}

bool gpsimd_native_int(AluOp op, DType a, DType b, DType dst) {
  for (DType t : {a, b, dst}) {
    if (t != DType::int32 && t != DType::uint32) return false;
  }
  switch (op) {
    case AluOp::divide:
    case AluOp::pow:
      return false;
    default:
      return !is_bitwise(op) && !is_unary(op);
  }
}

// 128-bit integers: every product of two 32-bit values is exact in them (a GCC/Clang extension).
__extension__ typedef __int128 Int128;

int64_t native_int(AluOp op, int64_t a, int64_t b) {
  const Int128 x = a, y = b;
  Int128 r = 0;
  switch (op) {
    case AluOp::add:
      r = x + y;
      break;
    case AluOp::subtract:
      r = x - y;
      break;
    case AluOp::multiply:
      r = x * y;  // |a|, |b| < 2^32: fits in 128 bits
      break;
    case AluOp::max:
      r = x > y ? x : y;
      break;
    case AluOp::min:
      r = x < y ? x : y;
      break;
    case AluOp::abs_max:
    case AluOp::abs_min: {
      const Int128 ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
      r = op == AluOp::abs_max ? (ax > ay ? ax : ay) : (ax < ay ? ax : ay);
      break;
    }
    case AluOp::is_equal:
      return a == b;
    case AluOp::not_equal:
      return a != b;
    case AluOp::is_gt:
      return a > b;
    case AluOp::is_ge:
      return a >= b;
    case AluOp::is_lt:
      return a < b;
    case AluOp::is_le:
      return a <= b;
    default:
      throw std::logic_error("exact::native_int: not a GpSimd integer operator");
  }
  const Int128 lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(r < lo ? lo : r > hi ? hi : r);
}

uint32_t from_int(DType t, int64_t v) {
  if (is_integer(t)) return static_cast<uint32_t>(std::clamp(v, int_min(t), int_max(t)));
  if (v > (int64_t{1} << 53) || v < -(int64_t{1} << 53)) {
    throw std::logic_error("exact::from_int: a float destination needs |v| <= 2^53");
  }
  return from_f32(t, round_f32(static_cast<double>(v), 0.0));
}

}  // namespace ncv::props::instr::exact
