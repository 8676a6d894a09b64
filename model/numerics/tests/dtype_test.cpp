// Tests of model/numerics/dtype.
//
// The conversions are checked exhaustively (every bf16/fp16/fp8 pattern round-trips) and against an
// INDEPENDENT exact reference for > 1,000,000 fp32 inputs converted to every dtype. The reference
// shares no code or method with model/numerics/dtype.cpp: float targets enumerate all finite values
// of the format as doubles (exact), find the nearest one by binary search and exact double
// comparisons, break ties toward the even significand, and then apply the overflow rule from
// dtype.h; integer targets use std::floor with explicit tie handling in double arithmetic.
#include "model/numerics/dtype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/numerics/bf16_rows.h"
#include "model/numerics/tests/float_bits.h"

namespace ncv {
namespace {

using numtest::from_bits;
using numtest::to_bits;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Independent reference for the float targets.

struct RefFormat {
  DType type;
  int exp_bits;
  int mant_bits;
  int bias;
  bool fn;          // OCP e4m3fn: no Inf, the only NaN is S.1111.111
  bool saturating;  // finite overflow -> max finite (fp8) instead of Inf (bf16, fp16)
};

constexpr RefFormat kRefFormats[] = {
    {DType::bf16, 8, 7, 127, false, false},   {DType::fp16, 5, 10, 15, false, false},
    {DType::fp8_e4m3, 4, 3, 7, false, true},  {DType::fp8_e4m3fn, 4, 3, 7, true, true},
    {DType::fp8_e5m2, 5, 2, 15, false, true},
};

enum class Kind { finite, inf, nan };

struct RefTable {
  RefFormat fmt{};
  int bits = 0;
  uint32_t sign_bit = 0;
  uint32_t exp_mask = 0;  // exponent field, unshifted
  uint32_t frac_mask = 0;
  std::vector<double> values;      // every non-negative finite value, ascending
  std::vector<uint32_t> patterns;  // the matching (sign-less) patterns
  double max_finite = 0;
  double overflow_threshold = 0;  // max + ulp(max) / 2
  uint32_t max_pattern = 0;
  uint32_t inf_pattern = 0;  // IEEE-like formats only

  Kind classify(uint32_t p) const {
    const uint32_t a = p & ~sign_bit;
    if (fmt.fn) return a == (sign_bit - 1) ? Kind::nan : Kind::finite;
    const uint32_t e = (a >> fmt.mant_bits) & exp_mask;
    if (e != exp_mask) return Kind::finite;
    return (a & frac_mask) == 0 ? Kind::inf : Kind::nan;
  }

