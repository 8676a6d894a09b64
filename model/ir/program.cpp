#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

// Written out because clang-14 crashes on an out-of-line defaulted comparison here.
bool Loop::operator==(const Loop& o) const {
  return var == o.var && start == o.start && stop == o.stop && step == o.step && kind == o.kind &&
         scope == o.scope && body == o.body;
}

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

}  // namespace ir
}  // namespace ncv
