// Element types of the NeuronCore model: fp32 -> storage encoders and storage -> fp32 decoders.
//
// Everything here is integer bit manipulation on the fp32 pattern (no host float16 types, no
// dependence on the FP rounding mode), branch-light so it can sit in the interpreter's inner loops.
//
// Format constants and where they come from:
//   bf16  IEEE 754 binary32 with the low 16 fraction bits dropped: 8 exponent bits (bias 127),
//         7 fraction bits, max finite 0x7f7f = (2 - 2^-7) * 2^127. IEEE Inf/NaN encodings.
//   fp16  IEEE 754 binary16: 5 exponent bits (bias 15), 10 fraction bits, max finite 0x7bff =
//         65504, Inf 0x7c00, NaN = exponent 11111 with a non-zero fraction.
//   fp8   NKILIB: "FP8 ranges used by nki-library:
//         float8_e4m3 (Neuron legacy) max 240, float8_e4m3fn max 448, float8_e5m2 max 57344
//         (NKILIB kernel_helpers)". The encodings that give exactly those maxima:
//     fp8_e4m3    4 exponent bits (bias 7), 3 fraction bits, IEEE-like: exponent 1111 is reserved
//                 for Inf (S.1111.000) and NaN (S.1111.xxx, xxx != 0), so the max finite value is
//                 S.1110.111 = 1.875 * 2^7 = 240.
//     fp8_e4m3fn  OCP "fn" variant: 4 exponent bits (bias 7), 3 fraction bits, no Inf, the only
//                 NaN is S.1111.111, so the max finite value is S.1111.110 = 1.75 * 2^8 = 448.
//     fp8_e5m2    5 exponent bits (bias 15), 2 fraction bits, IEEE-like (Inf S.11111.00, NaN
//                 S.11111.xx, xx != 0): max finite S.11110.11 = 1.75 * 2^15 = 57344.
//
// Choices not fixed by dtype.h:
//   * NaN results are canonical quiet NaNs with the input's sign (payload dropped): bf16 S|0x7fc0,
//     fp16 S|0x7e00, fp8_e4m3 S|0x7c (S.1111.100), fp8_e5m2 S|0x7e (S.11111.10), fp8_e4m3fn
//     S|0x7f; decoding any NaN pattern gives the fp32 quiet NaN S|0x7fc00000.
//   * fp32 -> fp32 is the identity on bits (NaN payloads included): it is a plain copy.
//   * dtype_max_finite of an integer type is the largest fp32 value that the type represents
//     exactly (int32 2147483520, uint8 255, uint16 65535, uint32 4294967040), so that
//     quantize(t, dtype_max_finite(t)) == dtype_max_finite(t) holds for every type.
#include "model/numerics/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/numerics/dtype_bf16.h"

