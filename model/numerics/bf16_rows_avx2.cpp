// The bf16 run loops built for AVX2 (model/CMakeLists.txt), called only after bf16_rows.cpp has
// checked the CPU; without AVX2 code generation they report "not available". Only <cstdint> and
// the static helpers of dtype_bf16.h: see matmul_fma.cpp.
#include <cstdint>

#include "model/numerics/dtype_bf16.h"

namespace ncv {
inline namespace numerics {
namespace detail {
bool bf16_decode_avx2(const uint8_t* p, float* out, int64_t n);
bool bf16_encode_avx2(const float* in, uint8_t* p, int64_t n);
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#if defined(__x86_64__) && defined(__AVX2__)

namespace ncv {
inline namespace numerics {
namespace detail {
namespace {
#include "model/numerics/bf16_rows_kernel.h"
}  // namespace

bool bf16_decode_avx2(const uint8_t* p, float* out, int64_t n) {
  bf16_decode_loop(p, out, static_cast<long>(n));
  return true;
}
bool bf16_encode_avx2(const float* in, uint8_t* p, int64_t n) {
  bf16_encode_loop(in, p, static_cast<long>(n));
  return true;
}
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#else

namespace ncv {
inline namespace numerics {
namespace detail {
bool bf16_decode_avx2(const uint8_t*, float*, int64_t) {
  return false;
}
bool bf16_encode_avx2(const float*, uint8_t*, int64_t) {
  return false;
}
}  // namespace detail
}  // namespace numerics
}  // namespace ncv

#endif
