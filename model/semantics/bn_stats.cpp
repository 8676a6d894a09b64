// bn_stats and bn_aggr: per-partition statistics in fp32 (formulas in semantics.h). The pages
// (nki.isa.bn_stats / bn_aggr, SDK 2.26) give the outputs — (count, mean, variance * count) of
// the even and the odd elements; the mean and the (population) variance of all of them — but not
// the hardware's order of operations, so the order below (two passes per half, sequential sums)
// is the model's choice. Both execution modes run this one loop per row (reads through View::at
// in reference mode, decode_row in fast mode).
#include <algorithm>
#include <vector>

#include "model/semantics/internal.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace semantics {

namespace {

void load_row(ExecMode mode, const View& v, int64_t r, float* out) {
  if (mode == ExecMode::fast) return decode_row(v, row_shape(v), r, out);
  const int64_t n = v.free_elems();
  for (int64_t f = 0; f < n; ++f) out[f] = decode_to_float(v.dtype, ref_load(v, r, f));
}

// Writes rows x cols fp32 values after every row was computed (an output that overlaps the
// input still sees the input's old values).
void store_all(const View& dst, const std::vector<float>& out, int64_t cols) {
  for (int64_t r = 0; r < std::max<int64_t>(dst.rows, 0); ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      store_bits(dst.dtype, dst.at(r, c), encode_from_float(dst.dtype, out[r * cols + c]));
    }
  }
}

}  // namespace

void exec_bn_stats(ExecMode mode, const View& dst, const View& src) {
  const int64_t rows = std::max<int64_t>(src.rows, 0);
  const int64_t n = src.free_elems();
  std::vector<float> x(static_cast<size_t>(n)), out(static_cast<size_t>(rows * 6));
  for (int64_t r = 0; r < rows; ++r) {
    load_row(mode, src, r, x.data());
    for (int64_t half = 0; half < 2; ++half) {
      const int64_t count = n > half ? (n - half + 1) / 2 : 0;
      float sum = 0.0f;
      for (int64_t f = half; f < n; f += 2) sum = f_add(sum, x[f]);
      const float c = static_cast<float>(count);
      const float mean = count ? f_div(sum, c) : 0.0f;
      float m2 = 0.0f;
      for (int64_t f = half; f < n; f += 2) {
        const float d = f_sub(x[f], mean);
        m2 = f_add(m2, f_mul(d, d));
      }
      float* o = out.data() + r * 6 + half * 3;
      o[0] = c;
      o[1] = mean;
      o[2] = m2;
    }
  }
  store_all(dst, out, 6);
}

void exec_bn_aggr(ExecMode mode, const View& dst, const View& src) {
  const int64_t rows = std::max<int64_t>(src.rows, 0);
  const int64_t n = src.free_elems(), k = n / 3;
  std::vector<float> x(static_cast<size_t>(n)), out(static_cast<size_t>(rows * 2));
  for (int64_t r = 0; r < rows; ++r) {
    load_row(mode, src, r, x.data());
    float count = 0.0f, weighted = 0.0f;
    for (int64_t t = 0; t < k; ++t) {
      count = f_add(count, x[3 * t]);
      weighted = f_add(weighted, f_mul(x[3 * t], x[3 * t + 1]));
    }
    const float mean = f_div(weighted, count);
    float m2 = 0.0f;
    for (int64_t t = 0; t < k; ++t) {
      const float d = f_sub(x[3 * t + 1], mean);
      m2 = f_add(m2, f_add(x[3 * t + 2], f_mul(x[3 * t], f_mul(d, d))));
    }
    out[r * 2] = mean;
    out[r * 2 + 1] = f_div(m2, count);
  }
  store_all(dst, out, 2);
}

}  // namespace semantics
}  // namespace ncv
