// A concrete strided view of elements in a byte array: what the interpreter resolves an Access
// to for one instruction instance, after every bounds and rule check has passed. The semantics
// functions (semantics.h) read and write through Views only.
#pragma once

#include <array>
#include <cstdint>

#include "model/hw/hw_config.h"
#include "model/numerics/dtype.h"

namespace ncv {
inline namespace semantics {

struct View {
  uint8_t* base = nullptr;  // element (0, 0, ..., 0)
  DType dtype = DType::fp32;
  int64_t rows = 1;                             // view dim 0: partitions for on-chip views
  int64_t row_stride = 0;                       // bytes between consecutive rows
  int free_rank = 0;                            // number of free dims (view dims 1..)
  std::array<int64_t, kMaxFreeDims> sizes{};    // free dim sizes, outermost first
  std::array<int64_t, kMaxFreeDims> strides{};  // free dim strides in bytes (0 = broadcast)
  // Indirect addressing: optional extra byte offset per row (rows entries).
  const int64_t* row_offsets = nullptr;

  int64_t free_elems() const {
    int64_t n = 1;
    for (int d = 0; d < free_rank; ++d) n *= sizes[d];
    return n;
  }
  uint8_t* row(int64_t r) const {
    return base + r * row_stride + (row_offsets ? row_offsets[r] : 0);
  }
  // Address of free element `f` (row-major flat index over the free dims) in row r.
  uint8_t* at(int64_t r, int64_t f) const {
    uint8_t* p = row(r);
    for (int d = free_rank - 1; d >= 0; --d) {
      p += (f % sizes[d]) * strides[d];
      f /= sizes[d];
    }
    return p;
  }
  // True when the innermost free dim is contiguous (stride == element size).
  bool inner_contiguous() const {
    return free_rank == 0 || strides[free_rank - 1] == static_cast<int64_t>(dtype_size(dtype));
  }
};

}  // namespace semantics
}  // namespace ncv
