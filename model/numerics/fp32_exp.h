// The model's fp32 exp, used by the exp activation: fp32 arithmetic with a documented error of
// less than 1 ulp (fp32_exp_kernel.h), the same bits on every host (no libm), and a loop that
// vectorises. NaN in gives that NaN quieted.
#pragma once

#include <cstdint>
#include <vector>

namespace ncv {
inline namespace numerics {

float exp_f32(float x);
// out[i] = exp_f32(in[i]); in and out may be the same array.
void exp_f32_array(const float* in, float* out, int64_t n);

namespace detail {
// The builds of the non-NaN loop this CPU runs, fastest first (the portable one last); all give
// the same bits. exp_f32_array uses the first; the tests compare them all.
struct ExpLoop {
  const char* name;
  bool (*run)(const float* in, float* out, int64_t n);
};
std::vector<ExpLoop> exp_f32_loops();
// fp32_exp_avx512.cpp / fp32_exp_avx2.cpp: false when built without that ISA.
bool exp_f32_loop_avx512(const float* in, float* out, int64_t n);
bool exp_f32_loop_avx2(const float* in, float* out, int64_t n);
}  // namespace detail

}  // namespace numerics
}  // namespace ncv
