// `ncverify check K --budget-s B` (deep tier: instantiations named Deep...): the heavy kernels
// (one case costs most of a minute: a 2 s budget runs exactly one case, and the run says so) and
// every catalogue entry, each caught within 10 s (a heavy base's entry within twenty of its
// declared cases). Their default-tier siblings: cli_budget_test.cpp (the cheap kernels, one entry
// per base family) and check/tests/check_plan_test.cpp (a heavy kernel on a fake clock).
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

INSTANTIATE_TEST_SUITE_P(Deep, HeavyKernelBudget, testing::ValuesIn(registered_kernels(true)),
                         safe_name);

class EveryEntryBudget : public testing::TestWithParam<std::string> {};

// A heavy base's budget has room for its first inputs (a 10 s budget runs exactly one case there,
// and pipelined_sum_slot_shared shows under `peaked`, the second input after
// `rowmax_across_tiles`): twenty declared cases, so that the second input still runs when a case
// is five times slower than declared (296 s for a declared 55 s, measured on the shared 2-core
// machine while other jobs ran; six declared cases were not enough there).
TEST_P(EveryEntryBudget, DefaultCheckCatchesTheEntryWithinTheBudget) {
  const kernels::Variant& base = *kernels::find_variant(props::find_bug(GetParam())->base);
  const double budget = kernels::heavy_check(base) ? 20 * base.check_case_seconds : 10;
  const nlohmann::json j = checked_within_budget(GetParam(), budget, 1);
  if (j.is_object()) {
    EXPECT_FALSE(j.at("pass").get<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(DeepCatalogue, EveryEntryBudget, testing::ValuesIn(catalogue_entries()),
                         safe_name);

}  // namespace
}  // namespace ncv::cli_test
