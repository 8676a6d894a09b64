#include "oracle/comparison.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "oracle/precision_contract.h"

namespace ncv::oracle {

namespace {
bool same_class(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;  // infinities of the same sign
}
}  // namespace

Comparison compare(const AttentionSpec& spec, const std::vector<double>& got,
                   const OracleOutput& exact, const ErrorBound& bound, DType out_dtype) {
  const size_t n = static_cast<size_t>(spec.q_elements());
  if (got.size() != n || exact.out.size() != n || bound.bound.size() != n) {
    throw std::invalid_argument("compare: got/exact/bound must have q_elements() values");
  }
  Comparison r;
  r.elements = static_cast<int64_t>(n);
  double sum_ulps = 0, sum_signed = 0, sum_signed_ulps = 0;
  int64_t finite = 0;
  const int64_t d = spec.d_head, Sq = spec.seqlen_q, H = spec.heads;
  auto location = [&](size_t e) {
    const int64_t ie = static_cast<int64_t>(e);
    return Location{ie / (d * Sq * H), (ie / (d * Sq)) % H, (ie / d) % Sq, ie % d};
  };
  auto note_failure = [&](size_t e, double g, double x, double bd) {
    if (r.has_first_failure) return;
    r.has_first_failure = true;
    r.first_failure = location(e);
    r.first_got = g;
    r.first_exact = x;
    r.first_bound = bd;
  };
  for (size_t e = 0; e < n; ++e) {
    const double x = exact.out[e], g = got[e], bd = bound.bound[e];
    if (!std::isfinite(x) || !std::isfinite(g)) {
      if (!same_class(x, g)) {
        ++r.nonfinite_mismatch;
        note_failure(e, g, x, bd);
      }
      continue;
    }
    if (std::isinf(bd) || std::fabs(g - x) > bd) note_failure(e, g, x, bd);
    if (std::isinf(bd)) ++r.uncertified;
    const double err = g - x;
    const double ae = std::fabs(err);
    double norm = 0;
    if (ae > 0) norm = bd > 0 ? ae / bd : std::numeric_limits<double>::infinity();
    if (std::isinf(bd)) norm = 0;
    if (ae > bd) ++r.over_bound;
    const double ulps = ae / ulp_at(out_dtype, x);
    r.max_abs_err = std::max(r.max_abs_err, ae);
    r.max_ulps = std::max(r.max_ulps, ulps);
    sum_ulps += ulps;
    sum_signed += err;
    sum_signed_ulps += err / ulp_at(out_dtype, x);
    ++finite;
    if (finite == 1 || norm > r.max_normalized) {
      r.max_normalized = norm;
      r.worst = location(e);
      r.worst_got = g;
      r.worst_exact = x;
      r.worst_bound = bd;
    }
  }
  r.finite_compared = finite;
  if (finite > 0) {
    r.mean_ulps = sum_ulps / static_cast<double>(finite);
    r.mean_signed_err = sum_signed / static_cast<double>(finite);
    r.mean_signed_ulps = sum_signed_ulps / static_cast<double>(finite);
  }
  r.pass =
      r.max_normalized <= 1 && r.over_bound == 0 && r.uncertified == 0 && r.nonfinite_mismatch == 0;
  return r;
}

Comparison compare_lse(const AttentionSpec& spec, const std::vector<double>& got,
                       const OracleOutput& exact, const std::vector<double>& bound,
                       DType lse_dtype) {
  return compare_rows(spec, got, exact.lse, bound, lse_dtype);
}

Comparison compare_rows(const AttentionSpec& spec, const std::vector<double>& got,
                        const std::vector<double>& exact, const std::vector<double>& bound,
                        DType dtype) {
  // One value per row is an attention output with d_head 1: the same element loop and verdict.
  AttentionSpec rows = spec;
  rows.d_head = 1;
  OracleOutput as_out;
  as_out.out = exact;
  ErrorBound b;
  b.bound = bound;
  return compare(rows, got, as_out, b, dtype);
}

std::string Comparison::one_line() const {
  std::string line = pass ? "PASS" : "FAIL";
  char buf[512];
  if (nonfinite_mismatch > 0) {
    // first_failure is the first element in [b][h][i][c] order that fails; with a non-finite
    // mismatch it may be an over-bound finite one, so it is named as "first failing element"
    std::snprintf(buf, sizeof buf,
                  " %lld element(s) non-finite where the oracle is finite or the reverse; first "
                  "failing element (b=%lld,h=%lld,i=%lld,c=%lld) got=%.9g exact=%.9g |",
                  static_cast<long long>(nonfinite_mismatch),
                  static_cast<long long>(first_failure.b), static_cast<long long>(first_failure.h),
                  static_cast<long long>(first_failure.i), static_cast<long long>(first_failure.c),
                  first_got, first_exact);
    line += buf;
  }
  if (finite_compared == 0) {
    std::snprintf(buf, sizeof buf,
                  " no element finite on both sides | uncertified=%lld nonfinite_mismatch=%lld "
                  "n=%lld",
                  static_cast<long long>(uncertified), static_cast<long long>(nonfinite_mismatch),
                  static_cast<long long>(elements));
    return line + buf;
  }
  std::snprintf(buf, sizeof buf,
                " max|err|/bound=%.3g at (b=%lld,h=%lld,i=%lld,c=%lld) got=%.9g exact=%.9g "
                "bound=%.3g | max|err|=%.3g ulps max=%.3g mean=%.3g | bias=%.3g (%.3g ulp) | "
                "over=%lld uncertified=%lld nonfinite_mismatch=%lld n=%lld",
                max_normalized, static_cast<long long>(worst.b), static_cast<long long>(worst.h),
                static_cast<long long>(worst.i), static_cast<long long>(worst.c), worst_got,
                worst_exact, worst_bound, max_abs_err, max_ulps, mean_ulps, mean_signed_err,
                mean_signed_ulps, static_cast<long long>(over_bound),
                static_cast<long long>(uncertified), static_cast<long long>(nonfinite_mismatch),
                static_cast<long long>(elements));
  return line + buf;
}

std::string Comparison::first_failure_line() const {
  if (!has_first_failure) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "first failing element (b=%lld,h=%lld,i=%lld,c=%lld): got %.9g, oracle %.9g, "
                "bound %.3g",
                static_cast<long long>(first_failure.b), static_cast<long long>(first_failure.h),
                static_cast<long long>(first_failure.i), static_cast<long long>(first_failure.c),
                first_got, first_exact, first_bound);
  return buf;
}

