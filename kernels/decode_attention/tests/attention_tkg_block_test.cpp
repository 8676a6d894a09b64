// attention_tkg's paged (block) KV cache and sliding windows: check passes on trn2 at small,
// middle and large shapes (block tables, resized blocks, windows over flat and paged caches,
// LNC2), the per-case draws vary windows and tables, and the packing puts the paged cache where
// the kernel reads it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "check/check.h"
#include "kernels/decode_attention/attention_tkg_common.h"
#include "kernels/decode_attention/attention_tkg_draws.h"
#include "kernels/decode_attention/tests/attention_tkg_test_support.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {
namespace {

using tkg_test::shape;
using tkg_test::tkg;

CheckResult check_tkg(const Options& given, const ParamValues& pv, int cases, uint64_t seed = 1) {
  const Options o = tkg().resolve(given);
  const Program p = tkg().build(o);
  CheckOptions co;
  co.cases = cases;
  co.seed = seed;
  co.run.hw = &hw_config_trn2();
  return check_kernel(tkg(), p, o, pv, co);
}

std::string describe(const Options& o, const ParamValues& pv) {
  std::string s;
  for (const auto& [k, v] : o) s += k + "=" + v + " ";
  for (const auto& [k, v] : pv) s += k + "=" + std::to_string(v) + " ";
  return s;
}

const Options kBlock16 = {{"block_len", "16"}, {"strided_mm1", "false"}};

TEST(AttentionTkgBlock, PagedCachePassesAtSmallMiddleAndLargeShapes) {
  struct Case {
    Options o;
    ParamValues pv;
  };
  const Case cases[] = {
      // one fold of 128 blocks
      {kBlock16, shape(2, 2, 3, 2048, 16)},
      // two folds, generated mask, three batches whose tables interleave
      {{{"block_len", "16"}, {"strided_mm1", "false"}, {"mask", "pos_id"}},
       shape(3, 2, 5, 4096, 32)},
      // four folds per core of an LNC2 s_prior split
      {{{"block_len", "16"}, {"strided_mm1", "false"}, {"lnc", "2-sprior"}},
       shape(2, 1, 5, 16384, 32)},
      // an fp8 cache (bf16 loads and transposes), eight folds; blocks of 32
      {{{"block_len", "16"}, {"strided_mm1", "false"}, {"kv_dtype", "fp8_e4m3"}},
       shape(2, 1, 4, 16384, 16)},
      {{{"block_len", "32"}, {"strided_mm1", "false"}}, shape(1, 3, 2, 8192, 64)},
  };
  for (const Case& c : cases) {
    const CheckResult r = check_tkg(c.o, c.pv, 2);
    EXPECT_TRUE(r.pass) << describe(c.o, c.pv) << "\n" << r.summary();
  }
}

TEST(AttentionTkgBlock, ResizedBlocksPass) {
  // s_prior / 128 = 12: blocks of 16 are cut into rf = 4 sub-blocks of 4 rows (the source's
  // (4, 8, 7, 3072) LNC2 configuration per core); 7 active tokens span two sub-blocks.
  const Options o = {{"block_len", "16"}, {"block_resize", "4"}, {"strided_mm1", "false"}};
  const CheckResult r = check_tkg(o, shape(2, 2, 7, 1536, 16), 2);
  EXPECT_TRUE(r.pass) << r.summary();
  // The source's (4, 8, 7, 3072) LNC2 configuration: 1536 slots per core of an s_prior split,
  // blocks of 16 cut into sub-blocks of 4; generated mask.
  const Options o2 = {{"block_len", "16"},
                      {"block_resize", "4"},
                      {"strided_mm1", "false"},
                      {"mask", "pos_id"},
                      {"lnc", "2-sprior"}};
  const CheckResult r2 = check_tkg(o2, shape(2, 2, 7, 3072, 16), 2);
  EXPECT_TRUE(r2.pass) << r2.summary();
}

TEST(AttentionTkgBlock, ResizeFactorIsTheDomains) {
  // block_resize = 4 with blocks of 16 holds exactly the seqlens whose s_prior / 128 has
  // gcd 4 with 16.
  const Options o =
      tkg().resolve({{"block_len", "16"}, {"block_resize", "4"}, {"strided_mm1", "false"}});
  const Program p = tkg().build(o);
  EXPECT_NO_THROW(check_params(p, shape(1, 1, 1, 512, 8)));                   // 4
  EXPECT_NO_THROW(check_params(p, shape(1, 1, 1, 1536, 8)));                  // 12
  EXPECT_THROW(check_params(p, shape(1, 1, 1, 1024, 8)), InputError);         // 8: rf 2
  EXPECT_THROW(check_params(p, shape(1, 1, 1, 2048, 8)), InputError);         // 16: rf 1
  EXPECT_THROW(tkg().resolve({{"block_len", "16"}}), std::invalid_argument);  // strided_mm1
  EXPECT_THROW(tkg().resolve({{"swa", "on"}}), std::invalid_argument);        // mask=hbm
}

TEST(AttentionTkgBlock, SlidingWindowsPass) {
  struct Case {
    Options o;
    ParamValues pv;
  };
  const Options swa = {{"mask", "pos_id"}, {"swa", "on"}};
  Options swa_contiguous = swa;
  swa_contiguous["strided_mm1"] = "false";
  Options swa_block = swa;
  swa_block["block_len"] = "16";
  swa_block["strided_mm1"] = "false";
  Options swa_lnc2 = swa;
  swa_lnc2["lnc"] = "2-sprior";
  Options swa_fa_block = swa_block;
  swa_fa_block["s_prior_tiling"] = "on";
  const Case cases[] = {
      {swa, shape(2, 2, 3, 1024, 16)},
      {swa_contiguous, shape(2, 3, 4, 2048, 32)},
      {swa_block, shape(2, 1, 5, 4096, 32)},
      {swa_lnc2, shape(2, 2, 3, 2048, 16)},
      // two 8192-slot flash-attention tiles over a paged cache
      {swa_fa_block, shape(1, 1, 2, 16384, 16)},
  };
  for (const Case& c : cases) {
    const CheckResult r = check_tkg(c.o, c.pv, 3);
    EXPECT_TRUE(r.pass) << describe(c.o, c.pv) << "\n" << r.summary();
  }
}

TEST(AttentionTkgBlock, WindowsAndTablesAreDrawnPerCase) {
  const Options o = tkg().resolve(
      {{"mask", "pos_id"}, {"swa", "on"}, {"block_len", "16"}, {"strided_mm1", "false"}});
  const ParamValues pv = shape(2, 1, 3, 2048, 8);
  const oracle::AttentionSpec base = tkg().spec(o, pv);
  EXPECT_EQ(base.mask.window, 128);
  ASSERT_TRUE(base.block_kv);
  std::set<int64_t> windows;
  std::set<std::vector<int64_t>> tables;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    oracle::AttentionSpec s = base;
    tkg().draw_case(s, pv, seed);
    ASSERT_NO_THROW(s.validate());
    windows.insert(s.mask.window);
    tables.insert(s.block_kv->table);
  }
  EXPECT_GE(windows.size(), 5u);
  EXPECT_EQ(tables.size(), 6u);
}

