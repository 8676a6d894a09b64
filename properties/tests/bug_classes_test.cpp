// Every catalogue entry has a bug class, and the default tier's slice of the catalogue holds one
// cheap entry of each class.
#include "properties/bug_classes.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"

namespace ncv::props {
namespace {

TEST(BugClasses, EveryCatalogueEntryHasOne) {
  for (const BugEntry& e : bug_catalogue()) {
    EXPECT_NO_THROW(bug_class(e)) << e.name;
  }
}

TEST(BugClasses, AnUnclassifiedEntryIsAnErrorNamingIt) {
  const BugEntry unknown{"no_such_entry", "", "sd_attention", {}, nullptr};
  try {
    bug_class(unknown);
    FAIL() << "an unclassified entry was given a class";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_entry"), std::string::npos) << e.what();
  }
}

TEST(BugClasses, TheDefaultSliceHasOneCheapEntryOfEveryClass) {
  const std::vector<const BugEntry*> slice = one_entry_per_class();
  ASSERT_EQ(slice.size(), all_bug_classes().size());
  for (size_t i = 0; i < slice.size(); ++i) {
    EXPECT_EQ(bug_class(*slice[i]), all_bug_classes()[i]) << slice[i]->name;
    EXPECT_FALSE(kernels::heavy_check(*kernels::find_variant(slice[i]->base))) << slice[i]->name;
  }
}

}  // namespace
}  // namespace ncv::props
