// Double-precision attention oracle (dgemm products, compensated row sums), for shapes where the
// exact oracle is too slow. Its error relative to the exact oracle is bounded by
// fast_oracle_bound() and the bound is checked by a property test (oracle/tests).
#pragma once

#include "oracle/attention_spec.h"

namespace ncv::oracle {

OracleOutput fast_attention(const AttentionSpec& spec, const AttentionInputs& in);

// Both in one pass (fast_oracle_bound runs the attention again to get the values its bound
// needs): the output, and the bound into `bound`; with `lse_bound`, also a bound on
// |fast.lse[r] - exact.lse[r]| per row [B][H][Sq] (0 where lse is not finite: compared by class).
// With `stats`, also bounds on the softmax statistics of every row [B][H][Sq]:
// |fast.row_max - exact.row_max| and |1 / fast.row_sum - 1 / exact.row_sum| (a kernel's cached
// row max and reciprocal sum, ERROR_BOUNDS.md §4 "The cached softmax statistics"); 0 where the
// exact value is not finite (compared by class).
struct FastStatBounds {
  std::vector<double> row_max, recip_sum;
};
OracleOutput fast_attention_with_bound(const AttentionSpec& spec, const AttentionInputs& in,
                                       std::vector<double>& bound,
                                       std::vector<double>* lse_bound = nullptr,
                                       FastStatBounds* stats = nullptr);

// Stated bound on |fast.out[r][c] - exact.out[r][c]| for every element (same layout as out).
std::vector<double> fast_oracle_bound(const AttentionSpec& spec, const AttentionInputs& in,
                                      const OracleOutput& fast);

}  // namespace ncv::oracle
