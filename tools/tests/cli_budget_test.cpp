// `ncverify check K --budget-s B` as a user runs it (default tier): the plain default check of
// every registered kernel whose case is cheap passes (exit 0) within a 1 s budget, and `check
// ENTRY` catches one catalogue entry per base family (exit 1) within 2 s; each keeps the promise
// on its own accounting (cli_budget_support.h). The heavy kernels and every catalogue entry run
// in the deep tier (cli_budget_deep_test.cpp); the planner's handling of a heavy kernel is
// checked in this tier on a fake clock (check/tests/check_plan_test.cpp).
#include "tools/tests/cli_budget_support.h"

namespace ncv::cli_test {
namespace {

class KernelBudget : public testing::TestWithParam<std::string> {};

// Half a second: the check stops at the budget, so the test's cost is the budget it gives.
TEST_P(KernelBudget, DefaultCheckPassesWithinTheBudget) {
  checked_within_budget(GetParam(), 0.5, 0);
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelBudget, testing::ValuesIn(registered_kernels(false)),
                         safe_name);

// One entry per base family that is not heavy: an entry each family's first option set exposes
// at its first shapes, so that the catch does not hang on how many runs a loaded machine fits into
// the budget (the deep tier runs every entry).
const std::vector<std::string>& entry_slice() {
  static const std::vector<std::string> slice = {
      "causal_mask_off_by_one",        // sd_attention
      "causal_mask_fills_zero",        // naive_attention
      "pipelined_exp_after_next_max",  // attn_fwd (the tutorial chain)
      "flash_window_off_by_one",       // flash_fwd
      "tkg_position_off_by_one",       // attention_tkg
      "cte_causal_diagonal_shifted",   // attention_cte
  };
  return slice;
}

class EntryBudget : public testing::TestWithParam<std::string> {};

TEST_P(EntryBudget, DefaultCheckCatchesTheEntryWithinTheBudget) {
  const nlohmann::json j = checked_within_budget(GetParam(), 2, 1);
  if (j.is_object()) {
    EXPECT_FALSE(j.at("pass").get<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, EntryBudget, testing::ValuesIn(entry_slice()), safe_name);

// Every registered kernel is in one of the two tiers, and the default slice has an entry of every
// base family that is not heavy.
TEST(BudgetTiers, EveryKernelAndEveryFamilysEntryIsCheckedInSomeTier) {
  EXPECT_EQ(registered_kernels(false).size() + registered_kernels(true).size(),
            kernels::registry().size());
  EXPECT_FALSE(registered_kernels(false).empty());
  std::set<std::string> families, sliced;
  for (const props::BugEntry& e : props::bug_catalogue()) {
    const kernels::Variant& base = *kernels::find_variant(e.base);
    if (!kernels::heavy_check(base)) families.insert(base.family);
  }
  for (const std::string& e : entry_slice()) {
    ASSERT_NE(props::find_bug(e), nullptr) << e;
    sliced.insert(entry_family(e));
  }
  EXPECT_EQ(sliced, families);
  EXPECT_EQ(catalogue_entries().size(), props::bug_catalogue().size());
}

}  // namespace
}  // namespace ncv::cli_test
