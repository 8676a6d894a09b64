// Shared by cli_budget_test.cpp (default tier) and cli_budget_deep_test.cpp (deep tier): runs
// `ncverify check NAME --budget-s B --json` as a user does and checks the budget promise on the
// run's own accounting (JSON `seconds` within 1.2 B plus its longest case, `max_case_s`).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "properties/bug_catalogue.h"
#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
inline std::string safe_name(const testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// Runs `check NAME --budget-s B --json` and checks the promise on its own accounting.
inline nlohmann::json checked_within_budget(const std::string& name, double budget, int exit_code) {
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_cli({"check", name, "--budget-s", std::to_string(budget), "--json"});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, exit_code) << describe(r);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << describe(r);
    return j;
  }
  const double seconds = j.at("seconds"), longest = j.at("max_case_s");
  EXPECT_LE(seconds, 1.2 * budget + longest) << name << ": " << seconds << " s for a budget of "
                                             << budget << " s, longest case " << longest << " s";
  EXPECT_GE(j.at("cases").get<int>(), 1) << "a check that ran nothing";
  EXPECT_FALSE(j.at("runs").empty());
  for (const auto& k : j.at("skipped")) EXPECT_FALSE(k.at("reason").get<std::string>().empty());
  std::printf(
      "[budget] %-34s budget %.0f s: %.2f s reported (longest case %.2f s), %.2f s wall, "
      "%zu runs, %zu skipped\n",
      name.c_str(), budget, seconds, longest, wall, j.at("runs").size(), j.at("skipped").size());
  return j;
}

// The registered kernels whose one check case is cheap (heavy = false) or costs most of a minute
// (heavy = true: kernels::heavy_check).
inline std::vector<std::string> registered_kernels(bool heavy) {
  std::vector<std::string> out;
  for (const kernels::Variant& v : kernels::registry()) {
    if (kernels::heavy_check(v) == heavy) out.push_back(v.name);
  }
  return out;
}

// Every catalogue entry.
inline std::vector<std::string> catalogue_entries() {
  std::vector<std::string> out;
  for (const props::BugEntry& e : props::bug_catalogue()) out.push_back(e.name);
  return out;
}

// The base family of a catalogue entry (the catalogue's sections).
inline std::string entry_family(const std::string& entry) {
  return kernels::find_variant(props::find_bug(entry)->base)->family;
}

}  // namespace ncv::cli_test
