// The register-blocked matmul microkernel, written once over a SIMD traits type and included
// inside an anonymous namespace by each ISA-specific file (matmul_fma.cpp: AVX2 + FMA,
// matmul_avx512.cpp: AVX-512). Those files are compiled with their ISA flags, so this header
// must not use library templates or the model's inline functions (matmul_fma.cpp explains why).
//
// Contract (model/semantics/internal.h, MatmulKernel): C[m][n] = fma chain over k = 0..K-1 of
// A[k][m] * B[k][n] from +0, a NaN result written as the default NaN 0x7fc00000. Each output
// element keeps its own accumulator lane and sees k strictly in order, so the result is
// bit-identical to the scalar std::fma loop whatever the vector width.
//
// Operands come packed (semantics_matmul.cpp packs them while decoding): A in panels of MR rows of
// M ([K][MR] per panel, zero padded), B in panels of NR = 2 * lanes columns of N ([K][NR] per
// panel, zero padded). An MR x NR block of C lives in 2 * MR vector accumulators while k runs over
// the whole K (K <= 128, so one B panel stays in L1 while the A panels stream past it).
//
// Traits V: using Reg; static constexpr int kLanes; Reg zero(); Reg load(const float*);
// void store(float*, Reg); Reg broadcast(const float*); Reg fma(Reg a, Reg b, Reg c) (a*b+c
// rounded once); Reg nan_to_default(Reg).

inline long long min_ll(long long a, long long b) {
  return a < b ? a : b;
}

template <class V, int MR>
inline void kernel_block(const float* ap, int mr_stride, const float* bp, long long k, float* c,
                         long long ldc, long long ncols) {
  constexpr int kNr = 2 * V::kLanes;
  typename V::Reg acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i] = V::zero();  // +0.0f: the contract's initial accumulator
    acc1[i] = V::zero();
  }
  for (long long kk = 0; kk < k; ++kk) {
    const typename V::Reg b0 = V::load(bp + kk * kNr);
    const typename V::Reg b1 = V::load(bp + kk * kNr + V::kLanes);
    const float* a = ap + kk * mr_stride;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const typename V::Reg av = V::broadcast(a + i);
      acc0[i] = V::fma(av, b0, acc0[i]);
      acc1[i] = V::fma(av, b1, acc1[i]);
    }
  }
  // Constant accumulator indices after unrolling keep them in registers; a partial column block
  // goes through a small buffer.
  alignas(64) float tmp[MR * kNr];
  const bool full = ncols == kNr;
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* dst = full ? c + i * ldc : tmp + i * kNr;
    V::store(dst, V::nan_to_default(acc0[i]));
    V::store(dst + V::kLanes, V::nan_to_default(acc1[i]));
  }
  if (!full) {
    for (int i = 0; i < MR; ++i) {
      for (long long j = 0; j < ncols; ++j) c[i * ldc + j] = tmp[i * kNr + j];
    }
  }
}

// Rows 1..MR of a row panel: the last panel of M may be partial.
template <class V, int MR>
inline void kernel_rows(int rows, const float* ap, int mr_stride, const float* bp, long long k,
                        float* c, long long ldc, long long ncols) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      kernel_rows<V, MR - 1>(rows, ap, mr_stride, bp, k, c, ldc, ncols);
      return;
    }
  }
  kernel_block<V, MR>(ap, mr_stride, bp, k, c, ldc, ncols);
}

template <class V, int MR>
inline void kernel_run(const float* apack, const float* bpack, float* c, long long k, long long m,
                       long long n) {
  constexpr int kNr = 2 * V::kLanes;
  const long long mb = (m + MR - 1) / MR, nb = (n + kNr - 1) / kNr;
  if (k <= 0) {
    for (long long i = 0; i < m * n; ++i) c[i] = 0.0f;
    return;
  }
  for (long long jb = 0; jb < nb; ++jb) {
    const float* bp = bpack + jb * k * kNr;
    const long long ncols = min_ll(kNr, n - jb * kNr);
    for (long long ib = 0; ib < mb; ++ib) {
      const int rows = static_cast<int>(min_ll(MR, m - ib * MR));
      kernel_rows<V, MR>(rows, apack + ib * k * MR, MR, bp, k, c + ib * MR * n + jb * kNr, n,
                         ncols);
    }
  }
}
