// Private building blocks of model/semantics_*.cpp (not part of the model's interface): the
// scalar arithmetic with the model's NaN rules, the integer domain of the bitwise operators, the
// activation functions, whole-row decoding/encoding for the fast paths, and the aliasing
// analysis that tells a fast path whether it may stream row by row.
//
// Both execution modes call the same scalar functions defined here; they differ only in how
// they traverse Views. That is what makes "fast and reference agree bit for bit" hold by
// construction for the elementwise operations, and the tests check the traversals.
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "model/numerics/fp32_exp.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace semantics {

// fp32 expressions must be evaluated in fp32 (no x87 excess precision), or the model's results
// would depend on the compiler's register allocation.
static_assert(FLT_EVAL_METHOD == 0, "the model computes in fp32 and needs FLT_EVAL_METHOD == 0");

// ---------------------------------------------------------------------------------------------
// NaN rules. IEEE 754 leaves the payload and sign of a NaN result open and x86 resolves it by
// instruction operand order, which the compiler is free to commute (a + b vs b + a) and which
// differs between scalar and SIMD code. So the model fixes it explicitly, independent of the
// host: a NaN result of an operation is its FIRST NaN operand, quieted (payload and sign kept,
// so poison values stay recognisable); a NaN created from non-NaN operands (Inf - Inf, 0 * Inf,
// 0 / 0, out-of-range activation input) is the default NaN 0x7fc00000.
// Every operation rounds exactly once, never fused into an FMA even when the target has one
// (GCC contracts a*b+c across statements by default, also in ISO C++ mode): each arithmetic
// result feeds both the NaN test and the returned value, and GCC only contracts a product that
// has no other use; clang only contracts inside a single expression, and each operation here is
// its own function. (The build also sets -ffp-contract=off everywhere; this code does not rely on
// it.)

inline constexpr uint32_t kDefaultNaNBits = 0x7fc00000u;
inline float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
inline uint32_t to_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
// True when any of x[0..n) is a NaN (written so that it vectorises).
inline bool any_nan(const float* x, int64_t n) {
  uint32_t nan = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, 4);
    nan |= (u & 0x7fffffffu) > 0x7f800000u;
  }
  return nan != 0;
}
inline float default_nan() {
  return from_bits(kDefaultNaNBits);
}
inline bool is_nan(float x) {
  return std::isnan(x);
}
inline float quiet(float x) {
  return from_bits(to_bits(x) | 0x00400000u);
}

inline float nan_of(float a) {
  return is_nan(a) ? quiet(a) : default_nan();
}
inline float nan_of(float a, float b) {
  if (is_nan(a)) return quiet(a);
  return is_nan(b) ? quiet(b) : default_nan();
}
inline float fix_nan(float r, float a) {
  return is_nan(r) ? nan_of(a) : r;
}
inline float fix_nan(float r, float a, float b) {
  return is_nan(r) ? nan_of(a, b) : r;
}

inline float f_add(float a, float b) {
  return fix_nan(a + b, a, b);
}
inline float f_sub(float a, float b) {
  return fix_nan(a - b, a, b);
}
inline float f_mul(float a, float b) {
  return fix_nan(a * b, a, b);
}
inline float f_div(float a, float b) {
  return fix_nan(a / b, a, b);
}

// max/min propagate NaN (a poisoned operand is never hidden); max(-0, +0) = +0 and
// min(-0, +0) = -0 (IEEE 754-2019 maximum/minimum), independent of operand order.
inline float f_max(float a, float b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  if (a > b) return a;
  if (b > a) return b;
  return std::signbit(a) ? b : a;
}
inline float f_min(float a, float b) {
  if (is_nan(a) || is_nan(b)) return nan_of(a, b);
  if (a < b) return a;
  if (b < a) return b;
  return std::signbit(a) ? a : b;
}

// ---------------------------------------------------------------------------------------------
// Integer domain of the bitwise operators. Operands are int64 values: integer dtypes are read
// exactly (int32 sign-extended, uint* zero-extended); a float (immediate, or a float-typed
// operand, which the interpreter never passes) is rounded to nearest even, NaN -> 0, saturated
// to int64. Results are written saturated into the destination's integer range.

