#include "kernels/option_programs.h"

namespace ncv::kernels {

std::vector<Options> option_combinations(const Variant& v) {
  std::vector<Options> combos{{}};
  for (const OptionSpec& o : v.options) {
    std::vector<Options> next;
    for (const Options& c : combos) {
      for (const std::string& value : o.values) {
        Options e = c;
        e[o.name] = value;
        next.push_back(std::move(e));
      }
    }
    combos = std::move(next);
  }
  // Complete combinations the variant does not offer (Variant::excluded) are left out.
  if (v.excluded) {
    std::erase_if(combos, [&](const Options& c) { return !v.excluded(c).empty(); });
  }
  return combos;
}

std::vector<Options> resolved_combinations(const Variant& v, const Options& fixed) {
  // Names and values checked here, each value as its option spells it (OptionSpec::canonical).
  const Options wanted = v.resolve(fixed);
  std::vector<Options> out;
  for (const Options& c : option_combinations(v)) {
    Options r = v.resolve(c);
    bool agrees = true;
    for (const auto& [name, value] : fixed) agrees = agrees && r.at(name) == wanted.at(name);
    if (agrees) out.push_back(std::move(r));
  }
  return out;
}

std::vector<LabelledProgram> option_programs(const Variant& v, const Options& fixed) {
  std::vector<LabelledProgram> out;
  for (Options& o : resolved_combinations(v, fixed)) {
    LabelledProgram lp;
    lp.options = std::move(o);
    lp.label = v.name;
    for (const auto& [name, value] : lp.options)
      lp.label.append(" ").append(name).append("=").append(value);
    lp.program = v.build(lp.options);
    lp.variant = &v;
    out.push_back(std::move(lp));
  }
  return out;
}

}  // namespace ncv::kernels
