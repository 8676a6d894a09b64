// The power of the property suite, measured (properties/README.md): every bug-catalogue entry must
// be caught at the default budget (RC_PARAMS max_success, default 100), every kernel property must
// catch at least one entry on its own (so none of them is a property that cannot fail), and a
// failing case shrinks to the smallest legal shape and the simplest values.
#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "properties/bug_catalogue.h"
#include "properties/suite_runner.h"

namespace ncv::props {
namespace {

std::vector<std::string> entry_names() {
  std::vector<std::string> names;
  for (const BugEntry& b : bug_catalogue()) names.push_back(b.name);
  return names;
}

class CatalogueEntry : public ::testing::TestWithParam<std::string> {};

// Whether an entry's base kernel is too slow for the property suite (kernels::heavy_check): a
// case costs about a minute and the suite runs dozens per property; bug_catalogue_test checks
// the entry under ci/test --deep.
bool heavy_base(const BugEntry& bug) {
  const kernels::Variant* v = kernels::find_variant(bug.base);
  return v != nullptr && kernels::heavy_check(*v);
}

TEST_P(CatalogueEntry, IsCaughtByThePropertySuite) {
  const BugEntry& bug = *find_bug(GetParam());
  if (heavy_base(bug)) {
    GTEST_SKIP() << kernels::heavy_check_reason(*kernels::find_variant(bug.base))
                 << "; the property suite runs dozens of cases per property";
  }
  const SuiteVerdict v = run_property_suite(broken_kernel(bug), default_suite_params());
  EXPECT_TRUE(v.caught) << bug.name << " survived every property (" << bug.what << ")";
}

INSTANTIATE_TEST_SUITE_P(Bugs, CatalogueEntry, ::testing::ValuesIn(entry_names()),
                         [](const auto& entry) { return entry.param; });

TEST(BugCatalogue, EveryKernelPropertyCatchesSomeEntryOnItsOwn) {
  const SuiteParams params = default_suite_params();
  for (const KernelProperty& prop : kernel_properties()) {
    std::string caught;
    for (const BugEntry& bug : bug_catalogue()) {
      if (heavy_base(bug)) continue;
      if (run_property(broken_kernel(bug), prop, params, /*shrink=*/false).caught) {
        caught = bug.name;
        break;
      }
    }
    EXPECT_FALSE(caught.empty()) << prop.name << " caught no catalogue entry";
  }
}

TEST(BugCatalogue, AFailureShrinksToTheSmallestShapeAndSimplestValues) {
  const BugEntry* bug = find_bug("reciprocal_not_applied");
  ASSERT_NE(bug, nullptr);
  const KernelUnderTest k = broken_kernel(*bug);
  const SuiteVerdict v =
      run_property(k, kernel_properties().front(), default_suite_params(), /*shrink=*/true);
  ASSERT_TRUE(v.caught);
  const KernelCase* c = last_failing_case();
  ASSERT_NE(c, nullptr);
  // The smallest legal tile count and head size, the first option values, the simplest values.
  EXPECT_EQ(c->params.at("seqlen"), 128) << c->describe();
  EXPECT_EQ(c->params.at("d_head"), 1) << c->describe();
  EXPECT_EQ(c->values.kind, ValueKind::uniform) << c->describe();
  EXPECT_EQ(c->values.scale_log2, 0) << c->describe();
  EXPECT_EQ(c->values.seed, 0u) << c->describe();
  EXPECT_EQ(c->options, k.variant->resolve({})) << c->describe();
}

}  // namespace
}  // namespace ncv::props