inline int64_t float_to_int(float x) {
  if (is_nan(x)) return 0;
  if (x >= 0x1p63f) return std::numeric_limits<int64_t>::max();
  if (x <= -0x1p63f) return std::numeric_limits<int64_t>::min();
  if (std::fabs(x) >= 0x1p23f) return static_cast<int64_t>(x);  // already an integer
  const float t = std::trunc(x);
  const float d = x - t;  // exact
  auto i = static_cast<int64_t>(t);
  const bool odd = (i & 1) != 0;
  if (d > 0.5f || (d == 0.5f && odd)) ++i;
  if (d < -0.5f || (d == -0.5f && odd)) --i;
  return i;
}
// Round to nearest even (the default rounding mode, which the model never changes).
inline float int_to_float(int64_t v) {
  return static_cast<float>(v);
}

// shift_left / shift_right: counts outside [0, 31] give 0; shift_left wraps modulo 2^64 (no
// signed overflow) before the destination saturation; shift_right is arithmetic on the value
// (int32 negatives stay negative; uint values are non-negative so it is also logical for them).
inline int64_t alu_int(AluOp op, int64_t a, int64_t b) {
  switch (op) {
    case AluOp::bitwise_and:
      return a & b;
    case AluOp::bitwise_or:
      return a | b;
    case AluOp::bitwise_xor:
      return a ^ b;
    case AluOp::shift_left:
      return (b < 0 || b > 31) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case AluOp::shift_right:
      return (b < 0 || b > 31) ? 0 : (a >> b);
    default:
      return 0;  // not an integer-domain operator
  }
}

// The value of an element in the integer domain.
inline int64_t int_from_bits(DType t, uint32_t bits) {
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
      return float_to_int(decode_to_float(t, bits));
  }
}
// An integer-domain result stored as dtype t: saturated for integer types; a float type (never
// passed by the interpreter) gets the value rounded to fp32 and then encoded.
inline uint32_t encode_int(DType t, int64_t v) {
  switch (t) {
    case DType::int32:
      return static_cast<uint32_t>(static_cast<int32_t>(std::clamp<int64_t>(
          v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())));
    case DType::uint8:
      return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, 0xff));
    case DType::uint16:
      return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, 0xffff));
    case DType::uint32:
      return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, 0xffffffffLL));
    default:
      return encode_from_float(t, int_to_float(v));
  }
}

// The arithmetic operators GpSimd computes in native integer arithmetic when every tile is int32
// or uint32 (ISA-NEW tensor_tensor: "native integer arithmetic. This ensures exact results for
// all 32-bit integer values"; ISA-OLD tensor_tensor and SHARED name integer add, multiply and
// subtract). divide and pow are left in fp32: what integer division or a negative integer power
// gives is not documented.
inline bool has_native_int(AluOp op) {
  switch (op) {
    case AluOp::add:
    case AluOp::subtract:
    case AluOp::multiply:
    case AluOp::max:
    case AluOp::min:
    case AluOp::abs_max:
    case AluOp::abs_min:
    case AluOp::is_equal:
    case AluOp::not_equal:
    case AluOp::is_gt:
    case AluOp::is_ge:
    case AluOp::is_lt:
    case AluOp::is_le:
      return true;
    default:
      return false;
  }
}

// has_native_int's operators on exact integers (int64: the products of two 32-bit values that
// leave it saturate). exec_tensor_tensor stores only results that fit the dst type (a result
// beyond it is undefined, elementwise.cpp native_int_overflow). Comparisons give 1 / 0.
inline int64_t alu_native_int(AluOp op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case AluOp::add:
      return a + b;  // |a|, |b| < 2^32
    case AluOp::subtract:
      return a - b;
    case AluOp::multiply:
      if (__builtin_mul_overflow(a, b, &r)) {
        return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                                  : std::numeric_limits<int64_t>::max();
      }
      return r;
    case AluOp::max:
      return std::max(a, b);
    case AluOp::min:
      return std::min(a, b);
    case AluOp::abs_max:
      return std::max(a < 0 ? -a : a, b < 0 ? -b : b);
    case AluOp::abs_min:
      return std::min(a < 0 ? -a : a, b < 0 ? -b : b);
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
      return 0;  // not one of has_native_int's
  }
}

