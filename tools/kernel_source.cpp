#include "tools/kernel_source.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "frontend/nki_trace.h"
#include "kernels/registry.h"
#include "model/ir/builder.h"
#include "model/nkir/parse.h"
#include "properties/bug_catalogue.h"
#include "tools/cli_common.h"
#include "tools/generations.h"
#include "tools/input_file.h"
#include "workloads/workload.h"

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

// A parsed program holds about 1.2 KiB per statement line (measured: a 60 MiB .nkir of 2.6
// million memsets took 3.2 GB resident in `ncverify dump`); the estimate is refused before
// parsing when it exceeds the command's memory budget, so that a small kernel unrolled into a
// huge program (or a huge file) ends with this message instead of exhausting the machine.
constexpr int64_t kParsedBytesPerLine = 1536;

Program parse_program_within_budget(const std::string& text, const std::string& label) {
  const int64_t lines = std::count(text.begin(), text.end(), '\n') + 1;
  const int64_t need_mib = (lines * kParsedBytesPerLine) >> 20;
  if (need_mib > command_memory_mib()) {
    throw UsageError(label + ": a program of " + std::to_string(lines) + " lines needs about " +
                     std::to_string(need_mib) + " MiB to parse, more than the memory budget of " +
                     std::to_string(command_memory_mib()) + " MiB (--memory-budget-mib)");
  }
  return parse_program(text, label);
}

// Whether two spellings of option `name` of `v` mean the same value (OptionSpec::canonical).
bool same_value(const kernels::Variant* v, const std::string& name, const std::string& a,
                const std::string& b) {
  if (v != nullptr) {
    for (const kernels::OptionSpec& o : v->options) {
      if (o.name == name) return o.canonical(a) == o.canonical(b);
    }
  }
  return a == b;
}

bool is_integer(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// FILE.py:FUNCTION: trace it; --param names that are options of the --like kernel go to the
// tracer leniently (the kernel may not have that argument), the rest must name a keyword
// argument or a shape of the kernel. Integer values of shape params fix them, and the traced
// program then declares them with that single value.
// With `route_options` false (--contract-option gives the options) every --param goes to the
// tracer.
void load_traced(KernelSource& src, const std::string& target,
                 const std::vector<std::string>& assignments, const NkiFlags& nki,
                 kernels::Options& given, bool route_options) {
  frontend::TraceRequest req;
  req.target = target;
  req.inputs = nki.inputs;
  req.shapes = nki.shapes;
  req.grid = nki.grid;
  // The generation the command runs on, so that the kernel's get_nc_version() branches take
  // that generation's path: --gen when it names one; else a --like kernel's default generation
  // when it is not trn1 (a kernel for trn2 and trn3 only). Otherwise the tracer uses the
  // kernel's nki.jit(platform_target=), else trn1. (`--gen all` traces once, for that default.)
  if (!nki.gen.empty() && nki.gen != "all") {
    req.generation = generation_for(src.variant, nki.gen).name;
  } else if (src.variant != nullptr) {
    const std::string& gen = generation_for(src.variant, "").name;
    if (gen != kDefaultGeneration) req.generation = gen;
  }
  std::vector<std::pair<std::string, std::string>> values;
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw UsageError("--param " + a + ": expected NAME=VALUE");
    const std::string name = a.substr(0, eq);
    if (route_options && is_option(src.variant, name)) {
      if (given.count(name)) throw UsageError("--param " + name + " is given twice");
      given[name] = a.substr(eq + 1);
      req.options.push_back(a);
    } else {
      req.params.push_back(a);
      values.emplace_back(name, a.substr(eq + 1));
    }
  }
  req.memory_mib = command_memory_mib();
  req.max_program_bytes = max_input_bytes();
  std::string text;
  try {
    text = frontend::trace_nki(req);
  } catch (const frontend::FrontendError& e) {
    if (e.kind == frontend::FrontendErrorKind::tamper) throw TamperError(e.what());
    if (e.kind == frontend::FrontendErrorKind::limit) throw TraceLimitError(e.what());
    throw UsageError(e.what());
  }
  src.header = frontend::header_comments(text);
  src.program = parse_program_within_budget(text, target);
  for (const auto& [name, value] : values) {
    if (is_integer(value) && src.program.find_param(name) != nullptr) {
      src.params[name] = std::stoll(value);
    }
  }
  // A dim the kernel asserts to one value (`assert d_head == 128`) is declared [v, v]; it needs
  // no --param.
  for (const Param& p : src.program.params) {
    if (p.lo == p.hi && !src.params.count(p.name)) src.params[p.name] = p.lo;
  }
}

