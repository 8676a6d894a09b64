// Array operations of the case bound's interval evaluation (case_bound.cpp): the outward rounding
// of interval ends to a contract dtype and an enclosure of exp, each over a row of keys at once
// so that they vectorise (issue 42 item 3, oracle/README.md "Speed"). Sound by construction:
//   round_lo(t, x): every value of dtype t (through fp32) that is >= x[i] is >= the result,
//   round_hi(t, x): every such value <= x[i] is <= the result,
// exactly as case_bound.cpp's scalar round_to(t, Iv) (quantize(t, fp32(x nudged outward)); rounding
// to nearest is monotone), and exp_enclose's ends enclose the real exp of its arguments.
//
// exp_enclose's core (interval_rows_kernel.h) has a relative error below 2^-47.4: the reduction
// r = x - k ln2 is exact up to 2^-54.5 absolute (|r| <= 0.3466, k ln2_hi exact, one rounding of
// r - k ln2_lo, ln2 - ln2_hi - ln2_lo < 2^-86), the degree-13 Taylor polynomial's remainder is
// below 2^-56.7 of e^r, Horner's 26 roundings are within gamma_26 e^|r| <= 2^-48.1 absolute,
// i.e. 2^-47.6 of e^r >= 0.707, and the scaling by 2^k is exact (normal results only: the core
// is used on [-700, 700]). The enclosure widens by 2^-42, about 40 times that.
// `IntervalRows.*` in tests/interval_rows_test.cpp measures it against long double expl.
#pragma once

#include <cstdint>
#include <vector>

#include "model/numerics/dtype.h"

namespace ncv::oracle {

// x[i] := quantize(t, fp32(x[i] nudged down)) (case_bound.cpp's lower end of round_to).
void round_lo(DType t, double* x, int64_t n);
// x[i] := quantize(t, fp32(x[i] nudged up)).
void round_hi(DType t, double* x, int64_t n);
// x[i] := quantize(t, fp32(x[i])) (the reference lane: one rounding of the double value).
void round_nearest(DType t, double* x, int64_t n);
// e_lo[i] <= exp(lo[i]) and e_hi[i] >= exp(hi[i]) for every argument (0 and +inf far outside
// double's range; NaN in gives NaN out). lo/e_lo and hi/e_hi may be the same arrays.
void exp_enclose(const double* lo, const double* hi, double* e_lo, double* e_hi, int64_t n);

namespace detail {
// The builds of the loops this CPU runs, fastest first (the portable one last); the public
// functions use the first; the tests compare them all.
struct IntervalLoops {
  const char* name;
  bool (*round_fp32)(double* x, int64_t n, int dir);  // dir < 0 down, > 0 up, 0 nearest
  bool (*round_bf16)(double* x, int64_t n, int dir);
  bool (*exp_enclose)(const double* lo, const double* hi, double* e_lo, double* e_hi, int64_t n);
};
std::vector<IntervalLoops> interval_loops();
// Tests only: the public functions run `loops` instead of the CPU's first build (nullptr: back to
// it). A deliberately broken build shows that the bound's soundness tests notice one
// (properties/tests/case_bound_prop.cpp).
void override_interval_loops(const IntervalLoops* loops);
// interval_rows_avx512.cpp / interval_rows_avx2.cpp: false when built without that ISA.
bool interval_round_fp32_avx512(double* x, int64_t n, int dir);
bool interval_round_bf16_avx512(double* x, int64_t n, int dir);
bool interval_exp_enclose_avx512(const double* lo, const double* hi, double* e_lo, double* e_hi,
                                 int64_t n);
bool interval_round_fp32_avx2(double* x, int64_t n, int dir);
bool interval_round_bf16_avx2(double* x, int64_t n, int dir);
bool interval_exp_enclose_avx2(const double* lo, const double* hi, double* e_lo, double* e_hi,
                               int64_t n);
}  // namespace detail

}  // namespace ncv::oracle
