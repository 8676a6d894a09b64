// `ncverify check K --budget-s B` (deep tier, label deep): the heavy kernels (one case costs most
// of a minute: a 2 s budget runs exactly one case, and the run says so) and every catalogue
// entry, each caught within 10 s. Their default-tier siblings: cli_budget_test.cpp (the cheap
// kernels, one entry per base family) and kernels/tests/check_plan_test.cpp (a heavy kernel on a
// fake clock).
#include "tools/tests/cli_budget_support.h"

namespace ncv::cli_test {
namespace {

class HeavyKernelBudget : public testing::TestWithParam<std::string> {};

TEST_P(HeavyKernelBudget, DefaultCheckRunsOneCaseAndPasses) {
  const nlohmann::json j = checked_within_budget(GetParam(), 2, 0);
  if (j.is_object()) {
    EXPECT_NE(j.value("note", "").find("ran exactly one case"), std::string::npos) << j.dump(2);
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, HeavyKernelBudget, testing::ValuesIn(registered_kernels(true)),
                         safe_name);

class EveryEntryBudget : public testing::TestWithParam<std::string> {};

TEST_P(EveryEntryBudget, DefaultCheckCatchesTheEntryWithinTheBudget) {
  const nlohmann::json j = checked_within_budget(GetParam(), 10, 1);
  if (j.is_object()) {
    EXPECT_FALSE(j.at("pass").get<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, EveryEntryBudget, testing::ValuesIn(catalogue_entries()),
                         safe_name);

}  // namespace
}  // namespace ncv::cli_test
