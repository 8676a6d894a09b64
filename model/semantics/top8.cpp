#include "model/semantics/top8.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/numerics/dtype.h"
#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

float read_f32(const View& v, int64_t r, int64_t f) {
  return decode_to_float(v.dtype, load_bits(v.dtype, v.at(r, f)));
}

void write_f32(const View& v, int64_t r, int64_t f, float x) {
  store_bits(v.dtype, v.at(r, f), encode_from_float(v.dtype, x));
}

// A key whose unsigned order is the descending-selection order of max8: fp32's total order with
// -0 below +0, and every NaN above +inf.
uint32_t order_key(float x) {
  if (std::isnan(x)) return 0xffffffffu;
  const uint32_t u = to_bits(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// The fp32 values of vals' row r (8 of them: Rule::top8_values is checked first).
std::vector<float> row_values(const View& vals, int64_t r) {
  std::vector<float> out(8);
  for (int k = 0; k < 8; ++k) out[static_cast<size_t>(k)] = read_f32(vals, r, k);
  return out;
}

}  // namespace

void exec_max8(const View& dst, const View& src) {
  const int64_t n = src.free_elems();
  std::vector<float> row(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  // Read every row first: dst may overlap src.
  std::vector<float> best(static_cast<size_t>(src.rows) * 8);
  for (int64_t r = 0; r < src.rows; ++r) {
    for (int64_t f = 0; f < n; ++f) row[static_cast<size_t>(f)] = read_f32(src, r, f);
    for (int64_t f = 0; f < n; ++f) order[static_cast<size_t>(f)] = f;
    std::partial_sort(order.begin(), order.begin() + 8, order.end(), [&](int64_t a, int64_t b) {
      const uint32_t ka = order_key(row[static_cast<size_t>(a)]);
      const uint32_t kb = order_key(row[static_cast<size_t>(b)]);
      return ka != kb ? ka > kb : a < b;
    });
    for (int k = 0; k < 8; ++k) {
      best[static_cast<size_t>(r * 8 + k)] =
          row[static_cast<size_t>(order[static_cast<size_t>(k)])];
    }
  }
  for (int64_t r = 0; r < src.rows; ++r) {
    for (int k = 0; k < 8; ++k) write_f32(dst, r, k, best[static_cast<size_t>(r * 8 + k)]);
  }
}

std::optional<Top8Miss> exec_find_index8(const View& dst, const View& data, const View& vals,
                                         bool successive) {
  const int64_t n = data.free_elems();
  // The all-ones index of dst's dtype (uint16 or uint32: the validator's rule).
  const int64_t all_ones = dst.dtype == DType::uint16 ? 0xffff : 0xffffffffLL;
  std::vector<int64_t> idx(static_cast<size_t>(data.rows) * 8);
  std::vector<char> taken(static_cast<size_t>(successive ? n : 0));
  for (int64_t r = 0; r < data.rows; ++r) {
    const std::vector<float> want = row_values(vals, r);
    std::fill(taken.begin(), taken.end(), 0);
    for (int k = 0; k < 8; ++k) {
      int64_t hit = -1;
      for (int64_t f = 0; f < n && hit < 0; ++f) {
        if (successive && taken[static_cast<size_t>(f)]) continue;
        if (read_f32(data, r, f) == want[static_cast<size_t>(k)]) hit = f;
      }
      if (hit < 0 && !successive) return Top8Miss{r, k, want[static_cast<size_t>(k)]};
      if (hit >= 0 && successive) taken[static_cast<size_t>(hit)] = 1;
      idx[static_cast<size_t>(r * 8 + k)] = hit < 0 ? all_ones : hit;
    }
  }
  for (int64_t r = 0; r < data.rows; ++r) {
    for (int k = 0; k < 8; ++k) {
      store_bits(dst.dtype, dst.at(r, k),
                 encode_int(dst.dtype, idx[static_cast<size_t>(r * 8 + k)]));
    }
  }
  return std::nullopt;
}

std::optional<Top8Miss> exec_match_replace8(const View& dst, const View& data, const View& vals,
                                            float imm, const View* dst_idx, bool reverse) {
  const int64_t n = data.free_elems();
  std::vector<float> out(static_cast<size_t>(data.rows * n));
  std::vector<int64_t> idx(static_cast<size_t>(data.rows) * 8);
  for (int64_t r = 0; r < data.rows; ++r) {
    float* row = out.data() + r * n;
    for (int64_t f = 0; f < n; ++f) row[f] = read_f32(data, r, f);
    const std::vector<float> want = row_values(vals, r);
    for (int j = 0; j < 8; ++j) {
      const int k = reverse ? 7 - j : j;
      int64_t hit = -1;
      for (int64_t f = 0; f < n && hit < 0; ++f) {
        if (row[f] == want[static_cast<size_t>(k)]) hit = f;
      }
      if (hit < 0) return Top8Miss{r, k, want[static_cast<size_t>(k)]};
      row[hit] = imm;
      idx[static_cast<size_t>(r * 8 + k)] = hit;
    }
  }
  for (int64_t r = 0; r < data.rows; ++r) {
    for (int64_t f = 0; f < n; ++f) write_f32(dst, r, f, out[static_cast<size_t>(r * n + f)]);
    if (!dst_idx) continue;
    for (int k = 0; k < 8; ++k) {
      store_bits(dst_idx->dtype, dst_idx->at(r, k),
                 encode_int(dst_idx->dtype, idx[static_cast<size_t>(r * 8 + k)]));
    }
  }
  return std::nullopt;
}

}  // namespace semantics
}  // namespace ncv
