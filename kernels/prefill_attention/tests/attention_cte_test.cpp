// attention_cte (nki-library prefill attention): the registry entry, the source's allocation
// offsets, `check` on trn2 at small, middle and large single-section shapes per option family
// (causal, no mask, sliding window, sink, GQA, LNC2, fp32 inputs, scale 0.125), the refusals, and
// the multi-section path (8192-key sections merged through HBM) in the deep tier
// (DeepAttentionCte).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/prefill_attention/attention_cte_common.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

const Variant& cte() {
  const Variant* v = find_variant("attention_cte");
  EXPECT_NE(v, nullptr);
  return *v;
}

ParamValues shape(int64_t seqlen, int64_t d_head, int64_t bs_kv = 1, int64_t group = 1) {
  return {{"bs_kv", bs_kv}, {"group", group}, {"seqlen", seqlen}, {"d_head", d_head}};
}

// `check` on trn2 (the source is NeuronCore-v3 only) with `cases` seeded cases.
CheckResult check_on_trn2(const Options& given, const ParamValues& params, int cases = 2) {
  const Options o = cte().resolve(given);
  const Program p = cte().build(o);
  CheckOptions co;
  co.cases = cases;
  co.seed = static_cast<uint64_t>(params.at("seqlen"));
  co.run.hw = &hw_config_trn2();
  return check_kernel(cte(), p, o, params, co);
}

void expect_pass(const Options& given, const ParamValues& params, int cases = 2) {
  const CheckResult r = check_on_trn2(given, params, cases);
  std::string label;
  for (const auto& [k, v] : given) label += k + "=" + v + " ";
  for (const auto& [k, v] : params) label += k + "=" + std::to_string(v) + " ";
  EXPECT_TRUE(r.pass) << label << "\n" << r.summary();
}

TEST(AttentionCte, RegisteredWithSourceOptionsAndNotes) {
  const Variant& v = cte();
  EXPECT_EQ(v.family, "prefill_attention");
  EXPECT_NE(v.models.find("attention_cte.py"), std::string::npos);
  EXPECT_NE(v.models.find("d2ad3a5"), std::string::npos);
  EXPECT_GE(v.notes.size(), 10u);
  for (const char* o : {"causal_mask", "sliding_window", "sink", "dtype", "lnc", "scale"}) {
    EXPECT_TRUE(std::any_of(v.options.begin(), v.options.end(), [&](const OptionSpec& s) {
      return s.name == o;
    })) << o;
  }
  // the spec folds the rows into heads, GQA by kv row
  const oracle::AttentionSpec s = v.spec(v.resolve({{"sink", "on"}}), shape(512, 64, 2, 3));
  EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(s.heads, 6);
  EXPECT_EQ(s.kv_heads, 2);
  EXPECT_EQ(s.kv_head_of(2), 0);
  EXPECT_EQ(s.kv_head_of(3), 1);
  EXPECT_EQ(s.sink.size(), 6u);
  EXPECT_EQ(s.mask.kind, oracle::MaskKind::causal);
}

TEST(AttentionCte, RefusesWhatTheSourceAssertsOrTheModelLeavesOut) {
  const Variant& v = cte();
  // SWA implies causal and scale 1.0 (asserted by the source)
  EXPECT_THROW(v.resolve({{"sliding_window", "on"}, {"causal_mask", "false"}}),
               std::invalid_argument);
  EXPECT_THROW(v.resolve({{"sliding_window", "on"}, {"scale", "0.125"}}), std::invalid_argument);
  // one solo option away from its default at a time, with the default mask
  EXPECT_THROW(v.resolve({{"sink", "on"}, {"lnc", "2"}}), std::invalid_argument);
  EXPECT_THROW(v.resolve({{"sink", "on"}, {"causal_mask", "false"}}), std::invalid_argument);
  const Variant& multi = *find_variant("attention_cte_multi_section");
  EXPECT_NO_THROW(multi.resolve({{"causal_mask", "false"}}));
  EXPECT_THROW(multi.resolve({{"sink", "on"}}), std::invalid_argument);
  // W <= 128 takes range_select: below the window param's lower bound
  const Program p = v.build(v.resolve({{"sliding_window", "on"}}));
  const Param* w = p.find_param("window");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->lo, kCteSwaRangeSelectMax + 1);
  // lnc=2 splits whole kv rows: bs_kv even
  const Program lnc2 = v.build(v.resolve({{"lnc", "2"}}));
  EXPECT_EQ(lnc2.find_param("bs_kv")->multiple_of, 2);
}

// The ModularAllocator's bump pointer at seqlen 512 (nK = 1, nV = 4, nL = 1, num_grps = 4),
// d = 64, bf16, no sink: the source's allocation sequence (lines 627-650, 1256-1538).
TEST(AttentionCte, SbufOffsetsFollowTheSourcesAllocator) {
  const Program p = cte().build(cte().resolve({}));
  Env env;
  for (const auto& [k, x] : shape(512, 64)) env.set(intern_symbol(k), x);
  auto offset = [&](const std::string& name) {
    const Tensor& t = p.tensor(*p.find_tensor(name));
    EXPECT_TRUE(t.placement.has_value()) << name;
    return eval(t.placement->byte_offset, env);
  };
  EXPECT_EQ(offset("zero_bias_tensor"), 0);
  EXPECT_EQ(offset("mm1_running_max"), 4);
  EXPECT_EQ(offset("exp_running_sum"), 4 + 16);
  EXPECT_EQ(offset("exp_sum_reciprocal"), 4 + 32);
  EXPECT_EQ(offset("k_sb"), 64);                   // 52 aligned to 32
  EXPECT_EQ(offset("v_sb"), 64 + 1024);            // one [d, 512] bf16 tile
  EXPECT_EQ(offset("q_sb"), 64 + 1024 + 4 * 128);  // four [128, 64] bf16 tiles, aligned
  EXPECT_EQ(offset("flash_attn_correction_factor"), 1600 + 2 * 2048);
  EXPECT_EQ(offset("mm1_masked") - offset("mm2_sb"), 2 * 64 * 4);
  EXPECT_EQ(offset("exp_tp_sb") % 32, 0);
  // right after mm1_affine_select_output's two fp32 [128, 512] slots, aligned to 32
  EXPECT_EQ(offset("exp_tp_sb"), (offset("mm1_affine_select_output") + 2 * 512 * 4 + 31) / 32 * 32);
}

