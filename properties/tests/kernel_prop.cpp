// Properties 1-4 (properties/README.md) for every registered kernel: one RapidCheck property per
// (kernel, property), so a failure names both and ctest runs them in parallel. The bodies live in
// properties/kernel_properties.cpp (shared with the bug catalogue and `ncverify bugs`).
//
// NCV_KERNEL_PROP is RC_GTEST_PROP (a TEST running rc::detail::checkTestable and failing with
// RapidCheck's message, RC_PARAMS honoured, the reproduce line printed at exit) with one change:
// the number of cases per property is set per kernel unless RC_PARAMS sets max_success. A case
// of sd_attention_allocated (seqlen >= 1024, d_head 128) costs about a second, a case of the
// others a few tens of milliseconds, and `ctest -L property` must stay under 5 minutes on 2
// cores; `ci/test --deep` multiplies them (NCV_PROPERTY_DEPTH) for all but the heavy kernels
// (kernels::heavy_check), whose properties are deep-tier tests of one case each.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kernels/registry.h"
#include "properties/kernel_properties.h"

namespace ncv::props {
namespace {

const KernelUnderTest& kernel(const std::string& name) {
  static std::map<std::string, KernelUnderTest> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, registered_kernel(name)).first;
  return it->second;
}

// Cases per property in the deep tier's unit (NCV_PROPERTY_DEPTH multiplies it). The tutorial
// chain from v3 on runs at seqlen >= 512 with d_head 128 (about 0.2 s a case).
int deep_unit_cases(const std::string& name) {
  if (name == "sd_attention_allocated") return 8;
  if (name == "sd_attention_batched") return 25;
  if (name.rfind("attn_fwd_v", 0) == 0 && name != "attn_fwd_v1" && name != "attn_fwd_v2") return 5;
  // seqlen >= 512 (its large tile) and up to 8 heads: a case costs up to a few seconds.
  if (name == "flash_fwd") return 20;
  // attention_tkg: up to 128 heads x 8 tokens per batch, and its flash-attention option runs at
  // seqlen 16384 or 32768 (the only shapes it has).
  if (name == "attention_tkg") return 3;
  // seqlen 512 or 1024 (multiples of 512) with up to 4 rows: up to a few seconds a case.
  if (name == "attention_cte") return 10;
  return 40;
}

// Cases per property in the default tier: half the deep unit (at least 2), so that the seven
// properties of ~30 kernels fit the default tier's five minutes (README.md "Tests"); the deep
// tier runs NCV_PROPERTY_DEPTH times the unit.
int default_cases(const std::string& name) {
  // The two with the costliest cases (a second or more: seqlen >= 1024 at d_head 128, and up to
  // 8 heads at seqlen >= 512) get a quarter.
  if (name == "sd_attention_allocated" || name == "flash_fwd") {
    return std::max(2, deep_unit_cases(name) / 4);
  }
  return std::max(2, deep_unit_cases(name) / 2);
}

// Whether some value of every param the two programs share is legal in both (the tutorial's v2
// runs at seqlen 128 only, its rewrite v3 from 512: no shape to compare them at).
bool domains_meet(const Program& a, const Program& b) {
  for (const Param& pa : a.params) {
    const Param* pb = b.find_param(pa.name);
    if (pb == nullptr) continue;
    bool meet = false;
    for (int64_t x = pa.lo; x <= pa.hi && !meet; x += pa.multiple_of) {
      meet = x >= pb->lo && x <= pb->hi && x % pb->multiple_of == 0;
    }
    if (!meet) return false;
  }
  return true;
}

void check_kernel_property(const std::string& name,
                           void (*body)(const KernelUnderTest&, const Budget&)) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata meta;
  meta.id = std::string(info->test_suite_name()) + "/" + info->name();
  meta.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  // NCV_PROPERTY_DEPTH=N (ci/test --deep sets 10): N times each kernel's deep unit, over
  // RC_PARAMS' max_success (which the deep tier raises for the cheap instruction and oracle
  // properties). Without it, RC_PARAMS' max_success when given, else the default cases.
  const char* env = std::getenv("RC_PARAMS");
  const char* depth_env = std::getenv("NCV_PROPERTY_DEPTH");
  const int depth = depth_env ? std::max(1, std::atoi(depth_env)) : 0;
  if (depth > 0) {
    params.maxSuccess = depth * deep_unit_cases(name);
  } else if (!(env && std::strstr(env, "max_success="))) {
    params.maxSuccess = default_cases(name);
  }
  const KernelUnderTest& k = kernel(name);
  // A heavy kernel's case costs about a minute (pipelined_attention at seqlen 16384): its
  // properties are deep-tier tests (NCV_DEEP_KERNEL_PROPS) of one case each, whatever RC_PARAMS
  // asks.
  if (kernels::heavy_check(*k.variant)) params.maxSuccess = 1;
  if (body == prop_matches_predecessor && k.variant->rewrites.empty()) {
    GTEST_SKIP() << name << " is an original kernel: it has no predecessor to compare with";
  }
  if (body == prop_matches_predecessor) {
    const kernels::Variant* pred = kernels::find_variant(k.variant->rewrites);
    if (pred &&
        !domains_meet(k.variant->build(k.variant->resolve({})), pred->build(pred->resolve({})))) {
      GTEST_SKIP() << name << " and its predecessor " << pred->name
                   << " have no shape in common: nothing to compare";
    }
  }
  const Budget budget = default_budget();
  const auto result = rc::detail::checkTestable([&] { body(k, budget); }, meta, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str();
  }
}