namespace ncv {
inline namespace numerics {
namespace {

constexpr uint32_t kF32AbsMask = 0x7fffffffu;
constexpr uint32_t kF32Inf = 0x7f800000u;
constexpr uint32_t kF32QuietNaN = 0x7fc00000u;
constexpr uint32_t kF32FracMask = 0x007fffffu;
constexpr uint32_t kF32Hidden = 0x00800000u;

// A binary float format narrower than fp32 whose exponent range fits inside fp32's (fp16, fp8).
struct SmallFormat {
  int total_bits;     // 16 or 8
  int mant_bits;      // stored fraction bits
  int bias;           // exponent bias
  bool fn;            // true: no Inf, only the all-ones pattern is NaN (e4m3fn)
  uint32_t overflow;  // result for a finite input that rounds beyond max finite (unsigned)
  uint32_t inf;       // result for +-Inf input (unsigned)
  uint32_t nan;       // result for NaN input (unsigned)
};

constexpr SmallFormat kFp16{16, 10, 15, false, 0x7c00u, 0x7c00u, 0x7e00u};
constexpr SmallFormat kE4M3{8, 3, 7, false, 0x77u, 0x78u, 0x7cu};
constexpr SmallFormat kE4M3Fn{8, 3, 7, true, 0x7eu, 0x7eu, 0x7fu};
constexpr SmallFormat kE5M2{8, 2, 15, false, 0x7bu, 0x7cu, 0x7eu};

// Round-to-nearest-even right shift of a non-negative integer: v / 2^s rounded, 1 <= s <= 31.
constexpr uint32_t rne_shift(uint32_t v, uint32_t s) {
  return (v + ((1u << (s - 1)) - 1u) + ((v >> s) & 1u)) >> s;
}

template <SmallFormat F>
inline uint32_t encode_small(uint32_t f) {
  constexpr uint32_t kShift = 23 - F.mant_bits;
  // fp32 exponent field of the target's smallest normal value 2^(1 - bias).
  constexpr uint32_t kMinNormalExp = 127 + 1 - F.bias;
  constexpr uint32_t kRebias = static_cast<uint32_t>(127 - F.bias) << 23;

  const uint32_t sign = (f >> 31) << (F.total_bits - 1);
  const uint32_t a = f & kF32AbsMask;
  const uint32_t e = a >> 23;

  // Target-normal range: rebias the exponent in place and round the fraction; a carry out of the
  // fraction increments the exponent field, which is the correctly rounded result. Anything that
  // rounds past max finite clamps to the format's overflow result (Inf or max finite). For inputs
  // outside this range the value is garbage (unsigned wrap-around) and is not selected.
  const uint32_t normal = std::min(rne_shift(a - kRebias, kShift), F.overflow);

  // Target-subnormal range: the value m * 2^(e - 150) in units of the target's smallest subnormal
  // 2^(1 - bias - mant_bits) is m / 2^s with s = kShift + kMinNormalExp - e > kShift. A carry gives
  // the smallest normal pattern, which is again correct. fp32 subnormals (e == 0) get a wrong
  // hidden bit, but s is then far above 24 and they round to 0, as they must.
  const uint32_t m = (a & kF32FracMask) | kF32Hidden;
  // (Clamped into [kShift, 31] so that the unselected computation for normal inputs is defined
  // too.)
  const uint32_t s = std::min<uint32_t>(kMinNormalExp - e, 31u - kShift) + kShift;
  const uint32_t sub = rne_shift(m, s);

  uint32_t r = e >= kMinNormalExp ? normal : sub;
  r = a >= kF32Inf ? (a == kF32Inf ? F.inf : F.nan) : r;
  return sign | r;
}

// Exact fp32 bit pattern of a SmallFormat pattern (constexpr so the fp8 tables are built at
// compile time).
template <SmallFormat F>
constexpr uint32_t decode_small(uint32_t h) {
  constexpr uint32_t kAbsMask = (1u << (F.total_bits - 1)) - 1u;
  constexpr uint32_t kFracMask = (1u << F.mant_bits) - 1u;
  constexpr uint32_t kExpAllOnes = kAbsMask & ~kFracMask;
  constexpr uint32_t kRebias = static_cast<uint32_t>(127 - F.bias) << 23;
  // Value of one unit of the fraction field at the subnormal exponent: 2^(1 - bias - mant_bits).
  constexpr float kSubUnit =
      std::bit_cast<float>(static_cast<uint32_t>(127 + 1 - F.bias - F.mant_bits) << 23);

  const uint32_t sign = ((h >> (F.total_bits - 1)) & 1u) << 31;
  const uint32_t a = h & kAbsMask;
  const uint32_t normal = (a << (23 - F.mant_bits)) + kRebias;
  // Exact: the fraction has <= 10 bits and kSubUnit is a power of two well inside fp32's range.
  const uint32_t sub = std::bit_cast<uint32_t>(static_cast<float>(a) * kSubUnit);
  uint32_t r = a <= kFracMask ? sub : normal;
  if constexpr (F.fn) {
    r = a == kAbsMask ? kF32QuietNaN : r;
  } else {
    r = a >= kExpAllOnes ? (a == kExpAllOnes ? kF32Inf : kF32QuietNaN) : r;
  }
  return sign | r;
}

template <SmallFormat F>
constexpr std::array<float, 256> make_fp8_table() {
  std::array<float, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) t[i] = std::bit_cast<float>(decode_small<F>(i));
  return t;
}

// Constant-initialised at compile time: no run-time initialisation, hence no thread-safety issue.
constexpr std::array<float, 256> kE4M3Table = make_fp8_table<kE4M3>();
constexpr std::array<float, 256> kE4M3FnTable = make_fp8_table<kE4M3Fn>();
constexpr std::array<float, 256> kE5M2Table = make_fp8_table<kE5M2>();

static_assert(kE4M3Table[0x77] == 240.0f && kE4M3Table[0x78] == std::bit_cast<float>(kF32Inf));
static_assert(kE4M3FnTable[0x7e] == 448.0f);
static_assert(kE5M2Table[0x7b] == 57344.0f && kE5M2Table[0x7c] == std::bit_cast<float>(kF32Inf));
static_assert(kE4M3Table[0x01] == 0x1p-9f && kE5M2Table[0x01] == 0x1p-16f);
static_assert(std::bit_cast<float>(decode_small<kFp16>(0x7bffu)) == 65504.0f);
static_assert(std::bit_cast<float>(decode_small<kFp16>(0x0001u)) == 0x1p-24f);

// Round-to-nearest-even of |x| for a finite fp32 magnitude pattern `a`, saturated at 2^32.
inline uint64_t round_abs_to_integer(uint32_t a) {
  const uint32_t e = a >> 23;
  if (e < 126) return 0;                               // |x| < 0.5
  if (e >= 127 + 32) return uint64_t{1} << 32;         // |x| >= 2^32
  const uint64_t m = (a & kF32FracMask) | kF32Hidden;  // |x| = m * 2^(e - 150)
  if (e >= 150) return m << (e - 150);
  const uint32_t s = 150 - e;  // 1..24
  return (m + ((uint64_t{1} << (s - 1)) - 1u) + ((m >> s) & 1u)) >> s;
}

template <int64_t kMin, int64_t kMax>
inline uint32_t encode_integer(uint32_t f) {
  const uint32_t a = f & kF32AbsMask;
  if (a > kF32Inf) return 0;  // NaN
  const auto mag = static_cast<int64_t>(round_abs_to_integer(a));
  const int64_t v = (f >> 31) != 0 ? -mag : mag;
  // Two's complement for int32 (well-defined modular conversion).
  return static_cast<uint32_t>(std::clamp(v, kMin, kMax));
}

template <class U>
inline U byteswap_if_big_endian(U v) {
  if constexpr (std::endian::native == std::endian::big) {
    U r = 0;
    for (size_t i = 0; i < sizeof(U); ++i) r = static_cast<U>((r << 8) | ((v >> (8 * i)) & 0xffu));
    return r;
  } else {
    return v;
  }
}

template <class U>
inline uint32_t load_le(const uint8_t* p) {
  U v;
  std::memcpy(&v, p, sizeof(U));
  return byteswap_if_big_endian(v);
}

template <class U>
inline void store_le(uint8_t* p, uint32_t bits) {
  const U v = byteswap_if_big_endian(static_cast<U>(bits));
  std::memcpy(p, &v, sizeof(U));
}

[[noreturn]] void refuse_packed(DType t, const char* what) {
  throw std::logic_error(
      std::string(dtype_name(t)) + " " + what +
      " (an MX packed dtype: only MX instructions and same-dtype copies take it)");
}

}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::fp8_e4m3:
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
    case DType::uint8:
      return 1;
    case DType::bf16:
    case DType::fp16:
    case DType::uint16:
      return 2;
    case DType::fp32:
    case DType::int32:
    case DType::uint32:
    case DType::fp8_e4m3fn_x4:
    case DType::fp8_e5m2_x4:
      return 4;
    case DType::fp4_e2m1fn_x4:
      return 2;
  }
  return 4;
}

