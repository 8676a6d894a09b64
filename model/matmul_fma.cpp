// The fast matmul microkernel (semantics_internal.h: matmul_f32_fma), compiled with -mfma -mavx2
// by model/CMakeLists.txt on x86_64 and only called after matmul_fma_supported() has checked the
// CPU at run time. Without those flags it compiles to a stub that reports "not available".
//
// C[m][n] = fma chain over k = 0..K-1 of A[k][m] * B[k][n] from +0 (a NaN result written as the
// default NaN): each output element keeps its own accumulator lane and sees k strictly in order,
// so the result is bit-identical to the scalar std::fma loop. Blocking: A is packed into panels of
// 6 rows of M ([K][6]), B into panels of 16 columns of N ([K][16], zero padded); a 6 x 16 block of
// C lives in 12 ymm accumulators while k runs over the whole K (K <= 128 on the hardware, so one B
// panel of K x 16 floats stays in L1 while every A panel streams past it).
//
// This file is compiled for AVX2, so it must not instantiate any inline function or template that
// other files also instantiate (std::vector, std::min, the model's inline helpers...): the linker
// keeps one copy of such a function for the whole program, and if it kept this file's AVX2 copy,
// CPUs without AVX2 would run it. Hence no model or standard headers beyond <cstdint> and the
// intrinsics, and everything else with internal linkage.
#include <cstdint>

namespace ncv::sem {
// Declared in semantics_internal.h (not included, see above).
bool matmul_f32_fma(const float* a, const float* b, float* c, int64_t k, int64_t m, int64_t n);
}  // namespace ncv::sem

#if defined(__x86_64__) && defined(__FMA__) && defined(__AVX2__)

#include <immintrin.h>

namespace ncv::sem {
namespace {

inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// A growable scratch buffer per thread (no std::vector, see above).
struct Scratch {
  float* data = nullptr;
  int64_t size = 0;
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { delete[] data; }
  // `count` floats; the last `zero_tail` of them zeroed (the padding of a partial panel).
  float* get(int64_t count, int64_t zero_tail) {
    if (count > size) {
      delete[] data;
      data = new float[static_cast<size_t>(count)];
      size = count;
    }
    for (int64_t i = count - zero_tail; i < count; ++i) data[i] = 0.0f;
    return data;
  }
};

constexpr int kMr = 6;   // rows of M per register block
constexpr int kNr = 16;  // columns of N per register block (two ymm)

// Block C[0..MR)[0..ncols) = Ap^T Bp for one A panel ([K][kMr]) and one B panel ([K][kNr]).
template <int MR>
inline void block(const float* ap, const float* bp, int64_t k, float* c, int64_t ldc,
                  int64_t ncols) {
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    acc0[i] = _mm256_setzero_ps();  // +0.0f: the contract's initial accumulator
    acc1[i] = _mm256_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m256 b0 = _mm256_loadu_ps(bp + kk * kNr);
    const __m256 b1 = _mm256_loadu_ps(bp + kk * kNr + 8);
    const float* a = ap + kk * kMr;
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
  }
  // Every access to the accumulators has a constant index after unrolling, so they stay in
  // registers; a partial column block goes through a small buffer.
  // NaN lanes become the default NaN 0x7fc00000 (the model's matmul NaN rule).
  alignas(32) float tmp[MR * kNr];
  const bool full = ncols == kNr;
  const __m256 dnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    float* dst0 = full ? c + i * ldc : tmp + i * kNr;
    const __m256 n0 = _mm256_cmp_ps(acc0[i], acc0[i], _CMP_UNORD_Q);
    const __m256 n1 = _mm256_cmp_ps(acc1[i], acc1[i], _CMP_UNORD_Q);
    _mm256_storeu_ps(dst0, _mm256_blendv_ps(acc0[i], dnan, n0));
    _mm256_storeu_ps(dst0 + 8, _mm256_blendv_ps(acc1[i], dnan, n1));
  }
  if (!full) {
    for (int i = 0; i < MR; ++i) {
      for (int64_t j = 0; j < ncols; ++j) c[i * ldc + j] = tmp[i * kNr + j];
    }
  }
}

}  // namespace

bool matmul_f32_fma(const float* a, const float* b, float* c, int64_t k, int64_t m, int64_t n) {
  if (m <= 0 || n <= 0) return true;
  if (k <= 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = 0.0f;
    return true;
  }
  const int64_t mb = (m + kMr - 1) / kMr, nb = (n + kNr - 1) / kNr;
  thread_local Scratch ascratch, bscratch;
  // Only the last panel of each can be partial; its padding lanes must be +0 (they are computed
  // and discarded, and must not be NaN/Inf garbage that could slow the FMAs down).
  float* apack = ascratch.get(mb * k * kMr, m % kMr ? k * kMr : 0);
  float* bpack = bscratch.get(nb * k * kNr, n % kNr ? k * kNr : 0);
  // Panel by panel, so that the stores are sequential.
  for (int64_t ib = 0; ib < mb; ++ib) {
    const int64_t rows = min64(kMr, m - ib * kMr);
    float* ap = apack + ib * k * kMr;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* ar = a + kk * m + ib * kMr;
      for (int64_t i = 0; i < rows; ++i) ap[kk * kMr + i] = ar[i];
    }
  }
  for (int64_t jb = 0; jb < nb; ++jb) {
    const int64_t cols = min64(kNr, n - jb * kNr);
    float* bp = bpack + jb * k * kNr;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* br = b + kk * n + jb * kNr;
      if (cols == kNr) {
        _mm256_storeu_ps(bp + kk * kNr, _mm256_loadu_ps(br));
        _mm256_storeu_ps(bp + kk * kNr + 8, _mm256_loadu_ps(br + 8));
      } else {
        for (int64_t j = 0; j < cols; ++j) bp[kk * kNr + j] = br[j];
      }
    }
  }
  for (int64_t jb = 0; jb < nb; ++jb) {
    const float* bp = bpack + jb * k * kNr;
    const int64_t ncols = min64(kNr, n - jb * kNr);
    for (int64_t ib = 0; ib < mb; ++ib) {
      const float* ap = apack + ib * k * kMr;
      float* cb = c + ib * kMr * n + jb * kNr;
      switch (min64(kMr, m - ib * kMr)) {
        case 6:
          block<6>(ap, bp, k, cb, n, ncols);
          break;
        case 5:
          block<5>(ap, bp, k, cb, n, ncols);
          break;
        case 4:
          block<4>(ap, bp, k, cb, n, ncols);
          break;
        case 3:
          block<3>(ap, bp, k, cb, n, ncols);
          break;
        case 2:
          block<2>(ap, bp, k, cb, n, ncols);
          break;
        default:
          block<1>(ap, bp, k, cb, n, ncols);
          break;
      }
    }
  }
  return true;
}

}  // namespace ncv::sem

#else  // no FMA/AVX2 code generation for this file

namespace ncv::sem {
bool matmul_f32_fma(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  return false;
}
}  // namespace ncv::sem

#endif
