// Value generators shared by the semantics tests: raw bit patterns per dtype by category
// (NaN payloads, +-Inf, -0, subnormals, extremes) and plain finite values, from fixed seeds.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "model/numerics/dtype.h"
#include "model/numerics/tests/float_bits.h"

namespace ncv::semtest {

using Arena = std::vector<uint8_t>;

const float kInf = std::numeric_limits<float>::infinity();

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g_); }
  uint32_t u32() { return static_cast<uint32_t>(g_()); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uni(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

// ---------------------------------------------------------------------------------------------
// Values: raw bit patterns per dtype, by category.

struct FloatFormat {
  int exp_bits, mant_bits;
};
inline FloatFormat format_of(DType t) {
  switch (t) {
    case DType::fp32:
      return {8, 23};
    case DType::bf16:
      return {8, 7};
    case DType::fp16:
      return {5, 10};
    case DType::fp8_e5m2:
      return {5, 2};
    default:
      return {4, 3};  // e4m3, e4m3fn
  }
}

inline uint32_t random_bits(Rng& rng, DType t) {
  const int size_bits = static_cast<int>(dtype_size(t)) * 8;
  const uint32_t all = size_bits == 32 ? 0xffffffffu : ((1u << size_bits) - 1);
  if (is_integer(t)) {
    const double c = rng.real(0, 1);
    if (c < 0.5) return encode_from_float(t, static_cast<float>(rng.uni(-20, 300)));
    if (c < 0.7) return rng.pick(std::vector<uint32_t>{0u, all, all >> 1, (all >> 1) + 1, 1u});
    return rng.u32() & all;
  }
  const FloatFormat f = format_of(t);
  const uint32_t exp_max = (1u << f.exp_bits) - 1, mant_all = (1u << f.mant_bits) - 1;
  const uint32_t sign = rng.coin(0.5) ? 1u << (size_bits - 1) : 0u;
  auto make = [&](uint32_t e, uint32_t m) { return sign | (e << f.mant_bits) | (m & mant_all); };
  const double c = rng.real(0, 1);
  if (c < 0.05) {  // NaN with a random payload (fp32: quiet or signalling)
    if (t == DType::fp8_e4m3fn) return make(exp_max, mant_all);
    return make(exp_max, std::max<uint32_t>(1, rng.u32() & mant_all));
  }
  if (c < 0.09) return make(exp_max, 0);                                      // Inf
  if (c < 0.15) return make(0, 0);                                            // +-0
  if (c < 0.21) return make(0, std::max<uint32_t>(1, rng.u32() & mant_all));  // subnormal
  if (c < 0.25) return make(exp_max - 1, rng.u32());                          // huge
  if (c < 0.27) return make(1, rng.u32());                                    // tiny normal
  if (c < 0.40) return rng.u32() & all;                                       // anything
  const float v =
      static_cast<float>(rng.real(-1, 1) * std::ldexp(1.0, static_cast<int>(rng.uni(-6, 6))));
  return encode_from_float(t, v);
}

// Finite "ordinary" values only (for the independent numeric checks).
inline float random_plain(Rng& rng, int exp_lo, int exp_hi) {
  return static_cast<float>(rng.real(-1, 1) *
                            std::ldexp(1.0, static_cast<int>(rng.uni(exp_lo, exp_hi))));
}

}  // namespace ncv::semtest
