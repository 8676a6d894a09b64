// Properties 1-4 of issue 6 for every registered kernel: one RapidCheck property per (kernel,
// property), so a failure names both and ctest can run them in parallel. The bodies live in
// properties/kernel_properties.cpp (shared with the bug catalogue and `ncverify bugs`).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "properties/kernel_properties.h"

namespace ncv::props {
namespace {

const KernelUnderTest& kernel(const char* name) {
  static std::map<std::string, KernelUnderTest> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, registered_kernel(name)).first;
  return it->second;
}

#define NCV_KERNEL_PROPS(Kernel)                                      \
  RC_GTEST_PROP(Kernel, MatchesOracle, ()) {                          \
    prop_matches_oracle(kernel(#Kernel), default_budget());           \
  }                                                                   \
  RC_GTEST_PROP(Kernel, VScalingIsExact, ()) {                        \
    prop_v_scaling_is_exact(kernel(#Kernel), default_budget());       \
  }                                                                   \
  RC_GTEST_PROP(Kernel, KvPermutationInvariant, ()) {                 \
    prop_kv_permutation_invariant(kernel(#Kernel), default_budget()); \
  }                                                                   \
  RC_GTEST_PROP(Kernel, InsideConvexHull, ()) {                       \
    prop_inside_convex_hull(kernel(#Kernel), default_budget());       \
  }                                                                   \
  RC_GTEST_PROP(Kernel, ZeroQGivesMean, ()) {                         \
    prop_zero_q_gives_mean(kernel(#Kernel), default_budget());        \
  }                                                                   \
  RC_GTEST_PROP(Kernel, Deterministic, ()) {                          \
    prop_deterministic(kernel(#Kernel), default_budget());            \
  }                                                                   \
  RC_GTEST_PROP(Kernel, MatchesPredecessor, ()) {                     \
    prop_matches_predecessor(kernel(#Kernel), default_budget());      \
  }

NCV_KERNEL_PROPS(naive_attention)
NCV_KERNEL_PROPS(sd_attention)
NCV_KERNEL_PROPS(sd_attention_step1)
NCV_KERNEL_PROPS(sd_attention_step2)
NCV_KERNEL_PROPS(sd_attention_step3)
NCV_KERNEL_PROPS(sd_attention_step4)
NCV_KERNEL_PROPS(sd_attention_step5)
NCV_KERNEL_PROPS(sd_attention_batched)
NCV_KERNEL_PROPS(sd_attention_allocated)

}  // namespace
}  // namespace ncv::props