// ---------------------------------------------------------------------------------------------
// ALU in fp32 (non-bitwise operators).
inline float alu_float(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::add:
      return f_add(a, b);
    case AluOp::subtract:
      return f_sub(a, b);
    case AluOp::multiply:
      return f_mul(a, b);
    case AluOp::divide:
      return f_div(a, b);
    case AluOp::max:
      return f_max(a, b);
    case AluOp::min:
      return f_min(a, b);
    case AluOp::pow:
      // powf, except that any NaN operand gives NaN (C's pow(NaN, 0) = pow(1, NaN) = 1 would
      // hide a poisoned value).
      if (is_nan(a) || is_nan(b)) return nan_of(a, b);
      return fix_nan(std::pow(a, b), a, b);
    case AluOp::abs_max:
      return f_max(std::fabs(a), std::fabs(b));
    case AluOp::abs_min:
      return f_min(std::fabs(a), std::fabs(b));
    // Comparisons follow IEEE: any comparison with NaN is false except not_equal.
    case AluOp::is_equal:
      return a == b ? 1.0f : 0.0f;
    case AluOp::not_equal:
      return a != b ? 1.0f : 0.0f;
    case AluOp::is_gt:
      return a > b ? 1.0f : 0.0f;
    case AluOp::is_ge:
      return a >= b ? 1.0f : 0.0f;
    case AluOp::is_lt:
      return a < b ? 1.0f : 0.0f;
    case AluOp::is_le:
      return a <= b ? 1.0f : 0.0f;
    // Unary operators act on a (the data) alone; b is not read. A NaN in gives that NaN out,
    // quieted. Each result is the fp32 value nearest the exact one, as for the binary
    // operators (ISA-NEW: arithmetic operators are performed "in float32 math"; no further
    // precision is documented). rsqrt: the double-precision 1/sqrt(a) rounded to fp32;
    // rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0, negatives give the default NaN.
    case AluOp::abs:
      return is_nan(a) ? quiet(a) : std::fabs(a);
    case AluOp::square:
      return f_mul(a, a);
    case AluOp::relu:
      if (is_nan(a)) return quiet(a);
      return a > 0.0f ? a : 0.0f;  // relu(-0) = +0
    case AluOp::rsqrt:
      if (is_nan(a)) return quiet(a);
      if (a < 0.0f) return default_nan();
      return static_cast<float>(1.0 / std::sqrt(static_cast<double>(a)));
    case AluOp::reciprocal:
      return f_div(1.0f, a);
    default:
      // Bitwise operators on float operands: through the integer domain and back.
      return int_to_float(alu_int(op, float_to_int(a), float_to_int(b)));
  }
}

