// Kernel output vs the exact oracle under a per-element error bound (oracle/ERROR_BOUNDS.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/attention_spec.h"
#include "oracle/error_bound.h"

namespace ncv::oracle {

struct Location {
  int64_t b = 0, h = 0, i = 0, c = 0;
};

struct Comparison {
  int64_t elements = 0;
  int64_t finite_compared = 0;  // elements where both values are finite (the error statistics')
  // max over elements of |got - exact| / bound (0/0 = 0, x/0 = +inf).
  double max_normalized = 0;
  Location worst;  // where max_normalized is reached
  double worst_got = 0, worst_exact = 0, worst_bound = 0;
  double max_abs_err = 0;
  int64_t over_bound = 0;  // elements with |err| > bound
  // In ulps of the output dtype at the exact value.
  double max_ulps = 0, mean_ulps = 0;
  double mean_signed_err = 0;      // bias of (got - exact) over finite elements
  double mean_signed_ulps = 0;     // the same in output ulps
  int64_t uncertified = 0;         // elements whose bound is +inf (contract may overflow)
  int64_t nonfinite_mismatch = 0;  // exact NaN/Inf and got not of the same class, or vice versa
  // The first element (in [b][h][i][c] order) that fails: over its bound, uncertified, or of
  // another non-finite class than the exact value.
  bool has_first_failure = false;
  Location first_failure;
  double first_got = 0, first_exact = 0, first_bound = 0;
  bool pass = false;  // max_normalized <= 1, no uncertified element, no non-finite mismatch

  // The verdict, then what decided it: non-finite mismatches first (a NaN where the oracle is
  // finite is the failure, whatever the finite elements' errors), then the finite elements'
  // worst error and statistics (left out when no element is finite on both sides).
  std::string one_line() const;
  // "first failing element (b=0,h=0,i=3,c=7): got 0.51 exact 0.49 bound 0.004" or "".
  std::string first_failure_line() const;
  nlohmann::json to_json() const;
};

// `got` holds the kernel output [B][H][Sq][d] as doubles (values of out_dtype).
Comparison compare(const AttentionSpec& spec, const std::vector<double>& got,
                   const OracleOutput& exact, const ErrorBound& bound, DType out_dtype);

// A kernel's log-sum-exp output `got` [B][H][Sq] (values of lse_dtype) against exact.lse under
// `bound` (ErrorBound::lse): the same verdict as compare(), one element per row (Location::c 0).
Comparison compare_lse(const AttentionSpec& spec, const std::vector<double>& got,
                       const OracleOutput& exact, const std::vector<double>& bound,
                       DType lse_dtype);

// Any per-row value `got` [B][H][Sq] (values of `dtype`) against `exact` [B][H][Sq] under `bound`
// (the cached softmax statistics: ErrorBound::row_max, ErrorBound::recip_sum): compare_lse's
// verdict.
Comparison compare_rows(const AttentionSpec& spec, const std::vector<double>& got,
                        const std::vector<double>& exact, const std::vector<double>& bound,
                        DType dtype);

}  // namespace ncv::oracle