TEST(AttentionTkgBlock, PackingFillsThePagedCacheTableAndWindows) {
  const Options o = tkg().resolve(
      {{"mask", "pos_id"}, {"swa", "on"}, {"block_len", "16"}, {"strided_mm1", "false"}});
  const ParamValues pv = shape(2, 1, 3, 2048, 4);
  const Program p = tkg().build(o);
  oracle::AttentionSpec s = tkg().spec(o, pv);
  const CaseDraws draws = tkg().draw_case(s, pv, 3);
  const oracle::AttentionInputs in = oracle::generate_inputs(s, oracle::Distribution::normal, 3);
  const auto packed = pack_inputs(tkg().layout, p, pv, s, in, draws);
  const HostTensor& kp = packed.at("k_prior");
  const HostTensor& table = packed.at("active_blocks_table");
  const HostTensor& start = packed.at("start_pos_ids");
  const HostTensor& end = packed.at("rope_pos_ids");
  for (size_t e = 0; e < s.block_kv->table.size(); ++e) {
    EXPECT_EQ(table.get(static_cast<int64_t>(e)), static_cast<float>(s.block_kv->table[e]));
  }
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t j : {int64_t{0}, int64_t{700}, int64_t{2044}}) {
      const int64_t at = s.kv_index(b, 0, j, 1);  // the physical cache's element
      EXPECT_EQ(kp.get(at), static_cast<float>(in.k[size_t(at)])) << b << " " << j;
    }
    const int64_t active = s.kv_index(b, 0, 2046, 0);  // an active slot: stale in the cache
    EXPECT_EQ(kp.get(active), -static_cast<float>(in.k[size_t(active)]));
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(start.get(b * 3 + i), static_cast<float>(s.mask.cache_begin[size_t(b * 3 + i)]));
      EXPECT_EQ(end.get(b * 3 + i), static_cast<float>(s.mask.cache_end[size_t(b * 3 + i)]));
    }
  }
}

}  // namespace
}  // namespace ncv::kernels
