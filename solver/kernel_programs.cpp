#include "solver/kernel_programs.h"

namespace ncv::solver {

std::vector<LabelledProgram> option_programs(const kernels::Variant& v) {
  std::vector<kernels::Options> combos{{}};
  for (const kernels::OptionSpec& o : v.options) {
    std::vector<kernels::Options> next;
    for (const kernels::Options& c : combos) {
      for (const std::string& value : o.values) {
        kernels::Options e = c;
        e[o.name] = value;
        next.push_back(std::move(e));
      }
    }
    combos = std::move(next);
  }
  std::vector<LabelledProgram> out;
  for (const kernels::Options& c : combos) {
    LabelledProgram lp;
    lp.options = v.resolve(c);
    lp.label = v.name;
    for (const auto& [name, value] : lp.options) lp.label += " " + name + "=" + value;
    lp.program = v.build(lp.options);
    out.push_back(std::move(lp));
  }
  return out;
}

}  // namespace ncv::solver
