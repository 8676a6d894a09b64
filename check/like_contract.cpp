#include "check/like_contract.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "kernels/option_programs.h"
#include "oracle/precision_contract.h"

namespace ncv::kernels {

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

std::string name_of(DType t) {
  return std::string(dtype_name(t));
}

// The HBM tensor named `name` (after the layout's names were bound), or null.
const Tensor* hbm_tensor(const Program& p, const std::string& name) {
  for (const Tensor& t : p.tensors) {
    if (t.name == name && t.memory == Memory::HBM) return &t;
  }
  return nullptr;
}

// The contract's stages that round to a dtype, by the name PrecisionContract gives them. Left
// out: the bias (rounded only when the spec draws one, which the program's own bias input then
// states) and RoPE's product (a stage only with RoPE roles).
std::vector<std::pair<std::string, DType>> rounding_stages(const oracle::PrecisionContract& c) {
  std::vector<std::pair<std::string, DType>> s = {
      {"q_dtype", c.q_dtype},     {"k_dtype", c.k_dtype},         {"v_dtype", c.v_dtype},
      {"qk_accum", c.qk_accum},   {"score_dtype", c.score_dtype}, {"max_dtype", c.max_dtype},
      {"exp_dtype", c.exp_dtype}, {"p_dtype", c.p_dtype},         {"sum_dtype", c.sum_dtype},
      {"pv_accum", c.pv_accum},   {"norm_dtype", c.norm_dtype},   {"out_dtype", c.out_dtype}};
  if (c.online_tile > 0) s.emplace_back("online_partial_dtype", c.online_partial_dtype);
  return s;
}

std::string options_text(const Options& o) {
  std::vector<std::string> w;
  for (const auto& [name, value] : o) w.push_back(name + "=" + value);
  return joined(w, " ");
}

// The option set of `candidates` that differs from `base` in option `name` only, or null.
const Options* neighbour(const std::vector<Options>& candidates, const Options& base,
                         const std::string& name) {
  for (const Options& c : candidates) {
    bool same = c.at(name) != base.at(name);
    for (const auto& [n, value] : base) same = same && (n == name || c.at(n) == value);
    if (same) return &c;
  }
  return nullptr;
}

}  // namespace

std::string_view option_source_name(OptionSource s) {
  switch (s) {
    case OptionSource::given:
      return "given";
    case OptionSource::recorded:
      return "recorded";
    case OptionSource::derived:
      return "derived";
    case OptionSource::fixed:
      return "fixed";
    case OptionSource::defaulted:
      return "default";
  }
  return "";
}

std::string LikeContract::text() const {
  std::string s = "contract " + kernel + " with " + options_text(options) + "\n";
  for (const LikeOption& o : each)
    s += "  option " + o.name + " = " + o.value + ": " + o.why + "\n";
  return s;
}

nlohmann::json LikeContract::to_json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["options"] = options;
  nlohmann::json sources = nlohmann::json::array();
  for (const LikeOption& o : each) {
    sources.push_back({{"name", o.name},
                       {"value", o.value},
                       {"from", std::string(option_source_name(o.source))},
                       {"why", o.why}});
  }
  j["sources"] = std::move(sources);
  return j;
}

std::vector<std::string> like_contradictions(const Variant& v, const Program& program,
                                             const Options& options, const ParamValues& params) {
  std::vector<std::string> why;
  ParamValues at = params;
  for (const Param& p : program.params) at.emplace(p.name, p.lo);
  // (1) The interface: the spec's dtypes against the tensors the layout names.
  const Layout layout = v.layout_for(options);
  try {
    const oracle::AttentionSpec spec = v.spec(options, at);
    const Tensor* k = hbm_tensor(program, layout.k.tensor);
    if (k != nullptr && k->dtype != spec.input_dtype) {
      why.push_back("the spec's input dtype is " + name_of(spec.input_dtype) + ", the program's " +
                    layout.k.tensor + " is " + name_of(k->dtype));
    }
    const Tensor* out = hbm_tensor(program, layout.out.tensor);
    if (out != nullptr && out->dtype != spec.output_dtype) {
      why.push_back("the spec's output dtype is " + name_of(spec.output_dtype) +
                    ", the program's " + layout.out.tensor + " is " + name_of(out->dtype));
    }
  } catch (const std::exception&) {
    // A spec these params cannot state: the contract's own output stage below still compares.
  }
  // (2) The roundings: each dtype the contract rounds to is one the program stores.
  std::set<DType> held;
  for (const Tensor& t : program.tensors) held.insert(t.dtype);
  std::map<DType, std::vector<std::string>> missing;
  for (const auto& [stage, dtype] : rounding_stages(v.contract(options))) {
    if (dtype != DType::fp32 && !held.count(dtype)) missing[dtype].push_back(stage);
  }
  for (const auto& [dtype, stages] : missing) {
    why.push_back("its contract rounds " + joined(stages) + " to " + name_of(dtype) +
                  ", and the program holds no " + name_of(dtype) + " value");
  }
  return why;
}

