// attention_tkg: check passes at small, middle and large shapes of every option family on trn2
// (the kernel needs NeuronCore-v3: its PE transposes of -inf are bit-exact there), per-case
// positions and sinks vary, the packing puts adversarial values where the kernel must not read,
// and planted defects of the source's kind fail check.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "check/check.h"
#include "kernels/decode_attention/attention_tkg_common.h"
#include "kernels/decode_attention/tests/attention_tkg_test_support.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {
namespace {

using tkg_test::shape;
using tkg_test::tkg;

CheckOptions trn2_options(int cases, uint64_t seed = 1) {
  CheckOptions co;
  co.cases = cases;
  co.seed = seed;
  co.run.hw = &hw_config_trn2();
  return co;
}

CheckResult check_tkg(const Options& given, const ParamValues& pv, int cases = 2,
                      uint64_t seed = 1) {
  const Options o = tkg().resolve(given);
  const Program p = tkg().build(o);
  return check_kernel(tkg(), p, o, pv, trn2_options(cases, seed));
}

TEST(AttentionTkg, DefaultPassesAtSmallAndMiddleShapes) {
  for (const ParamValues& pv : {shape(2, 2, 3, 384, 64), shape(3, 4, 5, 2048, 128)}) {
    const CheckResult r = check_tkg({}, pv, 2);
    EXPECT_TRUE(r.pass) << r.summary();
  }
}

TEST(AttentionTkg, NonStridedLayoutAndGeneratedMaskPass) {
  for (const Options& o : {Options{{"strided_mm1", "false"}}, Options{{"mask", "pos_id"}},
                           Options{{"mask", "pos_id"}, {"strided_mm1", "false"}}}) {
    const CheckResult r = check_tkg(o, shape(2, 2, 3, 384, 32), 2);
    EXPECT_TRUE(r.pass) << nlohmann::json(o).dump() << "\n" << r.summary();
  }
}

TEST(AttentionTkg, SinkAndFp8KvPass) {
  for (const Options& o : {Options{{"sink", "on"}}, Options{{"kv_dtype", "fp8_e4m3"}},
                           Options{{"kv_dtype", "fp8_e4m3"}, {"strided_mm1", "false"}}}) {
    const CheckResult r = check_tkg(o, shape(2, 3, 2, 512, 64), 3);
    EXPECT_TRUE(r.pass) << nlohmann::json(o).dump() << "\n" << r.summary();
  }
}

TEST(AttentionTkg, BothLnc2SplitsPass) {
  const CheckResult sp =
      check_tkg({{"lnc", "2-sprior"}, {"sink", "on"}}, shape(2, 2, 3, 768, 32), 2);
  EXPECT_TRUE(sp.pass) << sp.summary();
  // 129 <= bs * H * s_a <= 256: the source splits the batch
  const CheckResult bt =
      check_tkg({{"lnc", "2-batch"}, {"mask", "pos_id"}}, shape(4, 8, 5, 640, 32), 2);
  EXPECT_TRUE(bt.pass) << bt.summary();
}

TEST(AttentionTkg, FlashAttentionOverTwoTilesPerCorePasses) {
  const CheckResult one =
      check_tkg({{"s_prior_tiling", "on"}, {"sink", "on"}}, shape(1, 2, 2, 16384, 32), 2);
  EXPECT_TRUE(one.pass) << one.summary();
  const CheckResult two =
      check_tkg({{"s_prior_tiling", "on"}, {"lnc", "2-sprior"}, {"sink", "on"}, {"mask", "pos_id"}},
                shape(1, 2, 2, 32768, 32), 2);
  EXPECT_TRUE(two.pass) << two.summary();
}

TEST(AttentionTkg, PositionsAndSinksAreDrawnPerCase) {
  const Options o = tkg().resolve({{"sink", "on"}});
  const ParamValues pv = shape(3, 4, 2, 256, 16);
  const oracle::AttentionSpec base = tkg().spec(o, pv);
  std::set<int64_t> first_positions;
  std::set<double> sinks;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    oracle::AttentionSpec s = base;
    tkg().draw_case(s, pv, seed);
    s.validate();
    first_positions.insert(s.mask.cache_end[0]);
    for (double x : s.sink) sinks.insert(x);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {  // one position for every active token
        EXPECT_EQ(s.mask.cache_end[size_t(b * s.seqlen_q + i)],
                  s.mask.cache_end[size_t(b * s.seqlen_q)]);
      }
    }
  }
  EXPECT_TRUE(first_positions.count(0));
  EXPECT_TRUE(first_positions.count(256 - 2));
  EXPECT_GE(first_positions.size(), 3u);
  EXPECT_TRUE(sinks.count(60.0));
  EXPECT_GE(sinks.size(), 8u);
}

TEST(AttentionTkg, PackingKeepsTheActiveSlotsOfTheCacheAdversarial) {
  const Options o = tkg().resolve({{"mask", "pos_id"}});
  const ParamValues pv = shape(2, 1, 3, 512, 4);
  const Program p = tkg().build(o);
  oracle::AttentionSpec s = tkg().spec(o, pv);
  const CaseDraws draws = tkg().draw_case(s, pv, 5);
  const oracle::AttentionInputs in = oracle::generate_inputs(s, oracle::Distribution::normal, 5);
  const auto packed = pack_inputs(tkg().layout, p, pv, s, in, draws);
  const HostTensor& kp = packed.at("k_prior");
  const HostTensor& ka = packed.at("k_active");
  const HostTensor& pos = packed.at("rope_pos_ids");
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t a = 0; a < 3; ++a) {
      // k_prior [B, 1, d, S]: slot S - s_a + a of coordinate 0 is adversarial, k_active [d, B, s_a]
      // holds the spec's key there
      EXPECT_EQ(kp.get(b * 4 * 512 + 509 + a), 96.0f);
      EXPECT_EQ(ka.get(b * 3 + a), static_cast<float>(in.k[size_t(s.kv_index(b, 0, 509 + a, 0))]));
      EXPECT_EQ(pos.get(b * 3 + a), static_cast<float>(s.mask.cache_end[size_t(b * 3)] + a));
    }
  }
  EXPECT_EQ(check_distributions(s).front(), oracle::Distribution::stale_cache);
}

// Every instruction of the program, depth first.
void each_instruction(std::vector<Stmt>& body, const std::function<void(Instruction&)>& f) {
  for (Stmt& s : body) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) f(i->ins);
    if (auto* l = std::get_if<Loop>(&s.node)) each_instruction(l->body, f);
  }
}

// The model can fail this kernel: the generated mask's compare `slot < pos` made `<=` (one stale
// slot visible) and the qk memset dropped (masked slots read uninitialised scores) both fail.
TEST(AttentionTkg, BrokenMaskOrStaleScoresFailCheck) {
  const Options o = tkg().resolve({{"mask", "pos_id"}});
  const ParamValues pv = shape(2, 2, 3, 512, 16);
  Program le = tkg().build(o);
  int edited = 0;
  each_instruction(le.body, [&](Instruction& ins) {
    if (auto* ts = std::get_if<TensorScalar>(&ins); ts && ts->op0 == AluOp::is_lt) {
      ts->op0 = AluOp::is_le;
      ++edited;
    }
  });
  ASSERT_EQ(edited, 2);  // the even and the odd batches
  const CheckResult r = check_kernel(tkg(), le, o, pv, trn2_options(2));
  EXPECT_FALSE(r.pass) << r.summary();
  EXPECT_EQ(r.cases.front().distribution, "stale_cache");
  EXPECT_FALSE(r.cases.front().pass) << r.summary();
}

}  // namespace
}  // namespace ncv::kernels
