// The loops of interval_rows_kernel.h built for AVX2 (oracle/CMakeLists.txt), called only after
// interval_rows.cpp has checked the CPU; built without AVX2 they return false ("not available").
// No standard or model headers beyond <cstdint> and dtype_bf16.h (its functions are static): an
// inline library function compiled here with AVX2 could otherwise be the copy the linker keeps for
// every caller.
#include <cstdint>

namespace ncv::oracle::detail {
bool interval_round_fp32_avx2(double* x, int64_t n, int dir);
bool interval_round_bf16_avx2(double* x, int64_t n, int dir);
bool interval_exp_enclose_avx2(const double* lo, const double* hi, double* e_lo, double* e_hi,
                               int64_t n);
}  // namespace ncv::oracle::detail

#if defined(__x86_64__) && defined(__AVX2__)

#include "model/numerics/dtype_bf16.h"

namespace ncv::oracle::detail {
namespace {
#include "oracle/interval_rows_kernel.h"
}  // namespace

bool interval_round_fp32_avx2(double* x, int64_t n, int dir) {
  interval_round_fp32(x, static_cast<long>(n), dir);
  return true;
}
bool interval_round_bf16_avx2(double* x, int64_t n, int dir) {
  interval_round_bf16(x, static_cast<long>(n), dir);
  return true;
}
bool interval_exp_enclose_avx2(const double* lo, const double* hi, double* e_lo, double* e_hi,
                               int64_t n) {
  interval_exp_enclose(lo, hi, e_lo, e_hi, static_cast<long>(n));
  return true;
}
}  // namespace ncv::oracle::detail

#else

namespace ncv::oracle::detail {
bool interval_round_fp32_avx2(double*, int64_t, int) {
  return false;
}
bool interval_round_bf16_avx2(double*, int64_t, int) {
  return false;
}
bool interval_exp_enclose_avx2(const double*, const double*, double*, double*, int64_t) {
  return false;
}
}  // namespace ncv::oracle::detail

#endif
