// Upper bounds on products of non-negative matrices, computed with float sgemm (twice dgemm's
// rate) and a rigorous upward correction. The oracle's bounds multiply many magnitudes (|Q|.|K|^T,
// weights . |V|): only an upper bound of each sum is needed there, never its exact value, so the
// float evaluation's own rounding is added instead of paying for double precision
// (oracle/README.md "Speed").
//
// Each row of A and each output column of B is scaled by a power of two so that its largest
// entry is in [1, 2), and entries below 2^-60 of that largest entry (the "tail") are left out of
// the float product and bounded apart (their sum times the other side's largest entry): every
// float product is then a normal float in [2^-120, 4). No subnormal float ever reaches sgemm,
// where each would cost a microcode assist (a softmax row's far tail of exp values made a
// float product ten times slower than dgemm).
#pragma once

#include <cstdint>
#include <vector>

namespace ncv::oracle {

// A non-negative row-major [rows][cols] matrix (leading dimension ld) prepared for upper_gemm,
// scaled per row (`per_row`, an A operand, or a B operand given transposed) or per column (a B
// operand [k][n]): lines[l] is 2^-exp[l] times its source line, the kept entries converted to
// float rounding upward (each float entry >= its scaled double entry), the tail entries set to 0
// in `f` and summed, rounded up, in tail[l]. use_float is false when that is not safe (a
// non-finite or negative entry, or a line's exponent out of [-480, 480]); upper_gemm then falls
// back to dgemm on the double source, which must stay alive.
struct UpperOperand {
  const double* x = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
  bool per_row = true;
  std::vector<float> f;          // [rows][cols], dense, scaled, tail entries 0
  std::vector<int> exp;          // per line (row or column)
  std::vector<double> max_line;  // per line: its largest scaled entry, in [1, 2) (0: all zero)
  std::vector<double> tail;      // per line: >= the sum of its scaled tail entries
  bool zero = false;             // every entry is 0: the products are exactly 0
  bool use_float = false;
  void prepare(const double* src, int64_t rows, int64_t cols, int64_t ld, bool per_row);
};

// C[m][n] (leading dimension ldc) >= A . B in exact arithmetic, where A is [m][k] (prepared per
// row) and B is [k][n] (b_trans false, prepared per column) or [n][k] (b_trans true, prepared per
// row). Sound for every summation order, FMA use and thread count of the BLAS: a float sum of k
// non-negative normal products is within gamma_k (u = 2^-24) of the exact sum.
void upper_gemm(const UpperOperand& a, const UpperOperand& b, bool b_trans, double* c, int64_t ldc);

namespace detail {
// Tests only: with `on`, upper_gemm takes its dgemm path (the double products the float ones
// replace) for every operand, so a test can compare the bound built on either
// (properties/tests/case_bound_prop.cpp).
void force_double_products_for_testing(bool on);
}  // namespace detail

}  // namespace ncv::oracle
