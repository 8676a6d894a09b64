// The worst |got - exact| / bound of a kernel's outputs under the case bound and the a-priori
// bound, for the tests that run a plain C++ kernel against both (online softmax variants).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "oracle/case_bound.h"
#include "oracle/error_bound.h"

namespace ncv::oracle {

struct Worst {
  double case_ratio = 0, apriori_ratio = 0;
};

// Folds one case into `w` (elements computed exactly are skipped: their ratio is 0 whatever the
// bound).
inline void fold_worst(const std::vector<double>& got, const std::vector<double>& exact,
                       const CaseBound& cb, const ErrorBound& ap, Worst& w) {
  for (size_t x = 0; x < got.size(); ++x) {
    const double err = std::fabs(got[x] - exact[x]);
    if (err == 0) continue;
    w.case_ratio = std::max(w.case_ratio, err / cb.bound[x]);
    w.apriori_ratio = std::max(w.apriori_ratio, err / ap.bound[x]);
  }
}

}  // namespace ncv::oracle