#define NCV_KERNEL_PROP(Suite, Kernel, Name, body) \
  TEST(Suite, Name) {                              \
    check_kernel_property(#Kernel, body);          \
  }

#define NCV_KERNEL_PROPS_IN(Suite, Kernel)                                              \
  NCV_KERNEL_PROP(Suite, Kernel, MatchesOracle, prop_matches_oracle)                    \
  NCV_KERNEL_PROP(Suite, Kernel, VScalingIsExact, prop_v_scaling_is_exact)              \
  NCV_KERNEL_PROP(Suite, Kernel, KvPermutationInvariant, prop_kv_permutation_invariant) \
  NCV_KERNEL_PROP(Suite, Kernel, InsideConvexHull, prop_inside_convex_hull)             \
  NCV_KERNEL_PROP(Suite, Kernel, ZeroQGivesMean, prop_zero_q_gives_mean)                \
  NCV_KERNEL_PROP(Suite, Kernel, Deterministic, prop_deterministic)                     \
  NCV_KERNEL_PROP(Suite, Kernel, MatchesPredecessor, prop_matches_predecessor)

// The default tier: suites named after the kernel.
#define NCV_KERNEL_PROPS(Kernel) NCV_KERNEL_PROPS_IN(Kernel, Kernel)
// The deep tier (heavy kernels): suites Deep_<kernel>.
#define NCV_DEEP_KERNEL_PROPS(Kernel) NCV_KERNEL_PROPS_IN(Deep_##Kernel, Kernel)

NCV_KERNEL_PROPS(naive_attention)
NCV_KERNEL_PROPS(sd_attention)
NCV_KERNEL_PROPS(sd_attention_step1)
NCV_KERNEL_PROPS(sd_attention_step2)
NCV_KERNEL_PROPS(sd_attention_step3)
NCV_KERNEL_PROPS(sd_attention_step4)
NCV_KERNEL_PROPS(sd_attention_step5)
NCV_KERNEL_PROPS(sd_attention_batched)
NCV_KERNEL_PROPS(sd_attention_allocated)
NCV_KERNEL_PROPS(attn_fwd_v1)
NCV_KERNEL_PROPS(attn_fwd_v2)
NCV_KERNEL_PROPS(attn_fwd_v3)
NCV_KERNEL_PROPS(attn_fwd_v4)
NCV_KERNEL_PROPS(attn_fwd_v5)
NCV_KERNEL_PROPS(attn_fwd_v6)
NCV_KERNEL_PROPS(attn_fwd_v7)
NCV_KERNEL_PROPS(attn_fwd_v8)
NCV_KERNEL_PROPS(attn_fwd_v8a)
NCV_KERNEL_PROPS(attn_fwd_v9)
NCV_KERNEL_PROPS(attn_fwd_v10)
NCV_KERNEL_PROPS(attn_fwd_v11)
NCV_KERNEL_PROPS(flash_fwd)
NCV_DEEP_KERNEL_PROPS(pipelined_attention)
NCV_KERNEL_PROPS(attention_tkg)
NCV_KERNEL_PROPS(attention_cte)
NCV_DEEP_KERNEL_PROPS(attention_cte_multi_section)

}  // namespace
}  // namespace ncv::props
