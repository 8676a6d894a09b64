// The case bound: a per-element error bound computed from the values of one input set, by
// evaluating the precision contract's computation in interval arithmetic (a running error
// analysis; oracle/ERROR_BOUNDS.md "The case bound"). Every rounding the contract fixes (an
// input cast to bf16, a score stored in bf16, P cast for the PV matmul, the output store) is
// applied to both ends of the interval, so it costs nothing unless the value may land on either
// side of a rounding boundary; only what the contract leaves open (the order of the fp32
// accumulations, the exp's ulps) widens the interval. A correct kernel's output lies inside, so
//   |kernel - exact| <= max(hi - exact, exact - lo),
// which on real inputs is far below the a-priori bound (error_bound.h): it uses the actual
// rounding errors of the case instead of their worst case.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/attention_spec.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle {

struct CaseBound {
  // [B][H][Sq][d]: |kernel - exact| <= bound for a kernel honouring the contract; +inf where the
  // interval is not finite (an intermediate may overflow) or the exact value is not finite.
  std::vector<double> bound;
  // The contract's computation at one accumulation order (every rounding applied once to the
  // double-precision value): a reference in the kernel's own precision, as FlashAttention's tests
  // use one (their criterion: |kernel - exact| <= 2 |reference - exact|). Empty unless asked for
  // (`with_reference`): it costs a product and a lane of roundings, and only the FA-style ratio
  // reads it.
  std::vector<double> reference;
  int64_t uncertified = 0;  // elements with bound +inf
};

// `exact` holds the exact (or fast) oracle's output for the same inputs; a fast oracle's own error
// is not included (the caller adds fast_oracle_bound). Throws SpecError / std::invalid_argument on
// a bad spec or contract.
CaseBound case_error_bound(const PrecisionContract& contract, const AttentionSpec& spec,
                           const AttentionInputs& in, const std::vector<double>& exact,
                           bool with_reference = true);

}  // namespace ncv::oracle
