// Accuracy of the model's fp32 exp (model/numerics/fp32_exp.h) against long double expl, over the
// inputs whose result is neither 0 nor Inf: every float of [-104, 89] with |x| < 1e-3, and every
// `--every`-th bit pattern (default 97) of the rest; `--every 1` checks all of them (about 2.2e9
// floats, some minutes). Prints the largest error in ulps, where it happens, and how often the
// result is not the correctly rounded one. The unit test Fp32Exp.FaithfulOverTheWholeRange
// asserts "< 1 ulp" on a coarser sweep; this program is the measurement behind fp32_exp_kernel.h.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "model/numerics/fp32_exp.h"
#include "model/numerics/tests/exp_reference.h"

int main(int argc, char** argv) {
  uint32_t every = 97;
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--every") == 0) every = static_cast<uint32_t>(std::atoi(argv[a + 1]));
  }
  if (every == 0) every = 1;
  double worst = 0;
  float worst_x = 0;
  uint64_t checked = 0, not_nearest = 0, unfaithful = 0;
  for (uint64_t b = 0; b <= 0xffffffffull; ++b) {
    float x;
    const auto bits = static_cast<uint32_t>(b);
    std::memcpy(&x, &bits, 4);
    if (!(x >= -104.0f && x <= 89.0f)) continue;
    if (!(std::fabs(x) < 1e-3f) && bits % every != 0) continue;
    const float y = ncv::exp_f32(x);
    const long double e = expl(static_cast<long double>(x));
    const float nearest = static_cast<float>(e);
    if (std::isinf(nearest) || nearest == 0.0f) continue;
    ++checked;
    not_nearest += y != nearest;
    unfaithful += !ncv::exptest::is_faithful_exp(x, y);
    const double err = ncv::exptest::exp_ulp_error(x, y);
    if (err > worst) {
      worst = err;
      worst_x = x;
    }
  }
  std::printf(
      "exp_f32: %llu inputs checked, max error %.4f ulp at x = %a, %llu (%.4f%%) not "
      "correctly rounded, %llu not faithful\n",
      static_cast<unsigned long long>(checked), worst, static_cast<double>(worst_x),
      static_cast<unsigned long long>(not_nearest), 100.0 * not_nearest / checked,
      static_cast<unsigned long long>(unfaithful));
  return unfaithful == 0 ? 0 : 1;
}
