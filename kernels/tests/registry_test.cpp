// The registry as a whole: names, rewrite chains, metadata, every variant under every option
// combination builds, dumps to .nkir and parses back identically, and passes check at its
// smallest legal shape.
#include "kernels/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "check/check.h"
#include "kernels/option_programs.h"
#include "kernels/tests/registry_slices.h"
#include "model/hw/hw_config.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

// The smallest legal value of every param (lo rounded up to multiple_of).
ParamValues smallest_params(const Program& p) {
  ParamValues pv;
  for (const Param& prm : p.params) {
    const int64_t m = prm.multiple_of;
    pv[prm.name] = (prm.lo + m - 1) / m * m;
  }
  return pv;
}

TEST(Registry, NamesAreUniqueAndRewriteChainsResolve) {
  std::set<std::string> names;
  for (const Variant& v : registry()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name;
    EXPECT_FALSE(v.family.empty()) << v.name;
    EXPECT_FALSE(v.models.empty()) << v.name;
    EXPECT_FALSE(v.summary.empty()) << v.name;
    EXPECT_EQ(find_variant(v.name), &v);
  }
  for (const Variant& v : registry()) {
    if (v.rewrites.empty()) continue;
    const Variant* pred = find_variant(v.rewrites);
    ASSERT_NE(pred, nullptr) << v.name << " rewrites unknown " << v.rewrites;
    EXPECT_EQ(pred->family, v.family) << v.name;
  }
  for (const char* required :
       {"naive_attention", "sd_attention", "sd_attention_step1", "sd_attention_step2",
        "sd_attention_step3", "sd_attention_step4", "sd_attention_step5", "sd_attention_allocated",
        "sd_attention_batched"}) {
    EXPECT_NE(find_variant(required), nullptr) << required;
  }
  EXPECT_EQ(find_variant("no_such_kernel"), nullptr);
}

TEST(Registry, StepsChainInOrderAndStep4ChangesNumerics) {
  for (int s = 1; s <= 5; ++s) {
    const Variant* v = find_variant("sd_attention_step" + std::to_string(s));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->rewrites, s == 1 ? "sd_attention" : "sd_attention_step" + std::to_string(s - 1));
  }
  const Variant* step4 = find_variant("sd_attention_step4");
  EXPECT_FALSE(step4->same_numerics_as_predecessor);
  // The contract says so: the scores are stored in bf16 from step 4 on.
  const Options o = step4->resolve({});
  EXPECT_EQ(step4->contract(o).score_dtype, DType::bf16);
  EXPECT_EQ(find_variant("sd_attention_step3")->contract(o).score_dtype, DType::fp32);
}

TEST(Registry, EveryOptionSetBuildsAndRoundTripsThroughText) {
  for (const Variant& v : registry()) {
    for (const Options& given : option_combinations(v)) {
      const Options o = v.resolve(given);
      const Program p = v.build(o);
      const std::string text = print_program(p);
      const Program back = parse_program(text, v.name + ".nkir");
      EXPECT_TRUE(back == p) << v.name << " does not round-trip with its options";
      EXPECT_EQ(print_program(back), text) << v.name;
      EXPECT_NO_THROW(v.contract(o).validate()) << v.name;
    }
  }
}

// The options line of a dumped program (`ncverify dump`) reads back every value a kernel offers,
// `lnc=2-sprior` and `scale=1/sqrt(128)` included (model/nkir/NKIR.md, the options line).
TEST(Registry, EveryOptionValueRoundTripsThroughTheOptionsLine) {
  Program empty;
  empty.name = "k";
  for (const Variant& v : registry()) {
    for (const OptionSpec& spec : v.options) {
      for (const std::string& value : spec.values) {
        Program p = empty;
        p.build_options = {{spec.name, value}};
        const Program back = parse_program(print_program(p), v.name + ".nkir");
        EXPECT_EQ(back.build_options, p.build_options)
            << v.name << " " << spec.name << "=" << value;
      }
    }
  }
}

TEST(Registry, ResolveRejectsUnknownOptionsAndValues) {
  const Variant& v = *find_variant("sd_attention");
  EXPECT_EQ(v.resolve({}).at("use_causal_mask"), "false");
  EXPECT_THROW(v.resolve({{"use_causal", "true"}}), std::invalid_argument);
  EXPECT_THROW(v.resolve({{"dtype", "fp8"}}), std::invalid_argument);
}

TEST(Registry, JsonDescribesDomainContractAndLayout) {
  const nlohmann::json j = variant_json(*find_variant("sd_attention_step1"));
  EXPECT_EQ(j["rewrites"], "sd_attention");
  EXPECT_EQ(j["layout"]["q"]["tensor"], "q");
  bool has_seqlen = false;
  for (const auto& p : j["params"]) has_seqlen = has_seqlen || p["name"] == "seqlen";
  EXPECT_TRUE(has_seqlen);
  EXPECT_TRUE(j["contract"].contains("p_dtype"));
}

