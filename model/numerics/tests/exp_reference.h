// Checks of an fp32 exp result against long double expl (64-bit significand; its error is far
// below the fp32 ulp), shared by the model's tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncv::exptest {

// y is one of the two floats around exp(x) (exactly exp(x) when that is a float; +0 and the
// smallest subnormal around a tiny exp(x); the largest float and +Inf around a huge one).
inline bool is_faithful_exp(float x, float y) {
  const long double e = expl(static_cast<long double>(x));
  const float near = static_cast<float>(e);  // round to nearest
  if (y == near) return true;
  if (static_cast<long double>(near) == e) return false;
  const float inf = std::numeric_limits<float>::infinity();
  const float other =
      static_cast<long double>(near) > e ? std::nextafter(near, -inf) : std::nextafter(near, inf);
  return y == other;
}

// |y - exp(x)| in units of the fp32 ulp at exp(x) (subnormal ulp below the normal range).
inline double exp_ulp_error(float x, float y) {
  const long double e = expl(static_cast<long double>(x));
  int ex = 0;
  frexpl(e, &ex);
  const long double ulp = ldexpl(1.0L, std::max(ex - 24, -149));
  if (std::isinf(y))
    return e > static_cast<long double>(std::numeric_limits<float>::max()) ? 0 : 1e9;
  return static_cast<double>(fabsl(static_cast<long double>(y) - e) / ulp);
}

}  // namespace ncv::exptest
