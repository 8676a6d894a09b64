#include "tools/kernel_source.h"

#include <algorithm>
#include <filesystem>

#include "kernels/registry.h"
#include "model/ir/builder.h"
#include "model/nkir/parse.h"
#include "properties/bug_catalogue.h"
#include "tools/cli_common.h"
#include "tools/input_file.h"

namespace ncv::cli {

namespace {

bool is_option(const kernels::Variant* v, const std::string& name) {
  return v != nullptr && std::any_of(v->options.begin(), v->options.end(),
                                     [&](const kernels::OptionSpec& o) { return o.name == name; });
}

std::string known_kernels() {
  std::string s;
  for (const kernels::Variant& v : kernels::registry()) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

}  // namespace

void split_assignments(const kernels::Variant* v, const std::vector<std::string>& assignments,
                       kernels::Options& options, ParamValues& params) {
  std::vector<std::string> param_text;
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (eq == std::string::npos || !is_option(v, name)) {
      param_text.push_back(a);
      continue;
    }
    if (options.count(name)) throw UsageError("--param " + name + " is given twice");
    options[name] = a.substr(eq + 1);
  }
  params = parse_param_assignments(param_text);
}

KernelSource load_kernel_source(const std::string& target,
                                const std::vector<std::string>& assignments,
                                const std::string& like) {
  KernelSource src;
  src.label = target;
  // A bug-catalogue entry runs as its base kernel's edited Program (`ncverify bugs` prints
  // `check` commands naming them).
  const props::BugEntry* bug = props::find_bug(target);
  const kernels::Variant* named = kernels::find_variant(bug ? bug->base : target);
  src.from_file = named == nullptr;
  if (src.from_file && !std::filesystem::exists(target)) {
    throw UsageError("'" + target + "' is neither a registered kernel (" + known_kernels() +
                     ") nor a file");
  }
  if (!like.empty()) {
    if (!src.from_file) throw UsageError("--like applies to a .nkir file, not to " + target);
    src.variant = kernels::find_variant(like);
    if (src.variant == nullptr) {
      throw UsageError("--like " + like + ": no such registered kernel (" + known_kernels() + ")");
    }
  } else {
    src.variant = named;
  }

  kernels::Options given;
  split_assignments(src.variant, assignments, given, src.params);
  for (const auto& [name, value] : given) {
    if (bug && bug->options.count(name) && bug->options.at(name) != value) {
      throw UsageError("--param " + name + "=" + value + ": catalogue entry " + target + " fixes " +
                       name + "=" + bug->options.at(name));
    }
  }
  if (bug) given.insert(bug->options.begin(), bug->options.end());
  if (src.variant != nullptr) {
    try {
      src.options = src.variant->resolve(given);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--param: ") + e.what());
    }
  }
  if (src.from_file) {
    src.program = parse_program(read_input_file(target), target);
  } else {
    src.program = bug ? bug->edit(named->build(src.options)) : named->build(src.options);
  }
  if (src.variant != nullptr) {
    // Name the options too, so a misspelt option is not reported as a mere unknown param.
    for (const auto& [name, value] : src.params) {
      if (src.program.find_param(name) != nullptr) continue;
      std::string known;
      for (const Param& p : src.program.params) known += (known.empty() ? "" : ", ") + p.name;
      for (const kernels::OptionSpec& o : src.variant->options) known += ", " + o.name;
      throw UsageError(target + ": unknown --param '" + name + "' (params and options: " + known +
                       ")");
    }
  }
  check_param_names(src.program, src.params, target);
  return src;
}

}  // namespace ncv::cli