LikeContract like_contract(const Variant& v, const Program& program, const Options& given,
                           const Options& recorded, const ParamValues& params,
                           const std::string& label) {
  // The options fixed by the file and --param, each as its option spells it (names and values
  // checked as Variant::resolve does; the combination is checked against the program below).
  Options fixed;
  for (const Options* from : {&recorded, &given}) {
    for (const auto& [name, value] : *from) {
      const std::string& wanted = name;  // clang-14 cannot capture a structured binding
      const auto spec = std::find_if(v.options.begin(), v.options.end(),
                                     [&](const OptionSpec& o) { return o.name == wanted; });
      if (spec == v.options.end() || !v.offers(name, value)) {
        v.resolve({{name, value}});  // throws, naming v's options or the option's values
        throw std::invalid_argument(v.name + ": option " + name + "=" + value + " is not offered");
      }
      fixed[name] = spec->canonical(value);
    }
  }
  std::vector<Options> offered;
  for (Options& c : option_combinations(v)) {
    Options r = v.resolve(c);
    bool agrees = true;
    for (const auto& [name, value] : fixed) agrees = agrees && r.at(name) == value;
    if (agrees) offered.push_back(std::move(r));
  }
  std::vector<Options> fits;
  for (const Options& c : offered) {
    if (like_contradictions(v, program, c, params).empty()) fits.push_back(c);
  }
  const auto pass_hint = [&](const std::string& name) {
    return "pass it with --param " + name + "=VALUE" +
           (recorded.empty() ? "" : " (or record it in the file's options line)");
  };
  const auto default_text = [&]() {
    std::vector<std::string> w;
    for (const OptionSpec& o : v.options) {
      if (!fixed.count(o.name)) w.push_back(o.name + "=" + o.default_value);
    }
    return w.empty() ? std::string() : " and " + v.name + "'s defaults " + joined(w, " ");
  };
  if (fits.empty()) {
    // Name what is wrong with the options the user would otherwise get.
    Options base = fixed;
    std::vector<std::string> why;
    try {
      why = like_contradictions(v, program, v.resolve(base), params);
    } catch (const std::invalid_argument&) {
    }
    std::string given_text = options_text(fixed);
    throw std::invalid_argument(
        label + ": no option set of " + v.name + " fits the program" +
        (given_text.empty() ? "" : " with " + given_text) +
        (why.empty() ? "" : ": with those" + default_text() + ", " + joined(why, "; ")) +
        ". Give the options the program was built for with --param NAME=VALUE (" + v.name +
        "'s options: " +
        [&] {
          std::vector<std::string> w;
          for (const OptionSpec& o : v.options)
            w.push_back(o.name + " in " + joined(o.values, "|"));
          return joined(w);
        }() +
        "), or trace it with the dtypes they state (--input NAME=DTYPE)");
  }
  LikeContract lc;
  lc.kernel = v.name;
  Options chosen;
  for (const OptionSpec& o : v.options) {
    LikeOption lo;
    lo.name = o.name;
    if (fixed.count(o.name)) {
      lo.value = fixed.at(o.name);
      const bool from_file = recorded.count(o.name) && !given.count(o.name);
      lo.source = from_file ? OptionSource::recorded : OptionSource::given;
      lo.why = from_file ? "recorded by " + label : "given (--param " + o.name + ")";
      chosen[o.name] = lo.value;
      lc.each.push_back(std::move(lo));
      continue;
    }
    std::set<std::string> fit_values, offered_values;
    for (const Options& c : fits) fit_values.insert(c.at(o.name));
    for (const Options& c : offered) offered_values.insert(c.at(o.name));
    if (fit_values.size() == 1) {
      lo.value = *fit_values.begin();
      if (offered_values.size() == 1) {
        lo.source = o.default_value == lo.value ? OptionSource::defaulted : OptionSource::fixed;
        lo.why = o.default_value == lo.value
                     ? v.name + "'s default, not given (the only value " + v.name +
                           " offers with the others)"
                     : "the only value " + v.name + " offers with the others, not given";
      } else {
        lo.source = OptionSource::derived;
        // Why the other values do not fit: the first fitting set with this option changed.
        std::string reason;
        for (const Options& c : fits) {
          if (const Options* other = neighbour(offered, c, o.name)) {
            reason = o.name + "=" + other->at(o.name) + ": " +
                     joined(like_contradictions(v, program, *other, params), "; ");
            break;
          }
        }
        lo.why =
            "derived from the program" + (reason.empty() ? "" : " (" + reason + ")") +
            (lo.value == o.default_value ? "" : "; " + v.name + "'s default is " + o.default_value);
      }
    } else if (fit_values.count(o.default_value)) {
      lo.value = o.default_value;
      lo.source = OptionSource::defaulted;
      lo.why = v.name + "'s default, not given (the program fits " +
               joined({fit_values.begin(), fit_values.end()}, " and ") + "; " + pass_hint(o.name) +
               ")";
    } else {
      std::string reason;
      for (const Options& c : offered) {
        if (c.at(o.name) == o.default_value) {
          reason = joined(like_contradictions(v, program, c, params), "; ");
          break;
        }
      }
      throw std::invalid_argument(
          label + ": option " + o.name + " is not given and " + v.name + "'s default " + o.name +
          "=" + o.default_value + " contradicts the program" +
          (reason.empty() ? "" : " (" + reason + ")") + "; the program fits " + o.name + "=" +
          joined({fit_values.begin(), fit_values.end()}, " or ") + ": " + pass_hint(o.name));
    }
    chosen[o.name] = lo.value;
    lc.each.push_back(std::move(lo));
  }
  lc.options = v.resolve(chosen);
  if (std::find(fits.begin(), fits.end(), lc.options) == fits.end()) {
    // Each option on its own fits, the combination does not (or is not offered).
    std::vector<std::string> why;
    try {
      why = like_contradictions(v, program, lc.options, params);
    } catch (const std::invalid_argument&) {
    }
    std::vector<std::string> sets;
    for (const Options& c : fits) sets.push_back(options_text(c));
    throw std::invalid_argument(
        label + ": the options " + options_text(lc.options) + " do not fit the program together" +
        (why.empty() ? "" : " (" + joined(why, "; ") + ")") +
        "; give the ones it was built for with --param NAME=VALUE (" + std::to_string(fits.size()) +
        " option sets of " + v.name + " fit, the first " + sets.front() + ")");
  }
  return lc;
}

}  // namespace ncv::kernels
