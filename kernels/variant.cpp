#include "kernels/variant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/hw/hw_config.h"

namespace ncv::kernels {

std::string heavy_check_reason(const Variant& v) {
  return v.name + ": one check case takes ~" +
         std::to_string(static_cast<int64_t>(std::lround(v.check_case_seconds))) +
         " s at its smallest shape (over " +
         std::to_string(static_cast<int64_t>(kHeavyCheckCaseSeconds)) +
         " s): run `ncverify check " + v.name + "` or its own test";
}

bool supports_generation(const Variant& v, std::string_view gen) {
  return v.generations.empty() ||
         std::find(v.generations.begin(), v.generations.end(), gen) != v.generations.end();
}

std::string generations_text(const Variant& v) {
  std::string s;
  if (v.generations.empty()) {
    for (std::string_view g : hw_config_names()) s += (s.empty() ? "" : ", ") + std::string(g);
  } else {
    for (const std::string& g : v.generations) s += (s.empty() ? "" : ", ") + g;
  }
  return s;
}

std::string generation_refusal(const Variant& v, std::string_view gen) {
  if (supports_generation(v, gen)) return "";
  return v.name + " runs on " + generations_text(v) + " only" +
         (v.generations_reason.empty() ? "" : ": " + v.generations_reason);
}

std::string default_generation(const Variant& v, std::string_view fallback) {
  if (supports_generation(v, fallback)) return std::string(fallback);
  return v.generations.front();
}

std::string OptionSpec::canonical(const std::string& value) const {
  const bool flag = values.size() == 2 && std::count(values.begin(), values.end(), "false") == 1 &&
                    std::count(values.begin(), values.end(), "true") == 1;
  if (!flag) return value;
  if (value == "false" || value == "False" || value == "0") return "false";
  if (value == "true" || value == "True" || value == "1") return "true";
  return value;
}

Options Variant::resolve(const Options& given) const {
  Options out;
  for (const OptionSpec& o : options) out[o.name] = o.default_value;
  for (const auto& [key, given_value] : given) {
    // clang-14 (the fuzz build) cannot capture a structured binding in a lambda.
    const std::string& wanted = key;
    const auto opt = std::find_if(options.begin(), options.end(),
                                  [&](const OptionSpec& o) { return o.name == wanted; });
    if (opt == options.end()) {
      std::string known;
      for (const OptionSpec& o : options) known += (known.empty() ? "" : ", ") + o.name;
      throw std::invalid_argument(name + " has no option '" + key +
                                  "' (options: " + (known.empty() ? "none" : known) + ")");
    }
    const std::string value = opt->canonical(given_value);
    if (std::find(opt->values.begin(), opt->values.end(), value) == opt->values.end()) {
      std::string allowed;
      for (const std::string& v : opt->values) allowed += (allowed.empty() ? "" : ", ") + v;
      throw std::invalid_argument(name + ": option " + key + "=" + value + " is not one of " +
                                  allowed);
    }
    out[key] = value;
  }
  if (excluded) {
    if (const std::string why = excluded(out); !why.empty()) {
      throw std::invalid_argument(name + ": this combination of options is not offered: " + why);
    }
  }
  return out;
}

Layout Variant::layout_for(const Options& o) const {
  Layout l = layout;
  if (adapt_layout) adapt_layout(o, l);
  return l;
}

bool Variant::offers(const std::string& option, const std::string& value) const {
  for (const OptionSpec& o : options) {
    if (o.name == option)
      return std::find(o.values.begin(), o.values.end(), o.canonical(value)) != o.values.end();
  }
  return false;
}

bool option_flag(const Options& o, const std::string& name) {
  const auto it = o.find(name);
  if (it == o.end()) throw std::invalid_argument("option '" + name + "' is not set");
  return it->second == "true";
}

DType option_dtype(const Options& o) {
  const auto it = o.find("dtype");
  if (it == o.end()) throw std::invalid_argument("option 'dtype' is not set");
  const auto dt = parse_dtype(it->second);
  if (!dt) throw std::invalid_argument("option dtype=" + it->second + " is not a dtype");
  return *dt;
}

int64_t param_value(const ParamValues& params, const std::string& name) {
  const auto it = params.find(name);
  if (it == params.end()) throw std::invalid_argument("param '" + name + "' is not given");
  return it->second;
}

}  // namespace ncv::kernels