  // Exact value of a finite pattern.
  double value(uint32_t p) const {
    const uint32_t a = p & ~sign_bit;
    const int e = static_cast<int>((a >> fmt.mant_bits) & exp_mask);
    const double frac = static_cast<double>(a & frac_mask);
    const double mag =
        e == 0 ? std::ldexp(frac, 1 - fmt.bias - fmt.mant_bits)
               : std::ldexp(frac + std::ldexp(1.0, fmt.mant_bits), e - fmt.bias - fmt.mant_bits);
    return (p & sign_bit) != 0 ? -mag : mag;
  }
};

RefTable build_table(const RefFormat& f) {
  RefTable t;
  t.fmt = f;
  t.bits = 1 + f.exp_bits + f.mant_bits;
  t.sign_bit = 1u << (t.bits - 1);
  t.exp_mask = (1u << f.exp_bits) - 1;
  t.frac_mask = (1u << f.mant_bits) - 1;
  t.inf_pattern = t.exp_mask << f.mant_bits;
  std::vector<std::pair<double, uint32_t>> all;
  for (uint32_t p = 0; p < t.sign_bit; ++p) {
    if (t.classify(p) == Kind::finite) all.emplace_back(t.value(p), p);
  }
  std::sort(all.begin(), all.end());
  for (const auto& [v, p] : all) {
    t.values.push_back(v);
    t.patterns.push_back(p);
  }
  t.max_finite = t.values.back();
  t.max_pattern = t.patterns.back();
  const double ulp = t.values.back() - t.values[t.values.size() - 2];
  t.overflow_threshold = t.max_finite + ulp / 2;
  return t;
}

const std::vector<RefTable>& ref_tables() {
  static const std::vector<RefTable> tables = [] {
    std::vector<RefTable> v;
    for (const RefFormat& f : kRefFormats) v.push_back(build_table(f));
    return v;
  }();
  return tables;
}

const RefTable& ref_table(DType t) {
  for (const RefTable& r : ref_tables()) {
    if (r.fmt.type == t) return r;
  }
  throw std::logic_error("no reference table");
}

struct Expected {
  Kind kind;
  bool negative;
  uint32_t bits;  // meaningful unless kind == nan
};

Expected ref_encode(const RefTable& t, float x) {
  const bool neg = std::signbit(x);
  const uint32_t s = neg ? t.sign_bit : 0;
  if (std::isnan(x)) return {Kind::nan, neg, 0};
  if (std::isinf(x)) {
    if (t.fmt.fn) return {Kind::finite, neg, s | t.max_pattern};
    return {Kind::inf, neg, s | t.inf_pattern};
  }
  const double a = std::fabs(static_cast<double>(x));
  if (a > t.max_finite) {
    if (t.fmt.saturating || a < t.overflow_threshold) return {Kind::finite, neg, s | t.max_pattern};
    return {Kind::inf, neg, s | t.inf_pattern};
  }
  const size_t hi =
      static_cast<size_t>(std::lower_bound(t.values.begin(), t.values.end(), a) - t.values.begin());
  if (t.values[hi] == a) return {Kind::finite, neg, s | t.patterns[hi]};
  const size_t lo = hi - 1;  // a > 0 here, and 0 is in the table
  // Adjacent values have few significant bits, so their sum is exact; 2a is exact.
  const double twice = 2 * a;
  const double sum = t.values[lo] + t.values[hi];
  size_t pick;
  if (twice < sum) {
    pick = lo;
  } else if (twice > sum) {
    pick = hi;
  } else {
    pick = (t.patterns[lo] & 1u) == 0 ? lo : hi;
  }
  return {Kind::finite, neg, s | t.patterns[pick]};
}

bool matches(const RefTable& t, const Expected& e, uint32_t actual) {
  if ((actual >> t.bits) != 0) return false;
  if (e.kind == Kind::nan) {
    return t.classify(actual) == Kind::nan && ((actual & t.sign_bit) != 0) == e.negative;
  }
  return actual == e.bits;
}

// ---------------------------------------------------------------------------------------------
// Independent reference for the integer targets.

struct IntRef {
  DType type;
  double lo;
  double hi;
};

constexpr IntRef kIntRefs[] = {
    {DType::int32, -2147483648.0, 2147483647.0},
    {DType::uint8, 0.0, 255.0},
    {DType::uint16, 0.0, 65535.0},
    {DType::uint32, 0.0, 4294967295.0},
};

uint32_t ref_integer(const IntRef& r, float x) {
  if (std::isnan(x)) return 0;
  const double d = x;
  double v;
  if (std::isinf(d)) {
    v = d > 0 ? r.hi : r.lo;
  } else {
    const double fl = std::floor(d);
    const double frac = d - fl;  // exact
    if (frac > 0.5) {
      v = fl + 1;
    } else if (frac < 0.5) {
      v = fl;
    } else {
      v = std::fmod(fl, 2.0) == 0 ? fl : fl + 1;
    }
    v = std::clamp(v, r.lo, r.hi);
  }
  return static_cast<uint32_t>(static_cast<int64_t>(v));
}

// ---------------------------------------------------------------------------------------------
// Inputs: uniform fp32 patterns plus biased shares near the interesting points of every target.

std::vector<float> make_inputs() {
  std::mt19937_64 rng(0x6e63766572696679ull);  // fixed seed
  std::vector<uint32_t> in;
  in.reserve(1700000);
  auto sign = [&] { return (rng() & 1) != 0 ? 0x80000000u : 0u; };
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto around = [&](uint32_t center, int radius) {  // center +- radius fp32 ulps, same sign
    const int k = static_cast<int>(rng() % static_cast<uint64_t>(2 * radius + 1)) - radius;
    const int64_t b = static_cast<int64_t>(center) + k;
    return static_cast<uint32_t>(std::clamp<int64_t>(b, 0, 0x7fffffff));
  };

  // Specials: +-0, +-Inf, quiet and signalling NaNs of both signs, fp32 extremes.
  for (uint32_t b :
       {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
        0xff800001u, 0x7fbfffffu, 0x7fffffffu, 0xffffffffu, 0x7fd12345u, 0x00000001u, 0x80000001u,
        0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu}) {
    in.push_back(b);
  }
  // Uniformly random patterns.
  for (int i = 0; i < 400000; ++i) in.push_back(static_cast<uint32_t>(rng()));
  // Random significands with exponents 2^-30 .. 2^20, where the narrow formats live.
  for (int i = 0; i < 150000; ++i) {
    const uint32_t e = 127 - 30 + static_cast<uint32_t>(rng() % 51);
    in.push_back(sign() | (e << 23) | static_cast<uint32_t>(rng() & 0x7fffff));
  }
  for (const RefTable& t : ref_tables()) {
    // Near max finite and near the overflow threshold (exact in fp32 for every format).
    for (double anchor : {t.max_finite, t.overflow_threshold}) {
      const uint32_t center = to_bits(static_cast<float>(anchor));
      for (int i = 0; i < 30000; ++i) in.push_back(sign() | around(center, 256));
    }
    // Exact rounding midpoints between neighbours, and the fp32 values right next to them.
    const size_t n = t.values.size();
    for (int i = 0; i < 60000; ++i) {
      const size_t j = rng() % (n - 1);
      const double mid = (t.values[j] + t.values[j + 1]) / 2;  // exact in fp32
      in.push_back(sign() | around(to_bits(static_cast<float>(mid)), 2));
    }
    // The target's subnormal range and just above its smallest normal.
    const double min_normal = std::ldexp(1.0, 1 - t.fmt.bias);
    for (int i = 0; i < 40000; ++i) {
      in.push_back(sign() | to_bits(static_cast<float>(uniform(0, 1.25) * min_normal)));
    }
    const int min_normal_exp = 127 + 1 - t.fmt.bias;
    for (int i = 0; i < 20000; ++i) {
      const int e = std::max(0, min_normal_exp - t.fmt.mant_bits - 3 +
                                    static_cast<int>(rng() % (t.fmt.mant_bits + 4)));
      in.push_back(sign() | (static_cast<uint32_t>(e) << 23) |
                   static_cast<uint32_t>(rng() & 0x7fffff));
    }
  }
  // Integer targets: halves, quarters and whole numbers, and the saturation edges.
  for (int i = 0; i < 100000; ++i) {
    const double k = static_cast<double>(static_cast<int64_t>(rng() % 140000) - 70000);
    const double frac = static_cast<double>(rng() % 4) / 4;
    in.push_back(around(to_bits(static_cast<float>(std::fabs(k + frac))), 1) |
                 (k < 0 ? 0x80000000u : 0u));
  }
  for (float anchor : {0.5f, 1.5f, 2.5f, 255.5f, 256.0f, 65535.5f, 65536.0f, 8388608.0f,
                       16777216.0f, 2147483648.0f, 4294967296.0f}) {
    for (int i = 0; i < 400; ++i) in.push_back(sign() | around(to_bits(anchor), 300));
  }

  std::vector<float> out(in.size());
  std::transform(in.begin(), in.end(), out.begin(), from_bits);
  return out;
}

// ---------------------------------------------------------------------------------------------

TEST(DTypeMeta, SizesNamesAndParse) {
  const std::array<size_t, 10> sizes = {4, 2, 2, 1, 1, 1, 4, 1, 2, 4};
  const std::array<const char*, 10> names = {"fp32",     "bf16",  "fp16",  "fp8_e4m3", "fp8_e4m3fn",
                                             "fp8_e5m2", "int32", "uint8", "uint16",   "uint32"};
  for (size_t i = 0; i < std::size(kAllDTypes); ++i) {
    const DType t = kAllDTypes[i];
    EXPECT_EQ(dtype_size(t), sizes[i]) << names[i];
    EXPECT_EQ(dtype_name(t), names[i]);
    ASSERT_TRUE(parse_dtype(names[i]).has_value()) << names[i];
    EXPECT_EQ(*parse_dtype(names[i]), t);
    EXPECT_EQ(is_float(t), i < 6) << names[i];
    EXPECT_EQ(is_integer(t), i >= 6) << names[i];
  }
  for (const char* bad : {"", "FP32", "float32", "fp8", "e4m3", "int8", "fp32 ", "bf16x"}) {
    EXPECT_FALSE(parse_dtype(bad).has_value()) << bad;
  }
}

TEST(DTypeMeta, MaxFinite) {
  EXPECT_EQ(dtype_max_finite(DType::fp32), std::numeric_limits<float>::max());
  EXPECT_EQ(dtype_max_finite(DType::fp16), 65504.0f);
  EXPECT_EQ(dtype_max_finite(DType::fp8_e4m3), 240.0f);
  EXPECT_EQ(dtype_max_finite(DType::fp8_e4m3fn), 448.0f);
  EXPECT_EQ(dtype_max_finite(DType::fp8_e5m2), 57344.0f);
  for (const RefTable& t : ref_tables()) {
    EXPECT_EQ(static_cast<double>(dtype_max_finite(t.fmt.type)), t.max_finite)
        << dtype_name(t.fmt.type);
  }
  for (DType t : kAllDTypes) {
    const float m = dtype_max_finite(t);
    EXPECT_EQ(quantize(t, m), m) << dtype_name(t);
    if (is_float(t)) {
      EXPECT_EQ(quantize(t, -m), -m) << dtype_name(t);
    }
  }
}

TEST(DTypeMeta, LoadStoreLittleEndianUnaligned) {
  for (DType t : kAllDTypes) {
    const size_t n = dtype_size(t);
    std::array<uint8_t, 8> buf;
    buf.fill(0xaa);
    store_bits(t, buf.data() + 1, 0x12345678u);
    const std::array<uint8_t, 4> le = {0x78, 0x56, 0x34, 0x12};
    EXPECT_EQ(buf[0], 0xaa) << dtype_name(t);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(buf[1 + i], le[i]) << dtype_name(t) << " byte " << i;
    for (size_t i = 1 + n; i < buf.size(); ++i) EXPECT_EQ(buf[i], 0xaa) << dtype_name(t);
    const uint32_t mask = n == 4 ? 0xffffffffu : (1u << (8 * n)) - 1;
    EXPECT_EQ(load_bits(t, buf.data() + 1), 0x12345678u & mask) << dtype_name(t);
  }
}

// Every pattern of every narrow float format: decode is exact, and encode(decode(p)) == p (NaNs: a
// NaN with the same sign).
void check_every_pattern(const RefTable& t) {
  const DType type = t.fmt.type;
  int failures = 0;
  for (uint32_t p = 0; p < (1u << t.bits); ++p) {
    const float x = decode_to_float(type, p);
    const uint32_t back = encode_from_float(type, x);
    const bool neg = (p & t.sign_bit) != 0;
    bool ok;
    switch (t.classify(p)) {
      case Kind::nan:
        ok = std::isnan(x) && std::signbit(x) == neg && (to_bits(x) & 0x00400000u) != 0 &&
             (back >> t.bits) == 0 && t.classify(back) == Kind::nan &&
             ((back & t.sign_bit) != 0) == neg;
        break;
      case Kind::inf:
        ok = std::isinf(x) && std::signbit(x) == neg && back == p;
        break;
      case Kind::finite:
      default:
        ok = static_cast<double>(x) == t.value(p) && std::signbit(x) == neg && back == p;
        break;
    }
    if (!ok && ++failures <= 10) {
      ADD_FAILURE() << dtype_name(type) << " pattern " << hex(p) << " decodes to " << x << " ("
                    << hex(to_bits(x)) << "), expected " << t.value(p) << ", re-encodes to "
                    << hex(back);
    }
  }
  EXPECT_EQ(failures, 0) << dtype_name(type);
}

TEST(DTypeRoundTrip, EveryBf16AndFp16Pattern) {
  check_every_pattern(ref_table(DType::bf16));
  check_every_pattern(ref_table(DType::fp16));
}

TEST(DTypeRoundTrip, EveryFp8Pattern) {
  check_every_pattern(ref_table(DType::fp8_e4m3));
  check_every_pattern(ref_table(DType::fp8_e4m3fn));
  check_every_pattern(ref_table(DType::fp8_e5m2));
}

TEST(DTypeRoundTrip, IntegerDecode) {
  EXPECT_EQ(decode_to_float(DType::int32, 0x80000000u), -2147483648.0f);
  EXPECT_EQ(decode_to_float(DType::int32, 0xffffffffu), -1.0f);
  EXPECT_EQ(decode_to_float(DType::int32, 16777217u), 16777216.0f);  // RNE above 2^24
  EXPECT_EQ(decode_to_float(DType::int32, 16777219u), 16777220.0f);
  EXPECT_EQ(decode_to_float(DType::uint32, 0xffffffffu), 4294967296.0f);
  EXPECT_EQ(decode_to_float(DType::uint16, 65535u), 65535.0f);
  EXPECT_EQ(decode_to_float(DType::uint8, 255u), 255.0f);
  for (uint32_t v = 0; v < 65536; ++v) {
    EXPECT_EQ(encode_from_float(DType::uint16, decode_to_float(DType::uint16, v)), v);
    const auto s = static_cast<uint32_t>(static_cast<int32_t>(v) - 32768);
    EXPECT_EQ(encode_from_float(DType::int32, decode_to_float(DType::int32, s)), s);
  }
}

TEST(DTypeReference, RandomFp32ToEveryDType) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<float> inputs = make_inputs();
  ASSERT_GE(inputs.size(), 1000000u);
  size_t checked = 0;
  for (DType type : kAllDTypes) {
    int failures = 0;
    auto report = [&](float x, uint32_t actual, const std::string& expected) {
      if (++failures <= 10) {
        ADD_FAILURE() << dtype_name(type) << ": fp32 " << hex(to_bits(x)) << " (" << x
                      << ") encodes to " << hex(actual) << ", expected " << expected;
      }
    };
    if (type == DType::fp32) {
      for (float x : inputs) {
        const uint32_t actual = encode_from_float(type, x);
        if (actual != to_bits(x)) report(x, actual, hex(to_bits(x)));
      }
    } else if (is_float(type)) {
      const RefTable& t = ref_table(type);
      for (float x : inputs) {
        const uint32_t actual = encode_from_float(type, x);
        const Expected e = ref_encode(t, x);
        if (!matches(t, e, actual)) {
          report(x, actual, e.kind == Kind::nan ? (e.negative ? "-NaN" : "+NaN") : hex(e.bits));
        }
      }
    } else {
      const IntRef* r = nullptr;
      for (const IntRef& c : kIntRefs) {
        if (c.type == type) r = &c;
      }
      ASSERT_NE(r, nullptr);
      for (float x : inputs) {
        const uint32_t actual = encode_from_float(type, x);
        const uint32_t expected = ref_integer(*r, x);
        if (actual != expected) report(x, actual, hex(expected));
      }
    }
    checked += inputs.size();
    EXPECT_EQ(failures, 0) << dtype_name(type) << ": " << failures << " of " << inputs.size();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("inputs", static_cast<int>(inputs.size()));
  std::printf("[          ] %zu fp32 inputs x %zu dtypes = %zu conversions checked in %.2f s\n",
              inputs.size(), std::size(kAllDTypes), checked, secs);
}

// The reference itself, on a few values worked out by hand.
TEST(DTypeReference, ReferenceSanity) {
  const RefTable& e4m3 = ref_table(DType::fp8_e4m3);
  EXPECT_EQ(e4m3.max_finite, 240.0);
  EXPECT_EQ(e4m3.overflow_threshold, 248.0);
  EXPECT_EQ(ref_table(DType::fp8_e4m3fn).max_finite, 448.0);
  EXPECT_EQ(ref_table(DType::fp8_e5m2).max_finite, 57344.0);
  EXPECT_EQ(ref_table(DType::fp16).max_finite, 65504.0);
  EXPECT_EQ(ref_table(DType::fp16).overflow_threshold, 65520.0);
  EXPECT_EQ(ref_table(DType::bf16).max_finite, std::ldexp(255.0, 120));
  EXPECT_EQ(ref_encode(ref_table(DType::fp16), 1.0f).bits, 0x3c00u);
  EXPECT_EQ(ref_encode(ref_table(DType::bf16), -2.0f).bits, 0xc000u);
}

// ---------------------------------------------------------------------------------------------
// Named cases.

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(DTypeNamed, NegativeZeroStaysNegativeZero) {
  for (DType t : kAllDTypes) {
    if (!is_float(t)) continue;
    const uint32_t sign = 1u << (8 * dtype_size(t) - 1);
    EXPECT_EQ(encode_from_float(t, -0.0f), sign) << dtype_name(t);
    EXPECT_EQ(encode_from_float(t, 0.0f), 0u) << dtype_name(t);
    const float back = decode_to_float(t, sign);
    EXPECT_TRUE(back == 0.0f && std::signbit(back)) << dtype_name(t);
    // A negative value too small for the format also rounds to -0.
    EXPECT_EQ(encode_from_float(t, -from_bits(1)), t == DType::fp32 ? 0x80000001u : sign)
        << dtype_name(t);
  }
}

TEST(DTypeNamed, Fp8E4m3) {
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3, 240.0f), 0x77u);
  EXPECT_EQ(quantize(DType::fp8_e4m3, 240.0f), 240.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3, 241.0f), 240.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3, 1e6f), 240.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3, -1e6f), -240.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3, 3.0e38f), 240.0f);
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3, kInf), 0x78u);
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3, -kInf), 0xf8u);
  const uint32_t nan = encode_from_float(DType::fp8_e4m3, kNaN);
  EXPECT_EQ(nan & 0x78u, 0x78u);
  EXPECT_NE(nan & 0x07u, 0u);
  EXPECT_EQ(quantize(DType::fp8_e4m3, 0x1p-9f), 0x1p-9f);    // smallest subnormal
  EXPECT_EQ(quantize(DType::fp8_e4m3, 0x1p-10f), 0.0f);      // tie -> even (0)
  EXPECT_EQ(quantize(DType::fp8_e4m3, 0x1.8p-9f), 0x1p-8f);  // tie -> even (2 * 2^-9)
}

