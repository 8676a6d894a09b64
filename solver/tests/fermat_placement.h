// A placement outside SBUF exactly at a solution of i^3 + j^3 = k^3 (none exists, by Fermat for
// n = 3), which Z3 cannot settle within 1 ms: what the allocation and frontier tests use to show
// that an undecided query is reported unknown, never proved and never a guessed frontier.
#pragma once

#include "model/ir/builder.h"

namespace ncv::solver::testing {

inline Program fermat_placement() {
  Builder b("fermat_placement");
  Expr N = b.param("N", 2, 1'000'000);
  b.affine_range("i", 1, N, 1, [&](Expr i) {
    b.affine_range("j", 1, N, 1, [&](Expr j) {
      b.affine_range("k", 1, N, 1, [&](Expr k) {
        const Expr gap = i * i * i + j * j * j - k * k * k;
        auto t = b.sbuf("t", DType::fp32, {128, 1},
                        {.placement = Placement{Expr(0), Expr::min(gap * gap, 1) - 1}});
        b.memset(t(), 0.0f);
      });
    });
  });
  return b.finish();
}

}  // namespace ncv::solver::testing
