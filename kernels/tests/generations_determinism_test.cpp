// Variant::generations (which hardware generations a kernel runs on) and Variant/CheckOptions::
// determinism_runs (each check case under several schedule seeds, compared byte for byte).
#include <gtest/gtest.h>

#include <regex>

#include "check/check.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

// A kernel restricted to trn2 (a copy of sd_attention with the restriction set).
Variant trn2_only() {
  Variant v = *find_variant("sd_attention");
  v.name = "fake_trn2_kernel";
  v.generations = {"trn2"};
  v.generations_reason = "it needs an instruction only NeuronCore-v3 has";
  return v;
}

TEST(VariantGenerations, AnUnrestrictedKernelRunsEverywhere) {
  const Variant& v = *find_variant("sd_attention");
  for (std::string_view g : hw_config_names()) {
    EXPECT_TRUE(supports_generation(v, g)) << g;
    EXPECT_EQ(generation_refusal(v, g), "") << g;
  }
  EXPECT_EQ(default_generation(v), "trn1");
  EXPECT_EQ(generations_text(v), "trn1, trn2, trn3");
}

TEST(VariantGenerations, ARestrictedKernelRefusesOthersWithItsReasonAndDefaultsToItsFirst) {
  const Variant v = trn2_only();
  EXPECT_TRUE(supports_generation(v, "trn2"));
  EXPECT_FALSE(supports_generation(v, "trn1"));
  EXPECT_FALSE(supports_generation(v, "trn3"));
  EXPECT_EQ(generation_refusal(v, "trn2"), "");
  EXPECT_EQ(generation_refusal(v, "trn1"),
            "fake_trn2_kernel runs on trn2 only: it needs an instruction only NeuronCore-v3 has");
  EXPECT_EQ(default_generation(v), "trn2");
  EXPECT_EQ(default_generation(v, "trn2"), "trn2");
  const nlohmann::json j = variant_json(v);
  EXPECT_EQ(j["generations"], nlohmann::json::array({"trn2"}));
  EXPECT_EQ(j["generations_restricted"], true);
  EXPECT_EQ(j["generations_reason"], v.generations_reason);
  EXPECT_EQ(variant_json(*find_variant("sd_attention"))["generations"],
            nlohmann::json::array({"trn1", "trn2", "trn3"}));
}

// sd_attention_batched (one SPMD core per batch entry) with a race added after each output
// store: core 0 also stores its tile into batch 1's rows while core 1 stores its own tile there
// again, in the same lockstep step (each skips the other's loop). In core order core 1 writes
// last and the output is right, so one run passes the oracle; in reverse order core 0's values
// land in batch 1.
Program racy_batched(const Variant& base, const Options& o) {
  const std::string text = print_program(base.build(o));
  const std::regex store(R"(( *)(dma_copy out\[program_id, ([^\n]*))\n)");
  std::smatch m;
  if (!std::regex_search(text, m, store)) throw std::runtime_error("no output store in\n" + text);
  const std::string indent = m[1];
  const std::string other = "dma_copy out[1 - program_id, " + std::string(m[3]);
  const std::string race = indent + "for race0 in sequential_range(1 - program_id) {\n" + indent +
                           "  " + other + "\n" + indent + "}\n" + indent +
                           "for race1 in sequential_range(program_id) {\n" + indent + "  " +
                           std::string(m[2]) + "\n" + indent + "}\n";
  const std::string edited = m.prefix().str() + m[0].str() + race + m.suffix().str();
  return parse_program(edited, "racy_batched.nkir");
}

TEST(CheckDeterminism, ACrossCoreRaceThatOneRunPassesFailsUnderTwoSchedules) {
  const Variant& base = *find_variant("sd_attention_batched");
  const Options o = base.resolve({});
  const Program racy = racy_batched(base, o);
  const ParamValues params{{"bs", 2}, {"seqlen", 128}, {"d_head", 32}};
  CheckOptions co;
  co.cases = 1;
  const CheckResult one = check_kernel(base, racy, o, params, co);
  ASSERT_TRUE(one.pass) << one.summary();
  co.determinism_runs = 2;
  const CheckResult two = check_kernel(base, racy, o, params, co);
  ASSERT_FALSE(two.pass) << two.summary();
  const CaseResult& c = two.cases.front();
  ASSERT_TRUE(c.nondeterministic);
  EXPECT_EQ(c.nondeterministic->run, 1);
  EXPECT_EQ(c.nondeterministic->output, "out");
  EXPECT_EQ(c.determinism_runs, 2);
  EXPECT_NE(two.summary().find("nondeterministic: run 1 (schedule seed 1) differs from run 0 in "
                               "output 'out'"),
            std::string::npos)
      << two.summary();
  const nlohmann::json j = two.to_json();
  EXPECT_EQ(j["cases"][0]["determinism"]["identical"], false);
  EXPECT_EQ(j["cases"][0]["determinism"]["schedule_seed"], 1);
  EXPECT_EQ(j["cases"][0]["determinism"]["output"], "out");
}

TEST(CheckDeterminism, TheUneditedSpmdKernelIsIdenticalUnderTenSchedules) {
  const Variant& v = *find_variant("sd_attention_batched");
  const Options o = v.resolve({});
  const ParamValues params{{"bs", 2}, {"seqlen", 128}, {"d_head", 32}};
  CheckOptions co;
  co.cases = 1;
  co.determinism_runs = 10;
  const CheckResult r = check_kernel(v, v.build(o), o, params, co);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.cases.front().determinism_runs, 10);
  EXPECT_EQ(r.to_json()["cases"][0]["determinism"]["identical"], true);
}

}  // namespace
}  // namespace ncv::kernels
