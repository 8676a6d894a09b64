#include "model/ir/allocator.h"

#include <gtest/gtest.h>

#include "model/ir/builder.h"

namespace ncv {
namespace {

int64_t at(const Expr& e, int64_t S) {
  Env env;
  env.set("S", S);
  return eval(e, env);
}

TEST(Allocator, ScopesStackAndSiblingsShareSpace) {
  Builder b("stack");
  Expr S = b.param("S", 128, 8192, 128);
  auto y = b.output("y", DType::fp32, {128, 1});
  auto keep = b.sbuf("keep", DType::bf16, {128, S});  // 2S bytes, whole kernel
  b.memset(keep(), 0.0f);
  b.affine_range("i", 2, [&](Expr) {
    auto a = b.sbuf("a", DType::fp32, {128, S}, {.bufs = 2});  // 2 x 4S
    b.memset(a(), 0.0f);
  });
  b.affine_range("j", 2, [&](Expr) {
    auto c = b.sbuf("c", DType::fp32, {128, 64});  // 256 bytes
    b.memset(c(), 0.0f);
    b.dma_copy(y(), c({all(), ds(0, 1)}));
  });
  Program p = b.finish();
  Allocation a = allocate(p, hw_config_trn1());
  auto keep_p = *a.placements[p.find_tensor("keep").value()];
  auto a_p = *a.placements[p.find_tensor("a").value()];
  auto c_p = *a.placements[p.find_tensor("c").value()];
  EXPECT_EQ(at(keep_p.byte_offset, 1024), 0);
  EXPECT_EQ(at(a_p.byte_offset, 1024), 2048);
  EXPECT_EQ(at(a_p.copy_stride, 1024), 4096);
  EXPECT_EQ(at(c_p.byte_offset, 1024), 2048);  // sibling scope reuses the space of `a`
  EXPECT_EQ(at(a.sbuf_peak_bytes, 1024), 2048 + 2 * 4096);
  EXPECT_EQ(at(a.sbuf_peak_bytes, 128), std::max<int64_t>(256 + 2 * 512, 256 + 256));
  // The peak is one Expr over the params: the solver reads it.
  EXPECT_TRUE(a.sbuf_peak_bytes.mentions(intern_symbol("S")));
}

TEST(Allocator, PsumCopiesTakeWholeBanks) {
  Builder b("banks");
  auto t = b.psum("t", DType::fp32, {128, 128}, {.bufs = 3});  // 512 B -> one bank each
  auto u = b.psum("u", DType::fp32, {128, 1024});              // 4 KiB -> two banks
  b.memset(t(), 0.0f);
  b.memset(u({all(), ds(0, 512)}), 0.0f);
  Program p = b.finish();
  Allocation a = allocate(p, hw_config_trn1());
  auto tp = *a.placements[0];
  auto up = *a.placements[1];
  Env env;
  EXPECT_EQ(eval(tp.copy_stride, env), 2048);
  EXPECT_EQ(eval(up.byte_offset, env), 3 * 2048);
  EXPECT_EQ(eval(a.psum_peak_bytes, env), 5 * 2048);
}

TEST(Allocator, UnalignedSizesAreRoundedSymbolically) {
  Builder b("align");
  Expr n = b.param("n", 1, 100);
  auto a = b.sbuf("a", DType::bf16, {128, n});  // 2n bytes: aligned up to 4
  auto c = b.sbuf("c", DType::fp32, {128, 4});
  b.memset(a(), 0.0f);
  b.memset(c(), 0.0f);
  Program p = b.finish();
  Allocation al = allocate(p, hw_config_trn1());
  Env env;
  env.set("n", 3);
  EXPECT_EQ(eval(al.placements[1]->byte_offset, env), 8);
  env.set("n", 4);
  EXPECT_EQ(eval(al.placements[1]->byte_offset, env), 8);
}

TEST(Allocator, ExplicitPlacementsAreKept) {
  Builder b("explicit");
  b.affine_range("i", 4, [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {64, 32},
                    {.placement = Placement{Expr(64), Expr::mod(i, 2) * 1024}});
    b.memset(t(), 0.0f);
  });
  Program p = b.finish();
  Allocation a = allocate(p, hw_config_trn1());
  ASSERT_TRUE(a.placements[0]->explicit_placement);
  Env env;
  env.set("i", 3);
  EXPECT_EQ(eval(a.placements[0]->byte_offset, env), 1024);
  EXPECT_EQ(eval(a.placements[0]->partition, env), 64);
  EXPECT_EQ(eval(a.sbuf_peak_bytes, env), 0);
}

}  // namespace
}  // namespace ncv