// A variant at its smallest legal shape, at seqlen 1024 and at a multiple of its seqlen step that
// is not a power of two (384, or 3072 for the allocated kernel), default options and causal where
// offered. One kernel per family in the default tier, the others in the deep tier.
class RegistryCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistryCheck, PassesCheckAtSeveralShapes) {
  const Variant& v = *find_variant(GetParam());
  if (heavy_check(v)) GTEST_SKIP() << heavy_check_reason(v) << " (checked by its own tests)";
  const Program base = v.build(v.resolve({}));
  const Param* seq = base.find_param("seqlen");
  ASSERT_NE(seq, nullptr) << v.name;
  std::vector<ParamValues> shapes = {smallest_params(base)};
  for (int64_t s : {int64_t{1024}, seq->multiple_of * 3}) {
    ParamValues pv = smallest_params(base);
    pv["seqlen"] = s;
    if (pv.count("d_head"))
      pv["d_head"] =
          std::clamp<int64_t>(64, base.find_param("d_head")->lo, base.find_param("d_head")->hi);
    if (s <= seq->hi && s != shapes.front()["seqlen"]) shapes.push_back(pv);
  }
  for (const ParamValues& pv : shapes) {
    for (const char* causal : {"false", "true"}) {
      Options given;
      if (std::string(causal) == "true") {
        const auto it = std::find_if(v.options.begin(), v.options.end(), [](const OptionSpec& o) {
          return o.name == "use_causal_mask";
        });
        if (it == v.options.end() ||
            std::find(it->values.begin(), it->values.end(), "true") == it->values.end()) {
          continue;
        }
        given["use_causal_mask"] = "true";
      }
      const Options o = v.resolve(given);
      const Program p = v.build(o);
      CheckOptions co;
      co.cases = 1;
      co.seed = static_cast<uint64_t>(pv.at("seqlen"));
      // The kernel's own generation; a kernel that declares determinism runs is run under
      // schedule seeds 0 and 1 (every pair of cores in both orders at every step).
      co.run.hw = find_hw_config(default_generation(v));
      co.determinism_runs = std::min(v.determinism_runs, 2);
      const CheckResult r = check_kernel(v, p, o, pv, co);
      EXPECT_TRUE(r.pass) << v.name << " causal=" << causal << " seqlen=" << pv.at("seqlen") << "\n"
                          << r.summary();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PerFamily, RegistryCheck,
                         ::testing::ValuesIn(testing::family_representatives()),
                         testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, RegistryCheck, ::testing::ValuesIn(testing::non_representatives()),
                         testing::kernel_param_name);

// The variants whose one check case is too slow for RegistryCheck (Variant::check_case_seconds):
// skipped there by name and reason, checked by their own tests.
TEST(Registry, HeavyVariantsAreCheckedByTheirOwnTests) {
  std::string skipped;
  for (const Variant& v : registry()) {
    if (heavy_check(v)) skipped += "\n" + heavy_check_reason(v);
  }
  if (!skipped.empty()) GTEST_SKIP() << "not in RegistryCheck:" << skipped;
}

}  // namespace
}  // namespace ncv::kernels

namespace ncv::kernels {
namespace {

// The declared domain is honest: at the largest value of every param, under every option set,
// a trace-only run raises no dynamic error (in particular the allocation fits the SBUF/PSUM of
// trn1, or of the kernel's first generation when it does not run on trn1).
// In the default tier the option sets that together take every option value (a family's widest
// kernel has 88 sets, about a minute); in the deep tier every set.
void expect_fits_at_domain_maximum(const Variant& v, const std::vector<Options>& option_sets) {
  for (const Options& given : option_sets) {
    const Options o = v.resolve(given);
    const Program p = v.build(o);
    ParamValues largest;
    for (const Param& prm : p.params)
      largest[prm.name] = prm.hi / prm.multiple_of * prm.multiple_of;
    if (largest.count("bs")) largest["bs"] = 1;  // SPMD instances are independent copies
    // A domain whose params are bounded jointly (attention_tkg: bs * q_head * s_active <= 128)
    // has no point with every param at its maximum; such a kernel's largest shapes per
    // generation are what `frontier` searches (its own tests cover them).
    Env env;
    for (const auto& [name, value] : largest) env.set(name, value);
    const bool legal = std::all_of(p.relations.begin(), p.relations.end(),
                                   [&](const Relation& r) { return r.holds(env); });
    if (!legal) continue;
    RunOptions ro;
    ro.compute_values = false;
    ro.record_trace = false;
    ro.hw = find_hw_config(default_generation(v));
    const RunResult r = run_program(p, largest, random_inputs(p, largest, 1), ro);
    EXPECT_FALSE(r.error.has_value())
        << v.name << " " << nlohmann::json(o).dump() << ": " << (r.error ? r.error->message : "");
  }
}

class RegistryDomain : public ::testing::TestWithParam<std::string> {};

// One kernel per family, at option sets covering every option value.
TEST_P(RegistryDomain, OptionSetsCoveringEveryValueFitAtTheDomainMaximum) {
  const Variant& v = *find_variant(GetParam());
  expect_fits_at_domain_maximum(v, testing::covering_option_sets(v));
}

// Every kernel at every option set (deep tier).
class RegistryDomainAllSets : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistryDomainAllSets, EveryOptionSetFitsAtItsDomainMaximum) {
  const Variant& v = *find_variant(GetParam());
  expect_fits_at_domain_maximum(v, option_combinations(v));
}

INSTANTIATE_TEST_SUITE_P(PerFamily, RegistryDomain,
                         ::testing::ValuesIn(testing::family_representatives()),
                         testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, RegistryDomainAllSets, ::testing::ValuesIn(testing::all_kernels()),
                         testing::kernel_param_name);

}  // namespace
}  // namespace ncv::kernels
