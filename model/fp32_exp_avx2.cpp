// The fp32 exp loop built for AVX2 (model/CMakeLists.txt), called only after fp32_exp.cpp has
// checked the CPU; without AVX2 code generation it reports "not available". No standard or model
// headers beyond <cstdint>: see matmul_fma.cpp.
#include <cstdint>

namespace ncv::detail {
bool exp_f32_loop_avx2(const float* in, float* out, int64_t n);
}  // namespace ncv::detail

#if defined(__x86_64__) && defined(__AVX2__)

namespace ncv::detail {
namespace {
#include "model/fp32_exp_kernel.h"
}  // namespace

bool exp_f32_loop_avx2(const float* in, float* out, int64_t n) {
  exp_f32_loop(in, out, static_cast<long>(n));
  return true;
}
}  // namespace ncv::detail

#else

namespace ncv::detail {
bool exp_f32_loop_avx2(const float*, float*, int64_t) {
  return false;
}
}  // namespace ncv::detail

#endif
