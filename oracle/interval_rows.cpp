// interval_rows.h: the portable build of the loops, the AVX-512 and AVX2 builds of the same source
// (interval_rows_avx512.cpp, interval_rows_avx2.cpp) on CPUs that have them, and the dtypes the
// loops do not cover (fp16, fp8, integers), rounded one value at a time by quantize().
#include "oracle/interval_rows.h"

#include <cstdint>

#include "model/numerics/dtype_bf16.h"

namespace ncv::oracle {

namespace {
#include "oracle/interval_rows_kernel.h"

// Any dtype, one value at a time (through the out-of-line quantize, like case_bound.cpp's
// round_to).
void round_scalar(DType t, double* x, int64_t n, int dir) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = dir < 0 ? interval_nudge_down(x[i]) : dir > 0 ? interval_nudge_up(x[i]) : x[i];
    x[i] = quantize(t, static_cast<float>(v));
  }
}

const detail::IntervalLoops* g_override = nullptr;

const detail::IntervalLoops& loops() {
  static const detail::IntervalLoops first = detail::interval_loops().front();
  return g_override != nullptr ? *g_override : first;
}

void round_dtype(DType t, double* x, int64_t n, int dir) {
  if (t == DType::fp32) {
    loops().round_fp32(x, n, dir);
  } else if (t == DType::bf16) {
    loops().round_bf16(x, n, dir);
  } else {
    round_scalar(t, x, n, dir);
  }
}

}  // namespace

namespace detail {

std::vector<IntervalLoops> interval_loops() {
  std::vector<IntervalLoops> out;
#if defined(__x86_64__) || defined(__i386__)
  // Listed only when the CPU has the ISA and the file was built with it (an empty call reports
  // the latter).
  if (__builtin_cpu_supports("avx512f") && interval_round_fp32_avx512(nullptr, 0, 0)) {
    out.push_back({"avx512", interval_round_fp32_avx512, interval_round_bf16_avx512,
                   interval_exp_enclose_avx512});
  }
  if (__builtin_cpu_supports("avx2") && interval_round_fp32_avx2(nullptr, 0, 0)) {
    out.push_back(
        {"avx2", interval_round_fp32_avx2, interval_round_bf16_avx2, interval_exp_enclose_avx2});
  }
#endif
  out.push_back({"portable",
                 [](double* x, int64_t n, int dir) {
                   interval_round_fp32(x, static_cast<long>(n), dir);
                   return true;
                 },
                 [](double* x, int64_t n, int dir) {
                   interval_round_bf16(x, static_cast<long>(n), dir);
                   return true;
                 },
                 [](const double* lo, const double* hi, double* e_lo, double* e_hi, int64_t n) {
                   interval_exp_enclose(lo, hi, e_lo, e_hi, static_cast<long>(n));
                   return true;
                 }});
  return out;
}

void override_interval_loops(const IntervalLoops* l) {
  g_override = l;
}

}  // namespace detail

void round_lo(DType t, double* x, int64_t n) {
  round_dtype(t, x, n, -1);
}

void round_hi(DType t, double* x, int64_t n) {
  round_dtype(t, x, n, 1);
}

void round_nearest(DType t, double* x, int64_t n) {
  round_dtype(t, x, n, 0);
}

void exp_enclose(const double* lo, const double* hi, double* e_lo, double* e_hi, int64_t n) {
  loops().exp_enclose(lo, hi, e_lo, e_hi, n);
}

}  // namespace ncv::oracle
