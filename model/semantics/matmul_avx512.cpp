// The AVX-512 matmul microkernel (matmul_kernel_impl.h with 16-lane zmm registers, 8 x 32 blocks
// in 16 accumulators), compiled with -mavx512f by model/CMakeLists.txt on x86_64 and only called
// after the CPU check in semantics_matmul.cpp; without those flags a stub reports "not
// available". Same rules as matmul_fma.cpp: no shared inline functions or templates.
#include <cstdint>

namespace ncv {
inline namespace semantics {
// Declared in model/semantics/internal.h (not included, see matmul_fma.cpp).
bool matmul_packed_avx512(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                          int64_t n);
}  // namespace semantics
}  // namespace ncv

#if defined(__x86_64__) && defined(__AVX512F__)

#include <immintrin.h>

namespace ncv {
inline namespace semantics {
namespace {

struct Avx512 {
  using Reg = __m512;
  static constexpr int kLanes = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg nan_to_default(Reg v) {
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, v, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
  }
};

#include "model/semantics/matmul_kernel_impl.h"

}  // namespace

bool matmul_packed_avx512(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                          int64_t n) {
  kernel_run<Avx512, 8>(apack, bpack, c, k, m, n);
  return true;
}

}  // namespace semantics
}  // namespace ncv

#else

namespace ncv {
inline namespace semantics {
bool matmul_packed_avx512(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  return false;
}
}  // namespace semantics
}  // namespace ncv

#endif
