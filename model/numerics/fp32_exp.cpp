// The model's fp32 exp (fp32_exp.h): NaN handling, the portable loop, and the AVX-512 and AVX2
// builds of the same loop (fp32_exp_avx512.cpp, fp32_exp_avx2.cpp) on CPUs that have them. All
// give the same bits.
#include "model/numerics/fp32_exp.h"

#include <bit>
#include <cstring>
#include <vector>

namespace ncv {
inline namespace numerics {

namespace {
#include "model/numerics/fp32_exp_kernel.h"

bool is_nan(float x) {
  return (std::bit_cast<uint32_t>(x) & 0x7fffffffu) > 0x7f800000u;
}

}  // namespace

namespace detail {

std::vector<ExpLoop> exp_f32_loops() {
  std::vector<ExpLoop> loops;
#if defined(__x86_64__) || defined(__i386__)
  // Listed only when the CPU has the ISA and the file was built with it (a one-element call
  // reports the latter).
  float x = 0.0f, y = 0.0f;
  if (__builtin_cpu_supports("avx512f") && exp_f32_loop_avx512(&x, &y, 1)) {
    loops.push_back({"avx512", exp_f32_loop_avx512});
  }
  if (__builtin_cpu_supports("avx2") && exp_f32_loop_avx2(&x, &y, 1)) {
    loops.push_back({"avx2", exp_f32_loop_avx2});
  }
#endif
  loops.push_back({"portable", [](const float* in, float* out, int64_t n) {
                     exp_f32_loop(in, out, static_cast<long>(n));
                     return true;
                   }});
  return loops;
}

}  // namespace detail

float exp_f32(float x) {
  if (is_nan(x)) return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
  float y;
  exp_f32_loop(&x, &y, 1);
  return y;
}

void exp_f32_array(const float* in, float* out, int64_t n) {
  uint32_t nan = 0;  // an integer OR of the patterns, so that the check vectorises
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, in + i, 4);
    nan |= (u & 0x7fffffffu) > 0x7f800000u;
  }
  if (nan != 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(in[i]);
    return;
  }
  static const auto run = detail::exp_f32_loops().front().run;
  run(in, out, n);
}

}  // namespace numerics
}  // namespace ncv
