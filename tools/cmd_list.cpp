// `ncverify list [--json]`: the kernel registry — each variant's family, what it models, what it
// rewrites, its options, param domain and precision contract.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "kernels/registry.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

int run_list(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const kernels::Variant& v : kernels::registry()) all.push_back(kernels::variant_json(v));
  if (json) {
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  for (const nlohmann::json& v : all) {
    std::cout << v["name"].get<std::string>() << "  [" << v["family"].get<std::string>() << "]";
    if (!v["rewrites"].is_null()) {
      std::cout << "  rewrites " << v["rewrites"].get<std::string>()
                << (v["same_numerics_as_predecessor"].get<bool>() ? " (same numerics)"
                                                                  : " (changes numerics)");
    }
    std::cout << "\n  " << v["summary"].get<std::string>()
              << "\n  models: " << v["models"].get<std::string>() << "\n  params:";
    for (const auto& p : v["params"]) {
      std::cout << " " << p["name"].get<std::string>() << " in [" << p["lo"] << ", " << p["hi"]
                << "]";
      if (p["multiple_of"] != 1) std::cout << " multiple_of " << p["multiple_of"];
      std::cout << ";";
    }
    for (const auto& r : v["relations"]) std::cout << " " << r.get<std::string>() << ";";
    std::cout << "\n  options:";
    for (const auto& o : v["options"]) {
      std::cout << " " << o["name"].get<std::string>() << "=";
      std::string vals;
      for (const auto& x : o["values"]) vals += (vals.empty() ? "" : "|") + x.get<std::string>();
      std::cout << vals << " (default " << o["default"].get<std::string>() << ");";
    }
    std::cout << "\n  contract (defaults): " << v["contract"]["name"].get<std::string>() << "\n";
    for (const auto& n : v["notes"]) std::cout << "  note: " << n.get<std::string>() << "\n";
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

void register_list(CLI::App& app, Action& action) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("list", "List the registered kernel variants");
  cmd->add_flag("--json", *json, "Print a JSON array instead of text");
  cmd->callback([json, &action] { action = [json] { return run_list(*json); }; });
}

}  // namespace ncv::cli
