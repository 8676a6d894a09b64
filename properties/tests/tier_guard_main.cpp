// `tier_guard LOG`: the ctest test tiers.default_tier_judges_every_kernel_and_entry (label guard),
// which ci/test runs after the default tier: exit 1, listing them, when a registered kernel or a
// bug-catalogue entry is named by no line of LOG (the default tier's record, NCV_EXERCISED_LOG);
// exit 2 when LOG cannot be read.
#include <cstdio>
#include <fstream>

#include "properties/tier_coverage.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tier_guard LOG\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr,
                 "tier_guard: cannot read %s: run the default tier first with NCV_EXERCISED_LOG "
                 "set to it (ci/test does; so does `ctest --preset default`)\n",
                 argv[1]);
    return 2;
  }
  const ncv::props::CoverageGap gap = ncv::props::coverage_gap(ncv::props::read_exercised(in));
  for (const std::string& k : gap.kernels) {
    std::printf("registered kernel judged by no default-tier test: %s\n", k.c_str());
  }
  for (const std::string& e : gap.entries) {
    std::printf("catalogue entry judged by no default-tier test: %s\n", e.c_str());
  }
  if (!gap.empty()) return 1;
  std::printf("every registered kernel and catalogue entry was judged by the default tier\n");
  return 0;
}
