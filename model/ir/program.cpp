#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

// Written out because clang-14 crashes on an out-of-line defaulted comparison here.
bool Loop::operator==(const Loop& o) const {
  return var == o.var && start == o.start && stop == o.stop && step == o.step && kind == o.kind &&
         scope == o.scope && body == o.body;
}

bool Program::operator==(const Program& o) const {
  return name == o.name && params == o.params && relations == o.relations && grid == o.grid &&
         tensors == o.tensors && body == o.body && num_instructions == o.num_instructions &&
         num_scopes == o.num_scopes && build_options == o.build_options;
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
