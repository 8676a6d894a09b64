// Tensors on the host side: kernel inputs handed to the interpreter and outputs it returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/numerics/dtype.h"

namespace ncv {
inline namespace interp {

struct HostTensor {
  DType dtype = DType::fp32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // row-major, little-endian elements

  HostTensor() = default;
  HostTensor(DType dt, std::vector<int64_t> s);  // zero-filled
  int64_t num_elements() const;
  float get(int64_t flat_index) const;        // element as fp32
  void set(int64_t flat_index, float value);  // stored with RNE to dtype
  uint32_t bits(int64_t flat_index) const;
};

}  // namespace interp
}  // namespace ncv