nlohmann::json Comparison::to_json() const {
  auto num = [](double x) -> nlohmann::json {
    if (std::isfinite(x)) return x;
    return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
  };
  nlohmann::json j = {
      {"pass", pass},
      {"elements", elements},
      {"finite_compared", finite_compared},
      {"max_normalized_error", num(max_normalized)},
      {"worst",
       {{"b", worst.b},
        {"h", worst.h},
        {"i", worst.i},
        {"c", worst.c},
        {"got", num(worst_got)},
        {"exact", num(worst_exact)},
        {"bound", num(worst_bound)}}},
      {"max_abs_error", num(max_abs_err)},
      {"over_bound", over_bound},
      {"ulps", {{"max", num(max_ulps)}, {"mean", num(mean_ulps)}}},
      {"bias", {{"mean_signed_error", num(mean_signed_err)}, {"ulps", num(mean_signed_ulps)}}},
      {"uncertified", uncertified},
      {"nonfinite_mismatch", nonfinite_mismatch}};
  // no element finite on both sides: there is no worst finite error to name
  if (finite_compared == 0) j["worst"] = nullptr;
  if (has_first_failure) {
    j["first_failure"] = {{"b", first_failure.b},     {"h", first_failure.h},
                          {"i", first_failure.i},     {"c", first_failure.c},
                          {"got", num(first_got)},    {"exact", num(first_exact)},
                          {"bound", num(first_bound)}};
  }
  return j;
}

}  // namespace ncv::oracle