// A traced kernel's HBM tensors carry its own argument names (q_ref, ...); --like KERNEL's layout
// names q, k, v and out. Missing layout names are bound by position: the first three inputs in
// argument order are q, k, v and the first output is out.
void bind_layout_names(Program& p, const kernels::Layout& layout) {
  auto has = [&](const std::string& n) {
    return std::any_of(p.tensors.begin(), p.tensors.end(),
                       [&](const Tensor& t) { return t.name == n; });
  };
  // An on-chip buffer that happens to carry a layout name gives it up to the HBM tensor.
  auto free_name = [&](const std::string& n) {
    for (Tensor& t : p.tensors) {
      if (t.name != n || t.memory == Memory::HBM) continue;
      std::string other = n + "_buf";
      while (has(other)) other += "_";
      t.name = other;
    }
    return !has(n);
  };
  std::vector<Tensor*> ins, outs;
  for (Tensor& t : p.tensors) {
    if (t.kind == TensorKind::Input) ins.push_back(&t);
    if (t.kind == TensorKind::Output) outs.push_back(&t);
  }
  const std::string in_names[] = {layout.q.tensor, layout.k.tensor, layout.v.tensor};
  for (size_t k = 0; k < 3 && k < ins.size(); ++k) {
    if (free_name(in_names[k])) ins[k]->name = in_names[k];
  }
  if (!outs.empty() && free_name(layout.out.tensor)) outs[0]->name = layout.out.tensor;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// A .nkir file --like `v`: the build options the file records become `given` (the options the
// borrowed spec and contract are made for), after checking that `v` offers each and that no
// --param contradicts one. A file that records none keeps --param's options, unchecked.
void take_recorded_options(KernelSource& src, LikeRole role, kernels::Options& given) {
  const kernels::Variant& v = *src.variant;
  const std::map<std::string, std::string>& recorded = src.program.build_options;
  if (recorded.empty()) {
    // Only a kernel with options can be checked with the wrong ones.
    if (!v.options.empty()) src.options_from = OptionsFrom::unchecked;
    return;
  }
  std::vector<std::string> names;
  for (const kernels::OptionSpec& o : v.options) names.push_back(o.name);
  for (const auto& [name, value] : recorded) {
    const std::string& wanted = name;  // clang-14 cannot capture a structured binding
    const auto spec = std::find_if(v.options.begin(), v.options.end(),
                                   [&](const kernels::OptionSpec& o) { return o.name == wanted; });
    if (spec == v.options.end()) {
      if (role == LikeRole::contract_only) continue;
      throw UsageError(src.label + ": the program was built with option " + name + "=" + value +
                       ", which " + v.name + " does not have (its options: " +
                       (names.empty() ? "none" : joined(names)) + ")");
    }
    if (!v.offers(name, value)) {
      throw UsageError(src.label + ": the program was built with option " + name + "=" + value +
                       ", which " + v.name + " does not offer (" + name + " is one of " +
                       joined(spec->values) + ")");
    }
    const auto g = given.find(name);
    if (g != given.end() && spec->canonical(g->second) != spec->canonical(value)) {
      throw UsageError(src.label + ": option " + name + "=" + g->second +
                       " contradicts the program, which was built with " + name + "=" + value);
    }
    given[name] = value;
  }
  src.options_from = OptionsFrom::file;
}

// A file checked --like its variant (role twin): the options it is judged under, each given,
// recorded, derived from the program or taken from the variant's defaults and said so
// (check/like_contract.h). A given or default value that contradicts the program is a usage error.
void take_like_contract(KernelSource& src, const kernels::Options& given,
                        const kernels::Options& recorded) {
  try {
    src.like_contract =
        kernels::like_contract(*src.variant, src.program, given, recorded, src.params, src.label);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--like ") + src.variant->name + ": " + e.what());
  }
  src.options = src.like_contract->options;
}

}  // namespace

