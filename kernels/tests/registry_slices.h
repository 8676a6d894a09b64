// How registry-wide tests split between the test tiers (README.md "Tests"): the default tier runs
// a test on one kernel of each family, the deep tier on every other kernel, so that each family's
// code path meets the test on every change and the whole registry does nightly. Value-parameterised
// tests instantiate `PerFamily` with family_representatives() and `Deep` with the rest.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/option_programs.h"
#include "kernels/registry.h"

namespace ncv::kernels::testing {

// The first kernel of each family in registry order that is not heavy (heavy_check), or the
// family's first kernel when every one is heavy.
inline std::vector<std::string> family_representatives() {
  std::vector<std::string> out;
  std::set<std::string> families;
  for (const Variant& v : registry()) {
    if (families.count(v.family) != 0 || heavy_check(v)) continue;
    families.insert(v.family);
    out.push_back(v.name);
  }
  for (const Variant& v : registry()) {
    if (families.insert(v.family).second) out.push_back(v.name);
  }
  return out;
}

// Every registered kernel.
inline std::vector<std::string> all_kernels() {
  std::vector<std::string> out;
  for (const Variant& v : registry()) out.push_back(v.name);
  return out;
}

// Every registered kernel that is not a family representative.
inline std::vector<std::string> non_representatives() {
  const std::vector<std::string> reps = family_representatives();
  const std::set<std::string> chosen(reps.begin(), reps.end());
  std::vector<std::string> out;
  for (const Variant& v : registry()) {
    if (chosen.count(v.name) == 0) out.push_back(v.name);
  }
  return out;
}

// Option sets of v that together take every value of every option at least once (greedy, in
// option_combinations order): the default tier's slice of a test over every option set.
inline std::vector<Options> covering_option_sets(const Variant& v) {
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<Options> out;
  for (const Options& given : option_combinations(v)) {
    const Options o = v.resolve(given);
    bool adds = false;
    for (const auto& kv : o) adds = seen.insert(kv).second || adds;
    if (adds) out.push_back(o);
  }
  return out;
}

// The programs a registry-wide test runs on v: every option set's in the deep tier (deep = true),
// the covering option sets' (every value of every option at least once) in the default tier.
inline std::vector<LabelledProgram> tier_programs(const Variant& v, bool deep) {
  if (deep) return option_programs(v);
  std::vector<LabelledProgram> out;
  for (const Options& o : covering_option_sets(v)) {
    // o is complete (resolved): exactly one combination agrees with it
    for (LabelledProgram& lp : option_programs(v, o)) out.push_back(std::move(lp));
  }
  return out;
}

// Whether the running test is a deep-tier one (its full name starts with "Deep").
inline bool in_deep_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info != nullptr && std::string(info->test_suite_name()).rfind("Deep", 0) == 0;
}

// A gtest name suffix: the kernel's name as given.
inline std::string kernel_param_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

}  // namespace ncv::kernels::testing
