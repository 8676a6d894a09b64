// The one list of registered kernel variants. Every consumer
// (ncverify list/check/run/dump, the property suite, the solver, the report) iterates it.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// All variants in registry order: families in the order of families.h.
const std::vector<Variant>& registry();
// The variant called `name`, or nullptr.
const Variant* find_variant(std::string_view name);

// The variant as one JSON object: metadata, options, the param domain of its default build, and
// the precision contract for its default options.
nlohmann::json variant_json(const Variant& v);

}  // namespace ncv::kernels