std::string options_origin_note(const KernelSource& src) {
  std::string opts;
  for (const auto& [name, value] : src.options)
    opts += (opts.empty() ? "" : " ") + name + "=" + value;
  // A --like check: each option's source, after the line on the file's options line.
  const std::string contract =
      src.like_contract ? src.like_contract->text().substr(
                              0, src.like_contract->text().size() - 1)  // no final newline
                        : "";
  const auto with_contract = [&](const std::string& note) {
    if (contract.empty()) return note;
    return note.empty() ? contract : note + "\n" + contract;
  };
  switch (src.options_from) {
    case OptionsFrom::arguments:
      return with_contract("");
    case OptionsFrom::file: {
      std::vector<std::string> unrecorded;
      for (const auto& [name, value] : src.options) {
        if (!src.program.build_options.count(name)) unrecorded.push_back(name);
      }
      if (unrecorded.empty()) {
        return with_contract("options " + opts + " (recorded by " + src.label + ")");
      }
      return with_contract("options " + opts + " (recorded by " + src.label + " except " +
                           joined(unrecorded) + ", which the lines below say where from)");
    }
    case OptionsFrom::unchecked:
      return with_contract("options " + opts + " (" + src.label +
                           " has no options line, so nothing says it was built with them: "
                           "the lines below say where each came from)");
    case OptionsFrom::contract_options:
      return "contract " + src.variant->name + " with options " + opts +
             " (each given by --contract-option)";
  }
  return "";
}

void NkiFlags::add_options(CLI::App* cmd) {
  cmd->add_option("--input", inputs,
                  "FILE.py kernels: NAME=DTYPE or NAME=DTYPE[d0,d1,...] for a tensor argument "
                  "(fp32 and symbolic shape by default); repeat")
      ->expected(1)
      ->take_all();
  cmd->add_option("--shape", shapes,
                  "FILE.py kernels: NAME=a,b,... names (or sizes) for a tensor argument's dims")
      ->expected(1)
      ->take_all();
  cmd->add_option("--grid", grid,
                  "FILE.py kernels: the SPMD launch grid kernel[...] (N, a shape name, or A,B)");
}

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

kernels::Options contract_options_given(const kernels::Variant& v,
                                        const std::vector<std::string>& assignments) {
  std::vector<std::string> names;
  for (const kernels::OptionSpec& o : v.options) names.push_back(o.name);
  kernels::Options out;
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos)
      throw UsageError("--contract-option " + a + ": expected NAME=VALUE");
    const std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    const auto spec = std::find_if(v.options.begin(), v.options.end(),
                                   [&](const kernels::OptionSpec& o) { return o.name == name; });
    if (spec == v.options.end()) {
      throw UsageError("--contract-option " + a + ": " + v.name + " has no option " + name +
                       " (its options: " + (names.empty() ? "none" : joined(names)) + ")");
    }
    const auto only = v.contract_only_values.find(name);
    const bool contract_only =
        only != v.contract_only_values.end() &&
        std::find(only->second.begin(), only->second.end(), value) != only->second.end();
    if (!v.offers(name, value) && !contract_only) {
      const std::string also =
          only == v.contract_only_values.end() ? "" : "; its contract also " + joined(only->second);
      throw UsageError("--contract-option " + a + ": " + v.name + " does not offer " + name + "=" +
                       value + " (" + name + " is one of " + joined(spec->values) + also + ")");
    }
    if (out.count(name)) throw UsageError("--contract-option " + name + " is given twice");
    out[name] = value;
  }
  std::vector<std::string> missing;
  for (const std::string& n : names) {
    if (!out.count(n)) missing.push_back(n);
  }
  if (!missing.empty()) {
    throw UsageError("--contract-option: " + v.name + "'s option" +
                     (missing.size() > 1 ? "s " : " ") + joined(missing) +
                     (missing.size() > 1 ? " are" : " is") +
                     " not given (with --contract-option every option of the contract's kernel "
                     "is given, none taken from its defaults)");
  }
  return out;
}

bool is_file_target(const std::string& target) {
  return kernels::find_variant(target) == nullptr && props::find_bug(target) == nullptr &&
         workloads::find_workload(target) == nullptr;
}

