// The coverage guard's logic (tier_guard runs it on the default tier's record): a log naming
// everything leaves no gap; dropping one kernel or one entry is reported, by name.
#include "properties/tier_coverage.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kernels/registry.h"
#include "properties/bug_catalogue.h"

namespace ncv::props {
namespace {

std::set<std::string> everything() {
  std::set<std::string> all;
  for (const kernels::Variant& v : kernels::registry()) all.insert(v.name);
  for (const BugEntry& e : bug_catalogue()) all.insert(e.name);
  return all;
}

TEST(TierCoverage, ALogNamingEveryKernelAndEntryLeavesNoGap) {
  EXPECT_TRUE(coverage_gap(everything()).empty());
}

TEST(TierCoverage, AKernelOrEntryMissingFromTheLogIsNamed) {
  std::set<std::string> names = everything();
  names.erase("flash_fwd");
  names.erase(bug_catalogue().front().name);
  const CoverageGap gap = coverage_gap(names);
  EXPECT_EQ(gap.kernels, std::vector<std::string>{"flash_fwd"});
  EXPECT_EQ(gap.entries, std::vector<std::string>{bug_catalogue().front().name});
}

TEST(TierCoverage, TheLogIsOneNamePerLineWithRepeatsAndBlankLines) {
  std::istringstream log("flash_fwd\n\nsd_attention\nflash_fwd\n");
  EXPECT_EQ(read_exercised(log), (std::set<std::string>{"flash_fwd", "sd_attention"}));
}

}  // namespace
}  // namespace ncv::props