TEST(DTypeNamed, Fp8E4m3fn) {
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3fn, 448.0f), 0x7eu);
  EXPECT_EQ(quantize(DType::fp8_e4m3fn, 448.0f), 448.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3fn, 480.0f), 448.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3fn, 1e6f), 448.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3fn, kInf), 448.0f);
  EXPECT_EQ(quantize(DType::fp8_e4m3fn, -kInf), -448.0f);
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3fn, kNaN), 0x7fu);
  EXPECT_EQ(encode_from_float(DType::fp8_e4m3fn, -kNaN), 0xffu);
  EXPECT_TRUE(std::isnan(decode_to_float(DType::fp8_e4m3fn, 0x7f)));
  EXPECT_EQ(decode_to_float(DType::fp8_e4m3fn, 0x78), 256.0f);  // S.1111.000 is finite
}

TEST(DTypeNamed, Fp8E5m2) {
  EXPECT_EQ(encode_from_float(DType::fp8_e5m2, 57344.0f), 0x7bu);
  EXPECT_EQ(quantize(DType::fp8_e5m2, 61440.0f), 57344.0f);
  EXPECT_EQ(quantize(DType::fp8_e5m2, 1e9f), 57344.0f);
  EXPECT_EQ(encode_from_float(DType::fp8_e5m2, kInf), 0x7cu);
  EXPECT_EQ(encode_from_float(DType::fp8_e5m2, -kInf), 0xfcu);
  EXPECT_TRUE(std::isnan(quantize(DType::fp8_e5m2, kNaN)));
  EXPECT_EQ(quantize(DType::fp8_e5m2, 0x1p-16f), 0x1p-16f);  // smallest subnormal
}

