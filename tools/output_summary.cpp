#include "tools/output_summary.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "tools/cli_common.h"

namespace ncv::cli {

OutputSummary summarize_output(const std::string& name, const HostTensor& t) {
  OutputSummary s;
  s.name = name;
  s.shape = t.shape;
  s.dtype = t.dtype;
  s.checksum = fnv1a64(t.bytes);
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  int64_t finite_or_inf = 0;
  const int64_t n = t.num_elements();
  // An MX packed element holds four values: each counts (min, max, NaNs of the values).
  const int per = is_mx_packed(t.dtype) ? 4 : 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int q = 0; q < per; ++q) {
      const float v = per == 1 ? t.get(i) : mx_packed_value(t.dtype, t.bits(i), q);
      if (std::isnan(v)) {
        ++s.nan_count;
        continue;
      }
      ++finite_or_inf;
      lo = std::fmin(lo, v);
      hi = std::fmax(hi, v);
    }
  }
  s.min = finite_or_inf > 0 ? lo : std::numeric_limits<float>::quiet_NaN();
  s.max = finite_or_inf > 0 ? hi : std::numeric_limits<float>::quiet_NaN();
  return s;
}

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return out + "]";
}

std::string format_summary(const OutputSummary& s) {
  return s.name + ": shape=" + format_shape(s.shape) +
         " dtype=" + std::string(dtype_name(s.dtype)) + " checksum=" + hex64(s.checksum) +
         " min=" + format_float(s.min) + " max=" + format_float(s.max) +
         " nan=" + std::to_string(s.nan_count);
}

namespace {

nlohmann::json float_json(float v) {
  // Through the shortest float text, so 0.1f prints as 0.1 rather than its double expansion.
  if (std::isfinite(v)) return std::strtod(format_float(v).c_str(), nullptr);
  return format_float(v);
}

}  // namespace

nlohmann::json summary_json(const OutputSummary& s) {
  return {{"name", s.name},
          {"shape", s.shape},
          {"dtype", std::string(dtype_name(s.dtype))},
          {"checksum", hex64(s.checksum)},
          {"min", float_json(s.min)},
          {"max", float_json(s.max)},
          {"nan_count", s.nan_count}};
}

}  // namespace ncv::cli
