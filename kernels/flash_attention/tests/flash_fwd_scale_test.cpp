// flash_fwd's softmax_scale option: the scale the kernel folds into q is the one its spec
// states, and check tells the two offered scales apart.
#include <gtest/gtest.h>

#include <string>

#include "kernels/flash_attention/tests/flash_fwd_testing.h"

namespace ncv::kernels {
namespace {

TEST(FlashFwdScale, PowerOfTwoScalePassesUnderEveryMask) {
  for (const Options& mask :
       {Options{}, Options{{"use_causal_mask", "true"}}, Options{{"sliding_window", "on"}}}) {
    Options o = mask;
    o["softmax_scale"] = "0.125";
    ParamValues pv = flash_shape(1024, 2);
    if (o.count("sliding_window")) pv["window"] = 100;
    EXPECT_DOUBLE_EQ(flash().spec(flash().resolve(o), pv).scale, 0.125);
    const CheckResult r = flash_check(o, pv);
    EXPECT_TRUE(r.pass) << r.summary();
  }
}

// The program built with one scale, checked against the spec of the other: both directions
// fail, so neither scale passes for the other (the option reaches the instruction).
TEST(FlashFwdScale, AKernelWithTheOtherScaleFails) {
  const ParamValues pv = flash_shape(512);
  const Program eighth = flash().build(flash().resolve({{"softmax_scale", "0.125"}}));
  const Program dflt = flash().build(flash().resolve({}));
  EXPECT_FALSE(flash_check({}, pv, &eighth).pass);
  EXPECT_FALSE(flash_check({{"softmax_scale", "0.125"}}, pv, &dflt).pass);
}

TEST(FlashFwdScale, NonDefaultScaleIsOfferedWithTheMasksOnly) {
  for (const char* other : {"training", "logit_bias"}) {
    try {
      flash().resolve({{"softmax_scale", "0.125"}, {other, "true"}});
      FAIL() << "softmax_scale=0.125 with " << other << "=true resolved";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("softmax_scale=0.125"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ncv::kernels