TEST(AttentionCte, CausalAndNoMaskPassAtSeveralSeqlens) {
  // 512: one K tile per row group's section; 1536: a partial large tile; 2560: two large
  // tiles, the second partial.
  for (const char* causal : {"true", "false"}) {
    expect_pass({{"causal_mask", causal}}, shape(512, 32));
    expect_pass({{"causal_mask", causal}}, shape(1536, 64), 1);
    expect_pass({{"causal_mask", causal}}, shape(2560, 64), 1);
  }
}

TEST(AttentionCte, SlidingWindowsPass) {
  for (const auto& [seqlen, window] :
       std::vector<std::pair<int64_t, int64_t>>{{512, 129}, {1024, 200}, {2560, 700}}) {
    ParamValues p = shape(seqlen, 64);
    p["window"] = window;
    expect_pass({{"sliding_window", "on"}}, p, seqlen > 1024 ? 1 : 2);
  }
}

TEST(AttentionCte, SinksGqaAndLnc2Pass) {
  expect_pass({{"sink", "on"}}, shape(512, 32, 1, 2));
  expect_pass({{"sink", "on"}}, shape(1536, 64, 2, 1), 1);
  expect_pass({}, shape(512, 32, 2, 2));  // GQA: two kv rows of two q rows
  expect_pass({{"causal_mask", "false"}}, shape(1024, 64, 2, 2), 1);
  expect_pass({{"lnc", "2"}}, shape(512, 32, 2, 2));
  expect_pass({{"lnc", "2"}}, shape(1536, 64, 2, 1), 1);
}

TEST(AttentionCte, Fp32InputsAndScalePass) {
  expect_pass({{"dtype", "fp32"}}, shape(512, 32));
  expect_pass({{"dtype", "fp32"}}, shape(1536, 64), 1);
  expect_pass({{"scale", "0.125"}}, shape(512, 64));
  expect_pass({{"scale", "0.125"}}, shape(1024, 128), 1);
}

// Sections of 8192 keys merged through the output in HBM: two sections (10752 keys) and three
// (the cap, 24576). A case at 10752 costs tens of seconds: the deep tier.
TEST(DeepAttentionCte, MultiSectionPasses) {
  const Variant* multi = find_variant("attention_cte_multi_section");
  ASSERT_NE(multi, nullptr);
  EXPECT_TRUE(heavy_check(*multi));
  for (const char* causal : {"true", "false"}) {
    const Options o = multi->resolve({{"causal_mask", causal}});
    CheckOptions co;
    co.cases = 1;
    co.run.hw = &hw_config_trn2();
    // the rows whose max rises in a later section: the rescale of the merged partial matters
    co.distributions = {oracle::Distribution::rowmax_across_tiles};
    const CheckResult r =
        check_kernel(*multi, multi->build(o), o, shape(kCteMinMultiSeqlen, 32), co);
    EXPECT_TRUE(r.pass) << "causal=" << causal << "\n" << r.summary();
  }
}

// The default tier's judge of the multi-section variant: the same builder with 2048-key sections
// (seqlen 4608 = 2048 + 2048 + 512: section 0, one middle section and a short last one), causal
// and unmasked, with the rows whose max rises in a later section.
TEST(AttentionCte, MultiSectionScaledToSectionsOf2048KeysPasses) {
  const Variant multi = attention_cte_multi_section_scaled_variant(2048);
  const CteSeqlenRange range = cte_multi_section_seqlens(2048);
  EXPECT_EQ(range.min, 3072);
  EXPECT_EQ(range.max, 4608);
  for (const char* causal : {"true", "false"}) {
    const Options o = multi.resolve({{"causal_mask", causal}});
    const Program p = multi.build(o);
    EXPECT_EQ(p.name, "attention_cte_multi_section");
    CheckOptions co;
    co.cases = 1;
    co.run.hw = &hw_config_trn2();
    co.run.record_trace = false;
    co.distributions = {oracle::Distribution::rowmax_across_tiles};
    const CheckResult r = check_kernel(multi, p, o, shape(range.max, 32), co);
    EXPECT_TRUE(r.pass) << "causal=" << causal << "\n" << r.summary();
  }
  EXPECT_EQ(cte_multi_section_seqlens(kCteSectionLen).min, kCteMinMultiSeqlen);
  EXPECT_EQ(cte_multi_section_seqlens(kCteSectionLen).max, kCteMaxMultiSeqlen);
  EXPECT_THROW(cte_multi_section_seqlens(1024), std::invalid_argument);
}

}  // namespace
}  // namespace ncv::kernels
