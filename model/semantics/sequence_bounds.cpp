// sequence_bounds (GpSimd engine), as the page's NumPy equivalent (nki.isa.sequence_bounds, SDK
// 2.26) computes it for one partition of n segment ids: element i's start is the index of the
// first element of its run of equal ids and its end one past the run's last element; an id of 0
// (padding) gets start n and end -1. Ids are compared by value (int32 exactly, fp32 as fp32);
// the interpreter has checked that they are non-negative integers (sequence_bounds_bad_id). The
// outputs are integers in [-1, n], written exactly (int32) or as fp32 values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

double id_at(const View& src, int64_t i) {
  const uint32_t bits = ref_load(src, 0, i);
  if (src.dtype == DType::fp32) return decode_to_float(src.dtype, bits);
  return static_cast<double>(int_from_bits(src.dtype, bits));
}

}  // namespace

std::optional<int64_t> sequence_bounds_bad_id(const View& src) {
  const int64_t n = src.free_elems();
  for (int64_t i = 0; i < n; ++i) {
    const double v = id_at(src, i);
    if (!(v >= 0.0) || !std::isfinite(v) || std::trunc(v) != v) return i;
  }
  return std::nullopt;
}

void exec_sequence_bounds(ExecMode, const View& dst, const View& src) {
  const int64_t n = src.free_elems();
  std::vector<double> id(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) id[static_cast<size_t>(i)] = id_at(src, i);
  std::vector<int64_t> start(static_cast<size_t>(n)), end(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    if (id[k] == 0.0) {
      start[k] = n;
    } else if (i > 0 && id[k] == id[k - 1]) {
      start[k] = start[k - 1];
    } else {
      start[k] = i;
    }
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    const auto k = static_cast<size_t>(i);
    if (id[k] == 0.0) {
      end[k] = -1;
    } else if (i + 1 < n && id[k] == id[k + 1]) {
      end[k] = end[k + 1];
    } else {
      end[k] = i + 1;
    }
  }
  for (int64_t i = 0; i < n && 2 * n <= dst.free_elems(); ++i) {
    const auto k = static_cast<size_t>(i);
    store_bits(dst.dtype, dst.at(0, i), encode_int(dst.dtype, start[k]));
    store_bits(dst.dtype, dst.at(0, n + i), encode_int(dst.dtype, end[k]));
  }
}

}  // namespace semantics
}  // namespace ncv
