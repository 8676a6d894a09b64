// `ncverify list [--json] [--workloads]`: the kernel registry — each variant's family, what it
// models, what it rewrites, its options, param domain and precision contract; with --workloads the
// timing workloads (workloads/) instead: name, family, source, params and notes.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "kernels/registry.h"
#include "tools/commands.h"
#include "workloads/workload.h"

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
    std::string gens;
    for (const auto& g : v["generations"])
      gens += (gens.empty() ? "" : ", ") + g.get<std::string>();
    std::cout << "  generations: " << gens;
    if (v["generations_restricted"].get<bool>()) {
      std::cout << " only"
                << (v.contains("generations_reason")
                        ? ": " + v["generations_reason"].get<std::string>()
                        : std::string());
    }
    std::cout << "\n";
    if (v["determinism_runs"].get<int>() > 1) {
      std::cout << "  determinism: each check case runs " << v["determinism_runs"].get<int>()
                << " times under different schedules, compared byte for byte\n";
    }
    for (const auto& n : v["notes"]) std::cout << "  note: " << n.get<std::string>() << "\n";
    std::cout << "\n";
  }
  return kExitOk;
}

// The timing workloads: programs without an attention spec that `run`, `bench` and `dump` take
// by name, and `calibrate` compares with measured latencies.
int run_list_workloads(bool json) {
  nlohmann::json all = nlohmann::json::array();
  for (const workloads::Workload& w : workloads::registry()) {
    all.push_back({{"name", w.name},
                   {"family", w.family},
                   {"source", w.source},
                   {"summary", w.summary},
                   {"params", w.params},
                   {"notes", w.notes}});
  }
  if (json) {
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  for (const nlohmann::json& w : all) {
    std::cout << w["name"].get<std::string>() << "  [" << w["family"].get<std::string>() << "]\n  "
              << w["summary"].get<std::string>() << "\n  source: " << w["source"].get<std::string>()
              << "\n  params:";
    for (const auto& p : w["params"]) std::cout << " " << p.get<std::string>();
    std::cout << "\n";
    for (const auto& n : w["notes"]) std::cout << "  note: " << n.get<std::string>() << "\n";
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

void register_list(CLI::App& app, Action& action) {
  auto json = std::make_shared<bool>(false);
  auto workloads = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("list", "List the registered kernel variants");
  cmd->add_flag("--json", *json, "Print a JSON array instead of text");
  cmd->add_flag("--workloads", *workloads,
                "List the timing workloads (run, bench and dump take them by name) instead");
  cmd->callback([json, workloads, &action] {
    action = [json, workloads] { return *workloads ? run_list_workloads(*json) : run_list(*json); };
  });
}

}  // namespace ncv::cli
