#include "model/ir/allocator.h"

#include <gtest/gtest.h>

#include "model/ir/builder.h"
#include "model/ir/memory_peak.h"

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
  b.tensor_copy(keep({all(), ds(0, 1)}), keep({all(), ds(1, 1)}));  // keep is live throughout
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
  b.tensor_copy(u({all(), ds(0, 128)}), t());  // t is live while u is
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

namespace ncv {
namespace {

// keep: 2000 B for the whole kernel (read at its end); loop i: a (2 copies of 4S B) and b (256 B)
// in SBUF, t (512 B, one 2 KiB bank) in PSUM, all live at t's memset; loop j, a sibling of i:
// c (2048 B).
Program peak_program() {
  Builder b("peaks");
  Expr S = b.param("S", 128, 8192, 128);
  auto keep = b.sbuf("keep", DType::bf16, {128, 1000});
  b.memset(keep(), 0.0f);
  b.affine_range("i", 2, [&](Expr) {
    auto a = b.sbuf("a", DType::fp32, {128, S}, {.bufs = 2});
    auto bb = b.sbuf("b", DType::fp32, {128, 64});
    auto t = b.psum("t", DType::fp32, {128, 128});
    b.memset(a(), 0.0f);
    b.memset(bb(), 0.0f);
    b.memset(t(), 0.0f);
    b.tensor_copy(bb({all(), ds(0, 1)}), a({all(), ds(0, 1)}));  // a, b and t live together
  });
  b.affine_range("j", 2, [&](Expr) {
    auto c = b.sbuf("c", DType::fp32, {128, 512});
    b.memset(c(), 0.0f);
  });
  b.tensor_copy(keep({all(), ds(0, 1)}), keep({all(), ds(1, 1)}));  // keep is live throughout
  return b.finish();
}

TEST(MemoryPeaks, LiveBuffersAtThePeakLargestFirst) {
  const Program p = peak_program();
  const MemoryPeaks m = memory_peaks(p, hw_config_trn1(), {{"S", 1024}});
  EXPECT_EQ(m.sbuf.peak_bytes, 2000 + 2 * 4096 + 256);
  EXPECT_EQ(m.sbuf.capacity, 180224);  // trn1: 192 KiB less the 16 KiB compiler reserve
  EXPECT_TRUE(m.sbuf.fits());
  EXPECT_EQ(m.sbuf.at_loops, std::vector<std::string>{"i"});
  ASSERT_EQ(m.sbuf.live.size(), 3u);  // c lives in the sibling loop j, not at the peak
  EXPECT_EQ(m.sbuf.live[0].name, "a");
  EXPECT_EQ(m.sbuf.live[0].bytes_per_partition, 8192);
  EXPECT_EQ(m.sbuf.live[0].bytes_per_copy, 4096);
  EXPECT_EQ(m.sbuf.live[0].copies, 2);
  EXPECT_EQ(m.sbuf.live[0].loop, "i");
  EXPECT_EQ(m.sbuf.live[1].name, "keep");
  EXPECT_EQ(m.sbuf.live[1].bytes_per_partition, 2000);
  EXPECT_EQ(m.sbuf.live[1].loop, "");
  EXPECT_EQ(m.sbuf.live[2].name, "b");
  EXPECT_EQ(m.sbuf.live[2].bytes_per_partition, 256);
  // PSUM: one copy of 512 bytes takes a whole 2 KiB bank.
  EXPECT_EQ(m.psum.peak_bytes, 2048);
  EXPECT_EQ(m.psum.capacity, 16384);
  ASSERT_EQ(m.psum.live.size(), 1u);
  EXPECT_EQ(m.psum.live[0].name, "t");
  EXPECT_EQ(m.psum.live[0].bytes_per_copy, 512);
  EXPECT_EQ(m.psum.live[0].bytes_per_partition, 2048);
}

TEST(MemoryPeaks, PeakMovesToTheSiblingLoopWhenItIsLarger) {
  const Program p = peak_program();
  // S = 128: loop i holds 2 * 512 + 256 = 1280 bytes, loop j 2048.
  const MemoryPeaks m = memory_peaks(p, hw_config_trn1(), {{"S", 128}});
  EXPECT_EQ(m.sbuf.peak_bytes, 2000 + 2048);
  EXPECT_EQ(m.sbuf.at_loops, std::vector<std::string>{"j"});
  ASSERT_EQ(m.sbuf.live.size(), 2u);
  EXPECT_EQ(m.sbuf.live[0].name, "c");
  EXPECT_EQ(m.sbuf.live[1].name, "keep");
}

TEST(MemoryPeaks, AShapePastTheCapacityIsReportedWithItsOverflow) {
  const Program p = peak_program();
  // Beyond the declared domain, as the frontier asks: a alone needs 2 * 128 KiB.
  const MemoryPeaks m = memory_peaks(p, hw_config_trn1(), {{"S", 32768}});
  EXPECT_EQ(m.sbuf.peak_bytes, 2000 + 2 * 131072 + 256);
  EXPECT_FALSE(m.sbuf.fits());
  EXPECT_EQ(m.sbuf.live[0].name, "a");
  EXPECT_EQ(m.sbuf.live[0].bytes_per_partition, 262144);
  // The peak is the allocator's, which the capacity check compares with the capacity.
  Env env;
  env.set("S", 32768);
  EXPECT_EQ(eval(allocate(p, hw_config_trn1()).sbuf_peak_bytes, env), m.sbuf.peak_bytes);
}

}  // namespace
}  // namespace ncv

namespace ncv {
namespace {

TEST(MemoryPeaks, ExplicitPlacementsAreListedApartFromThePeak) {
  Builder b("explicit_peaks");
  Expr S = b.param("S", 128, 8192, 128);
  auto small = b.sbuf("small", DType::fp32, {128, 16}, {.placement = Placement{Expr(0), Expr(0)}});
  auto big = b.sbuf("big", DType::fp32, {128, S},
                    {.bufs = 2, .placement = Placement{Expr(0), Expr(1024)}});
  auto auto_placed = b.sbuf("auto_placed", DType::bf16, {128, 100});
  b.memset(small(), 0.0f);
  b.memset(big(), 0.0f);
  b.memset(auto_placed(), 0.0f);
  const Program p = b.finish();
  const MemoryPeaks m = memory_peaks(p, hw_config_trn1(), {{"S", 256}});
  // Only the auto-placed buffer is stacked into the peak.
  EXPECT_EQ(m.sbuf.peak_bytes, 200);
  ASSERT_EQ(m.sbuf.live.size(), 1u);
  EXPECT_EQ(m.sbuf.live[0].name, "auto_placed");
  ASSERT_EQ(m.sbuf.explicitly_placed.size(), 2u);
  EXPECT_EQ(m.sbuf.explicitly_placed[0].name, "big");  // declared second, larger
  EXPECT_EQ(m.sbuf.explicitly_placed[0].bytes_per_partition, 2 * 1024);
  EXPECT_EQ(m.sbuf.explicitly_placed[0].copies, 2);
  EXPECT_EQ(m.sbuf.explicitly_placed[1].name, "small");
  EXPECT_EQ(m.sbuf.explicitly_placed[1].bytes_per_partition, 64);
  EXPECT_TRUE(m.psum.explicitly_placed.empty());
}

}  // namespace
}  // namespace ncv
