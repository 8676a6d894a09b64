// flash_fwd's re-materialisation passes (attn_core_tile_size): with 2 q tiles per pass the
// modelled lengths run several passes, each with its own accumulators and its own K/V loads, the
// lse spanning them; check passes under every mask, and a store that forgets the pass offset
// fails.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernels/flash_attention/tests/flash_fwd_testing.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

const Options kTwoTilesPerPass = {{"attn_core_tile_size", "2"}};

// The trip count of the sequential pass loop i0 at `pv`.
int64_t passes(const Program& p, const ParamValues& pv) {
  Env env;
  for (const auto& [name, value] : pv) env.set(name, value);
  int64_t trips = -1;
  std::function<void(const std::vector<Stmt>&)> walk = [&](const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (const auto* loop = std::get_if<Loop>(&s.node)) {
        if (loop->var == "i0") trips = eval(loop->stop, env) - eval(loop->start, env);
        walk(loop->body);
      }
    }
  };
  walk(p.body);
  return trips;
}

TEST(FlashFwdRemat, PassCountIsCeilOfQTilesOverTheCoreTileSize) {
  const Program two = flash().build(flash().resolve(kTwoTilesPerPass));
  EXPECT_EQ(passes(two, flash_shape(512)), 2);   // 4 q tiles
  EXPECT_EQ(passes(two, flash_shape(1536)), 6);  // 12 q tiles
  EXPECT_EQ(passes(two, flash_shape(2560)), 10);
  const Program dflt = flash().build(flash().resolve({}));
  EXPECT_EQ(passes(dflt, flash_shape(4096)), 1);  // 32 q tiles <= 256
}

TEST(FlashFwdRemat, SeveralPassesPassCheckUnderEveryMaskWithTheLse) {
  for (int64_t s : {1536}) {  // one shape: 12 q tiles, six passes of two
    for (const Options& mask :
         {Options{}, Options{{"use_causal_mask", "true"}}, Options{{"sliding_window", "on"}}}) {
      Options o = mask;
      o.insert(kTwoTilesPerPass.begin(), kTwoTilesPerPass.end());
      o["training"] = "true";
      ParamValues pv = flash_shape(s, 2);
      if (o.count("sliding_window")) pv["window"] = 300;
      const CheckResult r = flash_check(o, pv, nullptr, 1);
      EXPECT_TRUE(r.pass) << "seqlen=" << s << "\n" << r.summary();
      ASSERT_FALSE(r.cases.empty());
      EXPECT_TRUE(r.cases[0].lse.has_value()) << "training mode compares the lse";
    }
  }
}

// The other options' dtypes and L stay at their defaults with several passes (resolve says why).
TEST(FlashFwdRemat, TwoTilesPerPassIsOfferedWithDefaultDtypesOnly) {
  try {
    flash().resolve({{"attn_core_tile_size", "2"}, {"seq_tile_size", "1024"}});
    FAIL() << "attn_core_tile_size=2 with seq_tile_size=1024 resolved";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("attn_core_tile_size=2"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(flash().resolve({{"attn_core_tile_size", "2"}, {"use_causal_mask", "true"}}));
}

}  // namespace
}  // namespace ncv::kernels
