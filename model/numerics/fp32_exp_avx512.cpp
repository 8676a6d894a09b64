// The fp32 exp loop built for AVX-512 (model/CMakeLists.txt), called only after fp32_exp.cpp has
// checked the CPU; without AVX-512 code generation it reports "not available". No standard or model
// headers beyond <cstdint>: see matmul_fma.cpp.
#include <cstdint>

namespace ncv {
inline namespace numerics {
namespace detail {
bool exp_f32_loop_avx512(const float* in, float* out, int64_t n);
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#if defined(__x86_64__) && defined(__AVX512F__)

namespace ncv {
inline namespace numerics {
namespace detail {
namespace {
#include "model/numerics/fp32_exp_kernel.h"
}  // namespace

bool exp_f32_loop_avx512(const float* in, float* out, int64_t n) {
  exp_f32_loop(in, out, static_cast<long>(n));
  return true;
}
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#else

namespace ncv {
inline namespace numerics {
namespace detail {
bool exp_f32_loop_avx512(const float*, float*, int64_t) {
  return false;
}
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#endif
