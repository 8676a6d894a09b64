#include "model/interp/host_tensor.h"

#include <stdexcept>

namespace ncv {
inline namespace interp {

HostTensor::HostTensor(DType dt, std::vector<int64_t> s) : dtype(dt), shape(std::move(s)) {
  bytes.assign(static_cast<size_t>(num_elements()) * dtype_size(dtype), 0);
}

int64_t HostTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

uint32_t HostTensor::bits(int64_t i) const {
  size_t sz = dtype_size(dtype);
  if (i < 0 || static_cast<size_t>(i + 1) * sz > bytes.size()) {
    throw std::out_of_range("HostTensor element index out of range");
  }
  return load_bits(dtype, bytes.data() + static_cast<size_t>(i) * sz);
}

float HostTensor::get(int64_t i) const {
  return decode_to_float(dtype, bits(i));
}

void HostTensor::set(int64_t i, float value) {
  size_t sz = dtype_size(dtype);
  if (i < 0 || static_cast<size_t>(i + 1) * sz > bytes.size()) {
    throw std::out_of_range("HostTensor element index out of range");
  }
  store_bits(dtype, bytes.data() + static_cast<size_t>(i) * sz, encode_from_float(dtype, value));
}

}  // namespace interp
}  // namespace ncv
