// The AVX2 + FMA matmul microkernel (matmul_kernel_impl.h with 8-lane ymm registers, 6 x 16
// blocks in 12 accumulators), compiled with -mfma -mavx2 by model/CMakeLists.txt on x86_64 and
// only called after the CPU check in semantics_matmul.cpp. Without those flags it compiles to a
// stub that reports "not available".
//
// This file is compiled for AVX2, so it must not instantiate any inline function or template that
// other files also instantiate (std::vector, std::min, the model's inline helpers...): the linker
// keeps one copy of such a function for the whole program, and if it kept this file's AVX2 copy,
// CPUs without AVX2 would run it. Hence no model or standard headers beyond <cstdint> and the
// intrinsics, and everything else with internal linkage.
#include <cstdint>

namespace ncv {
inline namespace semantics {
// Declared in model/semantics/internal.h (not included, see above).
bool matmul_packed_avx2(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                        int64_t n);
}  // namespace semantics
}  // namespace ncv

#if defined(__x86_64__) && defined(__FMA__) && defined(__AVX2__)

#include <immintrin.h>

namespace ncv {
inline namespace semantics {
namespace {

struct Avx2 {
  using Reg = __m256;
  static constexpr int kLanes = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg nan_to_default(Reg v) {
    const Reg dnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    return _mm256_blendv_ps(v, dnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
};

#include "model/semantics/matmul_kernel_impl.h"

}  // namespace

bool matmul_packed_avx2(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                        int64_t n) {
  kernel_run<Avx2, 6>(apack, bpack, c, k, m, n);
  return true;
}

}  // namespace semantics
}  // namespace ncv

#else  // no FMA/AVX2 code generation for this file

namespace ncv {
inline namespace semantics {
bool matmul_packed_avx2(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  return false;
}
}  // namespace semantics
}  // namespace ncv

#endif
