#include "kernels/registry.h"

#include <algorithm>

#include "kernels/families.h"
#include "model/hw/hw_config.h"
#include "model/ir/expr.h"

namespace ncv::kernels {

const std::vector<Variant>& registry() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v = sd_attention_variants();
    v.push_back(sd_attention_allocated_variant());
    v.push_back(naive_attention_variant());
    for (Variant& a : attn_fwd_variants()) v.push_back(std::move(a));
    v.push_back(flash_fwd_variant());
    v.push_back(pipelined_attention_variant());
    v.push_back(attention_tkg_variant());
    v.push_back(attention_cte_variant());
    v.push_back(attention_cte_multi_section_variant());
    return v;
  }();
  return all;
}

const Variant* find_variant(std::string_view name) {
  for (const Variant& v : registry()) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

nlohmann::json variant_json(const Variant& v) {
  nlohmann::json j;
  j["name"] = v.name;
  j["family"] = v.family;
  j["models"] = v.models;
  j["summary"] = v.summary;
  j["rewrites"] = v.rewrites.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.rewrites);
  if (!v.rewrites.empty()) j["same_numerics_as_predecessor"] = v.same_numerics_as_predecessor;
  if (!v.interface_change.empty()) j["interface_change"] = v.interface_change;
  nlohmann::json opts = nlohmann::json::array();
  for (const OptionSpec& o : v.options) {
    opts.push_back(
        {{"name", o.name}, {"values", o.values}, {"default", o.default_value}, {"help", o.help}});
  }
  j["options"] = opts;
  const Options defaults = v.resolve({});
  const Program p = v.build(defaults);
  nlohmann::json params = nlohmann::json::array();
  for (const Param& prm : p.params) {
    params.push_back(
        {{"name", prm.name}, {"lo", prm.lo}, {"hi", prm.hi}, {"multiple_of", prm.multiple_of}});
  }
  j["params"] = params;
  nlohmann::json rel = nlohmann::json::array();
  for (const Relation& r : p.relations) rel.push_back(r.str());
  j["relations"] = rel;
  j["notes"] = v.notes;
  // Every generation it runs on (all of them when unrestricted), and why when restricted.
  nlohmann::json gens = nlohmann::json::array();
  for (std::string_view g : hw_config_names()) {
    if (supports_generation(v, g)) gens.push_back(std::string(g));
  }
  j["generations"] = gens;
  j["generations_restricted"] = !v.generations.empty();
  if (!v.generations_reason.empty()) j["generations_reason"] = v.generations_reason;
  j["determinism_runs"] = std::max(v.determinism_runs, 1);
  j["contract"] = v.contract(defaults).to_json();
  auto tensor = [](const TensorLayout& t) {
    nlohmann::json axes = nlohmann::json::array();
    for (Axis a : t.axes) axes.push_back(axis_name(a));
    return nlohmann::json{{"tensor", t.tensor}, {"axes", axes}};
  };
  j["layout"] = {{"q", tensor(v.layout.q)},
                 {"k", tensor(v.layout.k)},
                 {"v", tensor(v.layout.v)},
                 {"out", tensor(v.layout.out)}};
  if (v.layout.lse) j["layout"]["lse"] = tensor(*v.layout.lse);
  if (v.layout.bias) j["layout"]["bias"] = tensor(*v.layout.bias);
  return j;
}

}  // namespace ncv::kernels
