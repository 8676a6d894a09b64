#include "model/ir/tensor.h"

#include "model/ir/access.h"

namespace ncv {
inline namespace ir {

Expr Tensor::bytes_per_partition() const {
  Expr bytes(static_cast<int64_t>(dtype_size(dtype)));
  for (size_t i = 1; i < shape.size(); ++i) bytes = bytes * shape[i];
  return bytes;
}

Expr Tensor::num_elements() const {
  Expr n(1);
  for (const Expr& s : shape) n = n * s;
  return n;
}

std::string_view tensor_kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::Input:
      return "input";
    case TensorKind::Output:
      return "output";
    case TensorKind::Scratch:
      return "scratch";
    case TensorKind::Buffer:
      return "buffer";
  }
  return "?";
}

bool Indirect::operator==(const Indirect& o) const {
  bool same_offsets = (offsets == o.offsets) || (offsets && o.offsets && *offsets == *o.offsets);
  return same_offsets && dim == o.dim && lo == o.lo && hi == o.hi;
}

std::vector<Expr> Access::view_shape() const {
  std::vector<Expr> s;
  s.reserve(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) s.push_back(dims.at(tensor_dim(k)).size);
  return s;
}

}  // namespace ir
}  // namespace ncv