bool is_float(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::bf16:
    case DType::fp16:
    case DType::fp8_e4m3:
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
      return true;
    case DType::int32:
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
    case DType::fp8_e4m3fn_x4:
    case DType::fp8_e5m2_x4:
    case DType::fp4_e2m1fn_x4:
      return false;  // packed: no single value
  }
  return false;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::int32:
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
      return true;
    default:
      return false;
  }
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32:
      return "fp32";
    case DType::bf16:
      return "bf16";
    case DType::fp16:
      return "fp16";
    case DType::fp8_e4m3:
      return "fp8_e4m3";
    case DType::fp8_e4m3fn:
      return "fp8_e4m3fn";
    case DType::fp8_e5m2:
      return "fp8_e5m2";
    case DType::int32:
      return "int32";
    case DType::uint8:
      return "uint8";
    case DType::uint16:
      return "uint16";
    case DType::uint32:
      return "uint32";
    case DType::fp8_e4m3fn_x4:
      return "fp8_e4m3fn_x4";
    case DType::fp8_e5m2_x4:
      return "fp8_e5m2_x4";
    case DType::fp4_e2m1fn_x4:
      return "fp4_e2m1fn_x4";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  for (DType t : kMxPackedDTypes) {
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

float dtype_max_finite(DType t) {
  switch (t) {
    case DType::fp32:
      return FLT_MAX;
    case DType::bf16:
      return std::bit_cast<float>(0x7f7f0000u);  // (2 - 2^-7) * 2^127
    case DType::fp16:
      return 65504.0f;
    case DType::fp8_e4m3:
      return 240.0f;
    case DType::fp8_e4m3fn:
      return 448.0f;
    case DType::fp8_e5m2:
      return 57344.0f;
    case DType::int32:
      return 2147483520.0f;  // 2^31 - 128: largest fp32 <= INT32_MAX
    case DType::uint8:
      return 255.0f;
    case DType::uint16:
      return 65535.0f;
    case DType::uint32:
      return 4294967040.0f;  // 2^32 - 256: largest fp32 <= UINT32_MAX
    case DType::fp8_e4m3fn_x4:
    case DType::fp8_e5m2_x4:
    case DType::fp4_e2m1fn_x4:
      break;
  }
  if (is_mx_packed(t)) refuse_packed(t, "has no largest value");
  return 0.0f;
}

uint32_t encode_from_float(DType t, float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  switch (t) {
    case DType::fp32:
      return f;
    case DType::bf16:
      return bf16_encode_bits(f);
    case DType::fp16:
      return encode_small<kFp16>(f);
    case DType::fp8_e4m3:
      return encode_small<kE4M3>(f);
    case DType::fp8_e4m3fn:
      return encode_small<kE4M3Fn>(f);
    case DType::fp8_e5m2:
      return encode_small<kE5M2>(f);
    case DType::int32:
      return encode_integer<INT32_MIN, INT32_MAX>(f);
    case DType::uint8:
      return encode_integer<0, UINT8_MAX>(f);
    case DType::uint16:
      return encode_integer<0, UINT16_MAX>(f);
    case DType::uint32:
      return encode_integer<0, UINT32_MAX>(f);
    case DType::fp8_e4m3fn_x4:
    case DType::fp8_e5m2_x4:
    case DType::fp4_e2m1fn_x4:
      refuse_packed(t, "is not encoded from one fp32 value");
  }
  return 0;
}

float decode_to_float(DType t, uint32_t bits) {
  switch (t) {
    case DType::fp32:
      return std::bit_cast<float>(bits);
    case DType::bf16:
      return std::bit_cast<float>(bf16_decode_bits(bits));
    case DType::fp16:
      return std::bit_cast<float>(decode_small<kFp16>(bits & 0xffffu));
    case DType::fp8_e4m3:
      return kE4M3Table[bits & 0xffu];
    case DType::fp8_e4m3fn:
      return kE4M3FnTable[bits & 0xffu];
    case DType::fp8_e5m2:
      return kE5M2Table[bits & 0xffu];
    case DType::int32:
      return static_cast<float>(static_cast<int32_t>(bits));  // RNE above 2^24
    case DType::uint8:
      return static_cast<float>(bits & 0xffu);
    case DType::uint16:
      return static_cast<float>(bits & 0xffffu);
    case DType::uint32:
      return static_cast<float>(bits);  // RNE above 2^24
    case DType::fp8_e4m3fn_x4:
    case DType::fp8_e5m2_x4:
    case DType::fp4_e2m1fn_x4:
      refuse_packed(t, "does not decode to one fp32 value");
  }
  return 0.0f;
}

float mx_packed_value(DType packed, uint32_t bits, int q) {
  switch (packed) {
    case DType::fp8_e4m3fn_x4:
      return kE4M3FnTable[(bits >> (8 * q)) & 0xffu];
    case DType::fp8_e5m2_x4:
      return kE5M2Table[(bits >> (8 * q)) & 0xffu];
    case DType::fp4_e2m1fn_x4: {
      // OCP MX v1.0 5.3.3 (FP4 E2M1): magnitudes 0, 0.5 (subnormal), 1, 1.5, 2, 3, 4, 6.
      static constexpr float kMag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
      const uint32_t nib = (bits >> (4 * q)) & 0xfu;
      const float m = kMag[nib & 7u];
      return (nib & 8u) ? -m : m;
    }
    default:
      break;
  }
  throw std::logic_error("mx_packed_value: " + std::string(dtype_name(packed)) +
                         " is not an MX packed dtype");
}

float e8m0_value(uint8_t b) {
  if (b == 0xff) return std::numeric_limits<float>::quiet_NaN();
  // 2^(b - 127) for b in [0, 254]: 2^-127 is an fp32 subnormal, exact.
  return std::ldexp(1.0f, static_cast<int>(b) - 127);
}

uint32_t load_bits(DType t, const uint8_t* p) {
  switch (dtype_size(t)) {
    case 1:
      return p[0];
    case 2:
      return load_le<uint16_t>(p);
    default:
      return load_le<uint32_t>(p);
  }
}

void store_bits(DType t, uint8_t* p, uint32_t bits) {
  switch (dtype_size(t)) {
    case 1:
      p[0] = static_cast<uint8_t>(bits);
      return;
    case 2:
      store_le<uint16_t>(p, bits);
      return;
    default:
      store_le<uint32_t>(p, bits);
      return;
  }
}

}  // namespace numerics
}  // namespace ncv