KernelSource load_kernel_source(const std::string& target,
                                const std::vector<std::string>& assignments,
                                const std::string& like, const NkiFlags& nki, LikeRole role,
                                const std::vector<std::string>* contract_options) {
  KernelSource src;
  src.label = target;
  if (contract_options != nullptr && role != LikeRole::contract_only) {
    throw UsageError("--contract-option gives the options of a --contract kernel");
  }
  const bool traced = frontend::is_python_target(target);
  if (!traced && !nki.empty()) {
    throw UsageError(
        "--input, --shape and --grid apply to an NKI kernel FILE.py:FUNCTION, not "
        "to " +
        target);
  }
  if (traced) {
    src.from_file = true;
    if (!like.empty()) {
      src.variant = kernels::find_variant(like);
      if (src.variant == nullptr) {
        throw UsageError("--like " + like + ": no such registered kernel (" + known_kernels() +
                         ")");
      }
    }
    kernels::Options given;
    load_traced(src, target, assignments, nki, given, contract_options == nullptr);
    if (src.variant != nullptr) {
      bind_layout_names(src.program, src.variant->layout);
      if (contract_options != nullptr) {
        src.options = contract_options_given(*src.variant, *contract_options);
        src.options_from = OptionsFrom::contract_options;
      } else if (role == LikeRole::twin) {
        take_like_contract(src, given, {});
      } else {
        try {
          src.options = src.variant->resolve(given);
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string("--param: ") + e.what());
        }
      }
    }
    check_param_names(src.program, src.params, target);
    return src;
  }
  // A timing workload (workloads/) is a program without an attention spec: like a .nkir file
  // without --like, it can be run, benched and dumped, not checked against the oracle.
  if (const workloads::Workload* w = workloads::find_workload(target)) {
    if (!like.empty()) {
      throw UsageError(
          "--like applies to a .nkir file or an NKI kernel, not to the timing "
          "workload " +
          target);
    }
    src.from_file = true;
    src.program = w->build({});
    kernels::Options none;
    split_assignments(nullptr, assignments, none, src.params);
    check_param_names(src.program, src.params, target);
    return src;
  }
  // A bug-catalogue entry runs as its base kernel's edited Program (`ncverify bugs` prints
  // `check` commands naming them).
  const props::BugEntry* bug = props::find_bug(target);
  const kernels::Variant* named = kernels::find_variant(bug ? bug->base : target);
  src.from_file = named == nullptr;
  if (src.from_file && !std::filesystem::exists(target)) {
    throw UsageError("'" + target + "' is neither a registered kernel (" + known_kernels() +
                     "), a timing workload (ncverify list --workloads) nor a file");
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

  if (contract_options != nullptr && (!src.from_file || src.variant == nullptr)) {
    throw UsageError(
        "--contract-option applies to a .nkir file or an NKI kernel checked with "
        "--contract");
  }
  kernels::Options given;
  split_assignments(contract_options != nullptr ? nullptr : src.variant, assignments, given,
                    src.params);
  for (const auto& [name, value] : given) {
    if (bug && bug->options.count(name) && !same_value(named, name, bug->options.at(name), value)) {
      throw UsageError("--param " + name + "=" + value + ": catalogue entry " + target + " fixes " +
                       name + "=" + bug->options.at(name));
    }
  }
  if (bug) given.insert(bug->options.begin(), bug->options.end());
  const kernels::Options param_options = given;
  if (src.from_file) {
    src.program = parse_program_within_budget(read_input_file(target), target);
    if (src.variant != nullptr && contract_options == nullptr) {
      take_recorded_options(src, role, given);
    }
  }
  src.pinned_options = given;
  if (contract_options != nullptr) {
    src.options = contract_options_given(*src.variant, *contract_options);
    src.options_from = OptionsFrom::contract_options;
  } else if (src.from_file && src.variant != nullptr && role == LikeRole::twin) {
    kernels::Options recorded;
    for (const auto& [name, value] : src.program.build_options) {
      if (is_option(src.variant, name)) recorded[name] = value;
    }
    take_like_contract(src, param_options, recorded);
  } else if (src.variant != nullptr) {
    try {
      src.options = src.variant->resolve(given);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--param: ") + e.what());
    }
  }
  if (!src.from_file) {
    src.program = bug ? bug->edit(named->build(src.options)) : named->build(src.options);
    src.program.build_options = src.options;  // what `dump` records in the options line
    src.rebuild = [bug, named](const kernels::Options& o) {
      return bug ? bug->edit(named->build(o)) : named->build(o);
    };
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
