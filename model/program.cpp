#include "model/program.h"

namespace ncv {

bool Loop::operator==(const Loop&) const = default;

std::optional<TensorId> Program::find_tensor(std::string_view n) const {
  for (const Tensor& t : tensors) {
    if (t.name == n) return t.id;
  }
  return std::nullopt;
}

const Param* Program::find_param(std::string_view n) const {
  for (const Param& p : params) {
    if (p.name == n) return &p;
  }
  return nullptr;
}

}  // namespace ncv
