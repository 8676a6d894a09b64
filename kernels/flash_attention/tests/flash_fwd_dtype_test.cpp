// flash_fwd's dtype option (q.dtype): bf16 HBM tensors with mixed precision pass check at
// several shapes and masks (the lse too, in training mode); bf16 without mixed precision is not
// offered (the source's bf16 statistics turn nl.fp32.min into -inf and a masked tile into NaN):
// resolve rejects it, the option sets leave it out, build refuses it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels/flash_attention/tests/flash_fwd_testing.h"
#include "kernels/option_programs.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

TEST(FlashFwdDtype, Bf16HbmTensorsPassCheckAtSeveralShapes) {
  for (int64_t s : {512, 1536}) {
    for (const char* causal : {"false", "true"}) {
      const Options o =
          flash().resolve({{"dtype", "bf16"}, {"use_causal_mask", causal}, {"training", "true"}});
      const Program p = flash().build(o);
      EXPECT_EQ(p.tensor(*p.find_tensor("q")).dtype, DType::bf16);
      EXPECT_EQ(p.tensor(*p.find_tensor("o")).dtype, DType::bf16);
      CheckOptions co;
      co.cases = 1;  // the most bug-exposing distribution (peaked); the lse tests run more
      co.seed = static_cast<uint64_t>(s);
      const CheckResult r = check_kernel(flash(), p, o, flash_shape(s, 2), co);
      EXPECT_TRUE(r.pass) << "seqlen=" << s << " causal=" << causal << "\n" << r.summary();
      EXPECT_EQ(flash().spec(o, flash_shape(s, 2)).input_dtype, DType::bf16);
    }
  }
}

TEST(FlashFwdDtype, Bf16WithSlidingWindowPasses) {
  const Options o = flash().resolve({{"dtype", "bf16"}, {"sliding_window", "on"}});
  ParamValues pv = flash_shape(1536, 1);
  pv["window"] = 200;  // rows masked out of whole large tiles: m = fp32.min there
  CheckOptions co;
  co.cases = 2;
  const CheckResult r = check_kernel(flash(), flash().build(o), o, pv, co);
  EXPECT_TRUE(r.pass) << r.summary();
}

TEST(FlashFwdDtype, Bf16WithoutMixedPrecisionIsNotOffered) {
  EXPECT_THROW(flash().resolve({{"dtype", "bf16"}, {"mixed_precision", "false"}}),
               std::invalid_argument);
  Options raw = flash().resolve({});
  raw["dtype"] = "bf16";
  raw["mixed_precision"] = "false";
  EXPECT_THROW(flash().build(raw), BuildError);
  const std::vector<Options> sets = option_combinations(flash());
  EXPECT_TRUE(std::none_of(sets.begin(), sets.end(), [](const Options& c) {
    return c.at("dtype") == "bf16" && c.at("mixed_precision") == "false";
  }));
  EXPECT_TRUE(std::any_of(sets.begin(), sets.end(), [](const Options& c) {
    return c.at("dtype") == "bf16" && c.at("mixed_precision") == "true";
  }));
  EXPECT_TRUE(std::any_of(sets.begin(), sets.end(), [](const Options& c) {
    return c.at("dtype") == "fp32" && c.at("mixed_precision") == "false";
  }));
}

}  // namespace
}  // namespace ncv::kernels
