// A rewrite checked under the kernel it replaces (`check FILE --like K`, `adopt K FILE --like K`)
// may round where any member of K's family rounds: family_contracts. Without them a correct
// family member fails under its predecessor's contract; with them every member passes.
#include <gtest/gtest.h>

#include "check/check.h"
#include "kernels/registry.h"

namespace ncv::kernels {
namespace {

CheckResult check_as(const char* member, const char* like, bool with_family, int cases) {
  const Variant& m = *find_variant(member);
  const Variant& k = *find_variant(like);
  const Options o = k.resolve({});
  CheckOptions co;
  co.cases = cases;
  if (with_family) co.also_accept = family_contracts(k, o);
  return check_kernel(k, m.build(m.resolve(o)), o, {{"seqlen", 512}, {"d_head", 64}}, co);
}

TEST(FamilyContracts, EveryMemberPassesUnderTheTutorialWithThemAndStep4NeedsThem) {
  for (const char* step : {"sd_attention_step1", "sd_attention_step2", "sd_attention_step3",
                           "sd_attention_step4", "sd_attention_step5"}) {
    EXPECT_TRUE(check_as(step, "sd_attention", true, 4).pass) << step;
  }
  // Step 4 keeps P in another precision than the tutorial: under the tutorial's contract alone
  // its correct output is far outside the case bound.
  EXPECT_FALSE(check_as("sd_attention_step4", "sd_attention", false, 4).pass);
}

}  // namespace
}  // namespace ncv::kernels
