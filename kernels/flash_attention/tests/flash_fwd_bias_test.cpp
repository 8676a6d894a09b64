// flash_fwd's logit_bias option: the bias [1, 1, S, S] is packed from the spec, loaded per
// (q tile, large tile) in kernel_dtype and added to the scores before the masks; check passes at
// several shapes, masks and HBM dtypes with a GQA group of 2 (a new bias per case) and across
// re-materialisation passes, a kernel that ignores the bias fails, and the bias is not offered
// with a sliding window (a source defect).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels/flash_attention/tests/flash_fwd_testing.h"
#include "kernels/option_programs.h"
#include "model/ir/builder.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {
namespace {

// Deep tier (three shapes, every mask and dtype); the default tier's siblings on the same path are
// PassesWithoutMixedPrecisionOverEveryDistribution and PassesAcrossReMaterialisationPasses below.
TEST(DeepFlashFwdBias, PassesCheckAtSeveralShapesMasksAndDtypes) {
  for (int64_t s : {512, 1024, 1536}) {
    for (const char* causal : {"false", "true"}) {
      for (const char* dtype : {"fp32", "bf16"}) {
        const Options o = flash().resolve(
            {{"logit_bias", "true"}, {"use_causal_mask", causal}, {"dtype", dtype}});
        const Program p = flash().build(o);
        EXPECT_EQ(p.tensor(*p.find_tensor("logit_bias")).dtype, option_dtype(o));
        EXPECT_EQ(flash().contract(o).bias_dtype, DType::bf16);  // kernel_dtype
        CheckOptions co;
        co.cases = 1;  // peaked: far from uniform, so a wrong bias moves the output
        co.seed = static_cast<uint64_t>(s);
        const CheckResult r = check_kernel(flash(), p, o, flash_shape(s, 2), co);
        EXPECT_TRUE(r.pass) << "seqlen=" << s << " causal=" << causal << " dtype=" << dtype << "\n"
                            << r.summary();
      }
    }
  }
}

TEST(FlashFwdBias, PassesWithoutMixedPrecisionOverEveryDistribution) {
  // fp32 kernel_dtype: the bias is added unrounded, the contract's bias_dtype is fp32.
  const Options o = flash().resolve(
      {{"logit_bias", "true"}, {"use_causal_mask", "true"}, {"mixed_precision", "false"}});
  EXPECT_EQ(flash().contract(o).bias_dtype, DType::fp32);
  CheckOptions co;
  co.cases = static_cast<int>(check_distributions().size());
  const CheckResult r = check_kernel(flash(), flash().build(o), o, flash_shape(512), co);
  EXPECT_TRUE(r.pass) << r.summary();
}

TEST(FlashFwdBias, PassesAcrossReMaterialisationPasses) {
  // Two q tiles per pass: the bias tile of q tile i0 * T + i1 comes from rows of the whole
  // sequence, not of the pass (seqlen 1024: four passes).
  for (const char* causal : {"false", "true"}) {
    const Options o = flash().resolve(
        {{"logit_bias", "true"}, {"attn_core_tile_size", "2"}, {"use_causal_mask", causal}});
    CheckOptions co;
    co.cases = 1;
    const CheckResult r = check_kernel(flash(), flash().build(o), o, flash_shape(1024), co);
    EXPECT_TRUE(r.pass) << "causal=" << causal << "\n" << r.summary();
  }
}

TEST(FlashFwdBias, PackInputsPlacesTheBiasAsOneOneSqSk) {
  const Options o = flash().resolve({{"logit_bias", "true"}, {"dtype", "bf16"}});
  const Program p = flash().build(o);
  const ParamValues pv = flash_shape(512);
  const oracle::AttentionSpec spec = flash().spec(o, pv);
  ASSERT_EQ(spec.bias.size(), 512u * 512u);
  const auto in = oracle::generate_inputs(spec, oracle::Distribution::normal, 1);
  const auto packed = pack_inputs(flash().layout, p, pv, spec, in);
  const HostTensor& t = packed.at("logit_bias");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 1, 512, 512}));
  for (int64_t i : {0, 1, 130, 511}) {
    for (int64_t j : {0, 7, 300, 511}) {
      EXPECT_EQ(
          t.get(i * 512 + j),
          quantize(DType::bf16, static_cast<float>(spec.bias[static_cast<size_t>(i * 512 + j)])));
    }
  }
  // A spec without a bias cannot feed a kernel that takes one.
  oracle::AttentionSpec none = spec;
  none.bias.clear();
  EXPECT_THROW(pack_inputs(flash().layout, p, pv, none, in), std::invalid_argument);
}

TEST(FlashFwdBias, AKernelIgnoringTheBiasFails) {
  // The program built without the bias, checked as the kernel with the bias: the same loops
  // and roundings, only the add missing.
  for (const char* causal : {"false", "true"}) {
    const Options with = flash().resolve({{"logit_bias", "true"}, {"use_causal_mask", causal}});
    Options without = with;
    without["logit_bias"] = "false";
    const Program p = flash().build(without);
    CheckOptions co;
    co.cases = 1;
    const CheckResult r = check_kernel(flash(), p, with, flash_shape(512), co);
    EXPECT_FALSE(r.pass) << r.summary();
    EXPECT_GT(r.worst_normalized, 10.0) << r.summary();
  }
}

TEST(FlashFwdBias, NotOfferedWithASlidingWindow) {
  EXPECT_THROW(flash().resolve({{"logit_bias", "true"}, {"sliding_window", "on"}}),
               std::invalid_argument);
  const std::vector<Options> sets = option_combinations(flash());
  EXPECT_TRUE(std::none_of(sets.begin(), sets.end(), [](const Options& c) {
    return c.at("logit_bias") == "true" && c.at("sliding_window") == "on";
  }));
  EXPECT_TRUE(std::any_of(sets.begin(), sets.end(), [](const Options& c) {
    return c.at("logit_bias") == "true" && c.at("use_causal_mask") == "true";
  }));
}

}  // namespace
}  // namespace ncv::kernels
