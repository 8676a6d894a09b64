// A dense [rows, cols] tile in its own buffer, for the semantics tests: a View over it and element
// access by (row, column). `step` > 1 spaces the elements (a strided free dim).
#pragma once

#include <cstdint>

#include "model/numerics/dtype.h"
#include "model/semantics/semantics.h"
#include "model/semantics/tests/test_values.h"

namespace ncv::semtest {

struct Tile {
  DType dtype;
  int64_t rows, cols, step;
  Arena bytes;
  Tile(DType t, int64_t r, int64_t c, int64_t s = 1)
      : dtype(t), rows(r), cols(c), step(s), bytes(r * c * s * dtype_size(t)) {}
  View view() {
    View v;
    v.base = bytes.data();
    v.dtype = dtype;
    v.rows = rows;
    v.row_stride = cols * step * static_cast<int64_t>(dtype_size(dtype));
    v.free_rank = 1;
    v.sizes[0] = cols;
    v.strides[0] = step * static_cast<int64_t>(dtype_size(dtype));
    return v;
  }
  int64_t offset(int64_t r, int64_t c) const {
    return (r * cols * step + c * step) * static_cast<int64_t>(dtype_size(dtype));
  }
  uint8_t* at(int64_t r, int64_t c) { return bytes.data() + offset(r, c); }
  const uint8_t* at(int64_t r, int64_t c) const { return bytes.data() + offset(r, c); }
  uint32_t raw(int64_t r, int64_t c) const { return load_bits(dtype, at(r, c)); }
  float get(int64_t r, int64_t c) const { return decode_to_float(dtype, raw(r, c)); }
  void set_raw(int64_t r, int64_t c, uint32_t b) { store_bits(dtype, at(r, c), b); }
  void set(int64_t r, int64_t c, float v) { set_raw(r, c, encode_from_float(dtype, v)); }
};

}  // namespace ncv::semtest