// Identity of a reduction: add/subtract 0, multiply/divide/pow 1, max -inf, min/abs_min +inf,
// abs_max 0, comparisons 0 (comparisons are not hardware reduction ops; defined for totality).
inline float reduce_identity_float(AluOp op) {
  switch (op) {
    case AluOp::multiply:
    case AluOp::divide:
    case AluOp::pow:
      return 1.0f;
    case AluOp::max:
      return -std::numeric_limits<float>::infinity();
    case AluOp::min:
    case AluOp::abs_min:
      return std::numeric_limits<float>::infinity();
    default:
      return 0.0f;
  }
}
// bitwise_and: all ones; or / xor / shifts: 0.
inline int64_t reduce_identity_int(AluOp op) {
  return op == AluOp::bitwise_and ? -1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Activation functions in fp32: exp is the model's own (fp32_exp.h), the others the float libm
// functions. Some have a documented valid input range (ISA-NEW activation function table):
// outside it "the hardware output is invalid" — the hardware writes some value the documentation
// does not give. act_range states each range once; act_eval gives the default NaN outside it
// (act_apply, equiv's terms), and exec_activation writes ActOutOfRange::substitute there so that
// the interpreter can rerun with other values and see whether anything depends on them
// (model/interp/interpreter.cpp run_program). The bounds are compared as fp32 values; for sin the
// bound is fl(pi) = 3.14159274f.

struct ActRangeBounds {
  bool ranged = false;     // false: every input is valid
  bool magnitude = false;  // the bounds apply to |x| (reciprocal)
  float lo = 0.0f, hi = 0.0f;
};
constexpr ActRangeBounds act_range(ActFunc f) {
  switch (f) {
    case ActFunc::log:
      return {true, false, 0x1p-64f, 0x1p64f};
    case ActFunc::sqrt:
      return {true, false, 0x1p-116f, 0x1p118f};
    case ActFunc::rsqrt:
      return {true, false, 0x1p-87f, 0x1p97f};
    case ActFunc::reciprocal:
      return {true, true, 0x1p-42f, 0x1p42f};
    case ActFunc::sin:
      return {true, false, -3.14159265358979f, 3.14159265358979f};
    default:
      return {};
  }
}
// True when x is a valid input of f; a NaN is (NaN in gives that NaN out, for every function).
inline bool act_in_range(ActFunc f, float x) {
  const ActRangeBounds b = act_range(f);
  if (!b.ranged) return true;
  const float v = b.magnitude ? std::fabs(x) : x;
  return !(v < b.lo) && !(v > b.hi);
}

inline float act_sigmoid(float x) {
  // 1 / (1 + exp(-x)): three roundings, each in fp32.
  const float e = std::exp(-x);
  return f_div(1.0f, f_add(1.0f, e));
}

// f(x) for an x that act_in_range accepts (outside the range the value is libm's, not the
// model's: callers check first).
inline float act_value(ActFunc f, float x) {
  if (is_nan(x)) return quiet(x);  // NaN in -> that NaN out, for every function
  float r = 0.0f;
  switch (f) {
    case ActFunc::copy:
      return x;
    case ActFunc::exp:
      return exp_f32(x);
    case ActFunc::log:
      r = std::log(x);
      break;
    case ActFunc::relu:
      return x > 0.0f ? x : 0.0f;  // relu(-0) = +0
    case ActFunc::sigmoid:
      r = act_sigmoid(x);
      break;
    case ActFunc::tanh:
      r = std::tanh(x);
      break;
    case ActFunc::gelu: {
      // 0.5 * x * (1 + erf(x * fl(1/sqrt(2)))), evaluated left to right in fp32. gelu(-inf) is
      // -0, the value the formula gives for every x below about -5.9 (the literal formula would
      // give -inf * 0 = NaN there).
      if (x == -std::numeric_limits<float>::infinity()) return -0.0f;
      const float e = std::erf(f_mul(x, 0.70710678118654752f));
      r = f_mul(f_mul(0.5f, x), f_add(1.0f, e));
      break;
    }
    case ActFunc::silu:
      // x * sigmoid(x); silu(-inf) = -0 as for every x below about -88.7.
      if (x == -std::numeric_limits<float>::infinity()) return -0.0f;
      r = f_mul(x, act_sigmoid(x));
      break;
    case ActFunc::square:
      r = f_mul(x, x);
      break;
    case ActFunc::sqrt:
      r = std::sqrt(x);
      break;
    case ActFunc::rsqrt:  // 1 / sqrtf(x): two roundings
      r = f_div(1.0f, std::sqrt(x));
      break;
    case ActFunc::reciprocal:
      r = f_div(1.0f, x);
      break;
    case ActFunc::sin:
      r = std::sin(x);
      break;
    case ActFunc::abs:
      return std::fabs(x);
  }
  return fix_nan(r, x);
}

// f(x), with the default NaN for an input outside f's documented range.
inline float act_eval(ActFunc f, float x) {
  return act_in_range(f, x) ? act_value(f, x) : default_nan();
}

// Calls f(std::integral_constant<ActFunc, func>), one specialised loop per function.
template <class F>
inline void dispatch_act(ActFunc func, F&& f) {
  using A = ActFunc;
  switch (func) {
    case A::copy:
      return f(std::integral_constant<A, A::copy>{});
    case A::exp:
      return f(std::integral_constant<A, A::exp>{});
    case A::log:
      return f(std::integral_constant<A, A::log>{});
    case A::relu:
      return f(std::integral_constant<A, A::relu>{});
    case A::sigmoid:
      return f(std::integral_constant<A, A::sigmoid>{});
    case A::tanh:
      return f(std::integral_constant<A, A::tanh>{});
    case A::gelu:
      return f(std::integral_constant<A, A::gelu>{});
    case A::silu:
      return f(std::integral_constant<A, A::silu>{});
    case A::square:
      return f(std::integral_constant<A, A::square>{});
    case A::sqrt:
      return f(std::integral_constant<A, A::sqrt>{});
    case A::rsqrt:
      return f(std::integral_constant<A, A::rsqrt>{});
    case A::reciprocal:
      return f(std::integral_constant<A, A::reciprocal>{});
    case A::sin:
      return f(std::integral_constant<A, A::sin>{});
    case A::abs:
      return f(std::integral_constant<A, A::abs>{});
  }
}

// ---------------------------------------------------------------------------------------------
// Values flowing through tensor_scalar-like pipelines: fp32 or (for bitwise operators) int64.

struct Val {
  bool is_int = false;
  float f = 0.0f;
  int64_t i = 0;
};
inline Val val_f(float f) {
  return Val{false, f, 0};
}
inline Val val_i(int64_t i) {
  return Val{true, 0.0f, i};
}
inline float as_float(const Val& v) {
  return v.is_int ? int_to_float(v.i) : v.f;
}
inline int64_t as_int(const Val& v) {
  return v.is_int ? v.i : float_to_int(v.f);
}
// An element's raw bits as the operand of `op`: integer domain for bitwise operators.
inline Val load_val(DType t, uint32_t bits, bool integer_domain) {
  return integer_domain ? val_i(int_from_bits(t, bits)) : val_f(decode_to_float(t, bits));
}
inline uint32_t encode_val(DType t, const Val& v) {
  return v.is_int ? encode_int(t, v.i) : encode_from_float(t, v.f);
}

// A per-partition scalar operand, resolved for one row in both domains.
struct Scalar {
  float f = 0.0f;
  int64_t i = 0;
};
inline Scalar resolve_scalar(const ScalarArg& a, int64_t row) {
  if (const float* imm = std::get_if<float>(&a)) return Scalar{*imm, float_to_int(*imm)};
  const View& v = std::get<View>(a);
  const uint32_t bits = load_bits(v.dtype, v.at(row, 0));
  return Scalar{decode_to_float(v.dtype, bits), int_from_bits(v.dtype, bits)};
}
inline std::vector<Scalar> resolve_scalars(const ScalarArg& a, int64_t rows) {
  std::vector<Scalar> s(static_cast<size_t>(std::max<int64_t>(rows, 0)));
  for (int64_t r = 0; r < rows; ++r) s[r] = resolve_scalar(a, r);
  return s;
}

// One ALU step of a pipeline: x op s, or s op x when reversed.
inline Val alu_step(AluOp op, const Val& x, const Scalar& s, bool reverse) {
  if (is_bitwise(op)) {
    const int64_t a = as_int(x);
    return val_i(reverse ? alu_int(op, s.i, a) : alu_int(op, a, s.i));
  }
  const float a = as_float(x);
  return val_f(reverse ? alu_float(op, s.f, a) : alu_float(op, a, s.f));
}
// Reduction step acc = acc op x in the operator's domain.
inline Val reduce_step(AluOp op, const Val& acc, const Val& x) {
  if (is_bitwise(op)) return val_i(alu_int(op, as_int(acc), as_int(x)));
  return val_f(alu_float(op, as_float(acc), as_float(x)));
}
inline Val reduce_identity(AluOp op) {
  return is_bitwise(op) ? val_i(reduce_identity_int(op)) : val_f(reduce_identity_float(op));
}

// ---------------------------------------------------------------------------------------------
// Row traversal for the fast paths. A row's free dims are coalesced where they are contiguous in
// memory, then visited as runs of the innermost dim (pointer, count, byte stride), in row-major
// order: no per-element index division.

struct RowShape {
  int rank = 0;  // coalesced rank, >= 1 unless empty
  int64_t sizes[kMaxFreeDims] = {};
  int64_t strides[kMaxFreeDims] = {};
  bool empty = false;
};
RowShape row_shape(const View& v);

template <class Fn>  // fn(uint8_t* p, int64_t count, int64_t stride)
inline void for_each_run(const View& v, const RowShape& s, int64_t r, Fn&& fn) {
  if (s.empty) return;
  uint8_t* p = v.row(r);
  const int k = s.rank;
  const int64_t n = s.sizes[k - 1], st = s.strides[k - 1];
  if (k == 1) {
    fn(p, n, st);
    return;
  }
  // Outer dims 0..k-2 with an odometer.
  int64_t idx[kMaxFreeDims] = {};
  for (;;) {
    fn(p, n, st);
    int d = k - 2;
    for (; d >= 0; --d) {
      p += s.strides[d];
      if (++idx[d] < s.sizes[d]) break;
      p -= s.strides[d] * s.sizes[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Hints the cache to fetch row r of v (for reading, or for writing with `write`): on-chip views
// are rows of a partition-major array, one page apart, which the hardware prefetchers do not
// follow, so the row loops ask for a row a little ahead of the one they work on. Rows past the
// view are ignored; only the first 2 KiB of a row are requested (the hardware streams the rest).
inline void prefetch_row(const View& v, const RowShape& s, int64_t r, bool write) {
  if (r >= v.rows || s.empty || s.rank != 1 || s.strides[0] <= 0) return;
  const uint8_t* p = v.row(r);
  const int64_t span = (s.sizes[0] - 1) * s.strides[0] + static_cast<int64_t>(dtype_size(v.dtype));
  for (int64_t b = 0; b < std::min<int64_t>(span, 2048); b += 64) {
    if (write) {
      __builtin_prefetch(p + b, 1);
    } else {
      __builtin_prefetch(p + b, 0);
    }
  }
}
inline constexpr int64_t kPrefetchRows = 4;

// Raw bits of row r's free elements, in row-major order, and back.
void load_row_bits(const View& v, const RowShape& s, int64_t r, uint32_t* out);
void store_row_bits(const View& v, const RowShape& s, int64_t r, const uint32_t* in);
// Row r decoded to fp32 (bit-identical to decode_to_float per element).
void decode_row(const View& v, const RowShape& s, int64_t r, float* out);
// n fp32 values to dtype bits (bit-identical to encode_from_float per element).
void encode_floats(DType t, const float* in, uint32_t* out, int64_t n);
// Raw bits to fp32 (bit-identical to decode_to_float per element).
void decode_bits(DType t, const uint32_t* in, float* out, int64_t n);
// Row r of v = encode(in[i]) (bit-identical to encode_from_float + store_bits per element);
// `scratch` holds at least free_elems() words.
void encode_row(const View& v, const RowShape& s, int64_t r, const float* in, uint32_t* scratch);

// ---------------------------------------------------------------------------------------------
// Aliasing. Every instruction reads all of its inputs before it writes any output (value
// semantics, as if through a staging buffer), and writes its outputs in row-major order: so
// overlapping operands have one well-defined result in both modes. The reference path always
// stages; a fast path streams row by row when `rows_independent` says that is equivalent.

// True when writing dst row by row (row r after reading every input's row r) gives the same
// result as reading all inputs first.
bool rows_independent(const View& dst, const View& input);

// Output staging for the fast paths: emit(r, bits) stores row r at once when streaming is safe,
// otherwise keeps it until finish().
class RowWriter {
 public:
  RowWriter(const View& dst, bool stream);
  void emit(int64_t r, const uint32_t* bits);
  // emit() of the fp32 values encoded to dst's dtype (written straight into dst when streaming).
  void emit_floats(int64_t r, const float* values);
  void finish();
  const RowShape& shape() const { return shape_; }

 private:
  const View& dst_;
  RowShape shape_;
  bool stream_;
  int64_t n_;
  std::vector<uint32_t> staged_;
  std::vector<uint32_t> scratch_;
};

// ---------------------------------------------------------------------------------------------
// Reference traversal: every dst element's bits are computed first (fn(r, f), flat free index f),
// then stored in row-major order through View::at.
template <class Fn>
inline void ref_write_all(const View& dst, Fn&& fn) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  std::vector<uint32_t> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) out[r * n + f] = fn(r, f);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) store_bits(dst.dtype, dst.at(r, f), out[r * n + f]);
  }
}
inline uint32_t ref_load(const View& v, int64_t r, int64_t f) {
  return load_bits(v.dtype, v.at(r, f));
}

// Calls f(std::integral_constant<AluOp, op>) for a non-bitwise operator, so that the fast paths
// get one specialised loop per operator (the switch in alu_float folds away).
template <class F>
inline void dispatch_float_op(AluOp op, F&& f) {
  using A = AluOp;
  switch (op) {
    case A::add:
      return f(std::integral_constant<A, A::add>{});
    case A::subtract:
      return f(std::integral_constant<A, A::subtract>{});
    case A::multiply:
      return f(std::integral_constant<A, A::multiply>{});
    case A::divide:
      return f(std::integral_constant<A, A::divide>{});
    case A::max:
      return f(std::integral_constant<A, A::max>{});
    case A::min:
      return f(std::integral_constant<A, A::min>{});
    case A::pow:
      return f(std::integral_constant<A, A::pow>{});
    case A::abs_max:
      return f(std::integral_constant<A, A::abs_max>{});
    case A::abs_min:
      return f(std::integral_constant<A, A::abs_min>{});
    case A::is_equal:
      return f(std::integral_constant<A, A::is_equal>{});
    case A::not_equal:
      return f(std::integral_constant<A, A::not_equal>{});
    case A::is_gt:
      return f(std::integral_constant<A, A::is_gt>{});
    case A::is_ge:
      return f(std::integral_constant<A, A::is_ge>{});
    case A::is_lt:
      return f(std::integral_constant<A, A::is_lt>{});
    case A::is_le:
      return f(std::integral_constant<A, A::is_le>{});
    case A::abs:
      return f(std::integral_constant<A, A::abs>{});
    case A::square:
      return f(std::integral_constant<A, A::square>{});
    case A::relu:
      return f(std::integral_constant<A, A::relu>{});
    case A::rsqrt:
      return f(std::integral_constant<A, A::rsqrt>{});
    case A::reciprocal:
      return f(std::integral_constant<A, A::reciprocal>{});
    default:
      return f(op);  // bitwise: a runtime operator (the integer-domain paths)
  }
}

// x[i] = x[i] op s (or s op x[i] when reversed) for an fp32 operator.
inline void alu_scalar_row(AluOp op, float* x, int64_t n, float s, bool reverse) {
  dispatch_float_op(op, [&](auto op_c) {
    const AluOp o = op_c;
    if (reverse) {
      for (int64_t i = 0; i < n; ++i) x[i] = alu_float(o, s, x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) x[i] = alu_float(o, x[i], s);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Matmul: C[m*N + n] = fma chain over k = 0..K-1 of A[k*M + m] * B[k*N + n] starting from +0,
// for A [K][M], B [K][N], C [M][N]; a NaN result is stored as the default NaN (the model's matmul
// NaN rule, semantics_matmul.cpp). The vector microkernels (matmul_kernel_impl.h) take A and B
// packed in panels: A as ceil(M/mr) panels of [K][mr], B as ceil(N/nr) panels of [K][nr], both
// zero padded. Every kernel gives the portable loop's bits.
struct MatmulKernel {
  const char* name;
  int mr, nr;
  bool (*run)(const float* apack, const float* bpack, float* c, int64_t k, int64_t m, int64_t n);
};
// The kernels this CPU runs, fastest first (empty: only the portable loop).
const std::vector<const MatmulKernel*>& matmul_kernels();
void pack_matmul_a(const MatmulKernel& kern, const float* a, float* apack, int64_t k, int64_t m);
void pack_matmul_b(const MatmulKernel& kern, const float* b, float* bpack, int64_t k, int64_t n);
void matmul_f32_portable(const float* a, const float* b, float* c, int64_t k, int64_t m, int64_t n);

}  // namespace semantics
}  // namespace ncv
