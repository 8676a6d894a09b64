// Per-element error bound of an attention output computed under a precision contract
// (derivation in oracle/ERROR_BOUNDS.md).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/attention_spec.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle {

// Multiplies the first-order sum of the per-stage terms, covering second-order products and the
// double-precision evaluation of the bound itself (ERROR_BOUNDS.md "Safety factor").
inline constexpr double kBoundSafety = 1.25;

struct ErrorBound {
  std::vector<double> bound;  // [B][H][Sq][d]: |kernel - exact| <= bound for a correct kernel
  int64_t uncertified = 0;    // elements with bound +inf: an intermediate may overflow its dtype
  int64_t nonfinite = 0;      // elements whose exact value is NaN/Inf (bound 0, compared by class)
  // [B][H][Sq]: |kernel lse - exact lse| <= lse for a kernel that stores its log-sum-exp
  // (ERROR_BOUNDS.md §4 "The log-sum-exp output"); 0 for rows whose exact lse is not finite
  // (compared by class), +inf where the row is uncertified.
  std::vector<double> lse;
  // [B][H][Sq]: |kernel row max - exact row_max| and |kernel 1/l - 1 / exact row_sum| for a
  // kernel that stores its softmax statistics (nki-library attention_cte's cache_softmax: the
  // negated row max and the reciprocal row sum; ERROR_BOUNDS.md §4 "The cached softmax
  // statistics"); 0 where the exact value is not finite (compared by class), +inf where the row
  // is uncertified.
  std::vector<double> row_max, recip_sum;
};

// gamma_n = n u / (1 - n u) (Higham §3.1); +inf when n u >= 1.
double gamma_n(int64_t n, double u);

// The extra relative errors of an online softmax with a log-sum-exp denominator
// (PrecisionContract::online_tile > 0; ERROR_BOUNDS.md §4 "Online softmax") for one row with
// `visible` keys out of `skv` and every visible scaled score within +-max_abs_score: each p in
// the numerator is off by a factor within [1/(1 + numer), 1 + numer] (the rescaling chain), the
// denominator by one within [1/(1 + denom), 1 + denom] (the log-sum-exp chain). Both 0 when
// online_tile is 0.
struct OnlineTerms {
  double numer = 0, denom = 0;
  int64_t tiles = 0;  // online tiles (each adds a multiply and an add to the accumulator)
};
OnlineTerms online_softmax_terms(const PrecisionContract& contract, int64_t skv, int64_t visible,
                                 double max_abs_score);

// Whether the contract's load of q into q_dtype before the folded scale multiply
// (q_rounded_before_scale) can differ from one rounding of scale * q: only when the fp32 scale
// is not a power of two and the input does not fit q_dtype.
bool folded_scale_rounds_twice(const PrecisionContract& contract, DType input, float scale);

// The bound for every output element of a kernel honouring `contract`, from the inputs as the
// kernel receives them and the exact oracle's out/row_max. Fully masked rows get bound 0 around
// their documented result 0. Throws SpecError / std::invalid_argument on bad spec or contract.
ErrorBound error_bound(const PrecisionContract& contract, const AttentionSpec& spec,
                       const AttentionInputs& in, const OracleOutput& exact,
                       double safety = kBoundSafety);

}  // namespace ncv::oracle