TEST(DTypeNamed, Bf16AndFp16) {
  EXPECT_EQ(quantize(DType::bf16, 1.0f + 0x1p-8f), 1.0f);                // tie -> even
  EXPECT_EQ(quantize(DType::bf16, 1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);  // tie -> even (up)
  EXPECT_EQ(encode_from_float(DType::bf16, 1.0f), 0x3f80u);
  EXPECT_EQ(encode_from_float(DType::bf16, std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(encode_from_float(DType::bf16, -kInf), 0xff80u);
  const uint32_t bn = encode_from_float(DType::bf16, -kNaN);
  EXPECT_TRUE((bn & 0x8000u) != 0 && (bn & 0x7f80u) == 0x7f80u && (bn & 0x7fu) != 0);
  EXPECT_EQ(encode_from_float(DType::bf16, from_bits(0x00010000u)), 0x0001u);  // subnormal
  EXPECT_EQ(encode_from_float(DType::fp16, 65504.0f), 0x7bffu);
  EXPECT_EQ(encode_from_float(DType::fp16, 65519.0f), 0x7bffu);
  EXPECT_EQ(encode_from_float(DType::fp16, 65520.0f), 0x7c00u);  // overflow -> Inf
  EXPECT_EQ(encode_from_float(DType::fp16, -1e6f), 0xfc00u);
  EXPECT_EQ(encode_from_float(DType::fp16, 0x1p-24f), 0x0001u);
  EXPECT_EQ(encode_from_float(DType::fp16, 0x1p-25f), 0x0000u);      // tie -> even
  EXPECT_EQ(encode_from_float(DType::fp16, 0x1.8p-24f), 0x0002u);    // tie -> even
  EXPECT_EQ(encode_from_float(DType::fp16, 0x1.ffcp-15f), 0x0400u);  // carry to min normal
  const uint32_t hn = encode_from_float(DType::fp16, kNaN);
  EXPECT_TRUE((hn & 0x8000u) == 0 && (hn & 0x7c00u) == 0x7c00u && (hn & 0x3ffu) != 0);
}

TEST(DTypeNamed, Integers) {
  EXPECT_EQ(encode_from_float(DType::uint8, 2.5f), 2u);
  EXPECT_EQ(encode_from_float(DType::uint8, 3.5f), 4u);
  EXPECT_EQ(encode_from_float(DType::uint8, -1.0f), 0u);
  EXPECT_EQ(encode_from_float(DType::uint8, 300.0f), 255u);
  EXPECT_EQ(encode_from_float(DType::uint8, 255.5f), 255u);
  EXPECT_EQ(encode_from_float(DType::uint16, 65535.5f), 65535u);
  EXPECT_EQ(encode_from_float(DType::uint16, 0.5f), 0u);
  EXPECT_EQ(encode_from_float(DType::uint16, 1.5f), 2u);
  EXPECT_EQ(encode_from_float(DType::int32, 3e9f), 2147483647u);
  EXPECT_EQ(encode_from_float(DType::int32, -3e9f), 0x80000000u);
  EXPECT_EQ(encode_from_float(DType::int32, -2147483648.0f), 0x80000000u);
  EXPECT_EQ(encode_from_float(DType::int32, -2.5f), static_cast<uint32_t>(-2));
  EXPECT_EQ(encode_from_float(DType::int32, -0.5f), 0u);
  EXPECT_EQ(encode_from_float(DType::int32, kInf), 2147483647u);
  EXPECT_EQ(encode_from_float(DType::uint32, 4294967296.0f), 0xffffffffu);
  EXPECT_EQ(encode_from_float(DType::uint32, 4294967040.0f), 4294967040u);
  EXPECT_EQ(encode_from_float(DType::uint32, -kInf), 0u);
  for (DType t : {DType::int32, DType::uint8, DType::uint16, DType::uint32}) {
    EXPECT_EQ(encode_from_float(t, kNaN), 0u) << dtype_name(t);
    EXPECT_EQ(encode_from_float(t, -kNaN), 0u) << dtype_name(t);
    EXPECT_EQ(encode_from_float(t, from_bits(0x7f800001u)), 0u) << dtype_name(t);
  }
}

}  // namespace
}  // namespace ncv

namespace ncv {
namespace {

// Every build of the contiguous bf16 run loops (AVX2, portable) against dtype.cpp's conversions:
// all 65536 bf16 patterns decoded, and a sweep of fp32 patterns (with every special) encoded.
TEST(Bf16Rows, EveryBuildMatchesTheScalarConversions) {
  std::vector<uint8_t> in(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    in[2 * h] = static_cast<uint8_t>(h);
    in[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  std::vector<float> fs;
  for (uint64_t b = 0; b < 0x100000000ull; b += 65521)
    fs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (uint32_t b : {0x7f7fffffu, 0x7f7f8000u, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffbfffffu,
                     0x00000001u, 0x80008000u, 0x3f808000u, 0x3f818000u}) {
    fs.push_back(std::bit_cast<float>(b));
  }
  for (const auto& loops : detail::bf16_row_loops()) {
    std::vector<float> out(65536);
    ASSERT_TRUE(loops.decode(in.data(), out.data(), 65536));
    for (uint32_t h = 0; h < 65536; ++h) {
      ASSERT_EQ(std::bit_cast<uint32_t>(out[h]),
                std::bit_cast<uint32_t>(decode_to_float(DType::bf16, h)))
          << loops.name << " decode 0x" << std::hex << h;
    }
    std::vector<uint8_t> enc(2 * fs.size());
    ASSERT_TRUE(loops.encode(fs.data(), enc.data(), static_cast<int64_t>(fs.size())));
    for (size_t i = 0; i < fs.size(); ++i) {
      const uint32_t h = enc[2 * i] | (static_cast<uint32_t>(enc[2 * i + 1]) << 8);
      ASSERT_EQ(h, encode_from_float(DType::bf16, fs[i]))
          << loops.name << " encode 0x" << std::hex << std::bit_cast<uint32_t>(fs[i]);
    }
  }
}

}  // namespace
}  // namespace ncv
