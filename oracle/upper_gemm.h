// Upper bounds on products of non-negative matrices, computed with float sgemm (twice dgemm's
// rate) and a rigorous upward correction. The oracle's bounds multiply many magnitudes (|Q|.|K|^T,
// weights . |V|): only an upper bound of each sum is needed there, never its exact value, so the
// float evaluation's own rounding is added instead of paying for double precision
// (oracle/README.md "Speed").
#pragma once

#include <cstdint>
#include <vector>

namespace ncv::oracle {

// A non-negative row-major [rows][cols] matrix (leading dimension ld) prepared for upper_gemm:
// scaled by 2^-exp so its largest entry is in [1, 2), then converted to float rounding upward
// (every float entry >= the scaled double entry, so the float products bound the real ones).
// use_float is false when that is not safe (a non-finite or negative entry, or an exponent out of
// range); upper_gemm then falls back to dgemm on the double source, which must stay alive.
struct UpperOperand {
  const double* x = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<float> f;  // [rows][cols], dense
  int exp = 0;
  bool zero = false;  // every entry is 0: the products are exactly 0
  bool use_float = false;
  void prepare(const double* src, int64_t rows, int64_t cols, int64_t ld);
};

// C[m][n] (leading dimension ldc) >= A . B in exact arithmetic, where A is [m][k] and B is [k][n]
// (b_trans false) or [n][k] (b_trans true). Sound for every summation order, FMA use and thread
// count of the BLAS: a float sum of k non-negative products is within gamma_k (u = 2^-24) of the
// exact sum, plus k * 2^-150 for products that underflow.
void upper_gemm(const UpperOperand& a, const UpperOperand& b, bool b_trans, double* c, int64_t ldc);

}  // namespace ncv::oracle
