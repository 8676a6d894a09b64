#include "model/ir/random_draws.h"

namespace ncv {
inline namespace ir {

std::optional<std::string> random_values_reason(const Program& p) {
  std::optional<std::string> out;
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    const auto* i = std::get_if<InstrStmt>(&s.node);
    if (out || !i || !draws_random_values(i->ins)) return;
    std::string where;
    if (i->source_line.value != 0) {
      where = " (" + (p.source_file.value.empty() ? std::string("line") : p.source_file.value) +
              ":" + std::to_string(i->source_line.value) + ")";
    }
    out = "instruction #" + std::to_string(i->id) + " `" + std::string(op_name(i->ins)) + "`" +
          where +
          " draws random values: the hardware's generator cannot be reproduced and the model's "
          "values are its own, so a comparison of outputs would judge made-up numbers";
  });
  return out;
}

}  // namespace ir
}  // namespace ncv
