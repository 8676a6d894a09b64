// The allocation rules of liveness.h on small programs: a block-indexed PSUM tensor written and
// read within one iteration needs `bufs` banks whatever its block count, one read after its loop
// needs every block, a read of a value from another iteration keeps the whole tensor, an explicit
// placement is kept as written and left out of the requirement, and a buffer dead after its last
// use frees its bytes for the buffers after it.
#include "model/ir/liveness.h"

#include <gtest/gtest.h>

#include "model/ir/allocator.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

constexpr int64_t kBank = 2048;

int64_t at(const Expr& e, int64_t S) {
  Env env;
  env.set("S", S);
  return eval(e, env);
}

// qk[S/512 blocks] in PSUM at kernel scope; block j written (matmul) and read (copy out) in
// iteration j; `read_after` adds a read of every block after the loop.
Program block_indexed(int64_t bufs, bool read_after, bool read_previous = false) {
  Builder b("blocks");
  Expr S = b.param("S", 512, 16384, 512);
  Expr N = Expr::floordiv(S, 512);
  auto q = b.sbuf("q", DType::bf16, {128, 128});
  auto k = b.sbuf("k", DType::bf16, {128, 512});
  auto out = b.sbuf("out", DType::fp32, {128, N, 512});
  auto y = b.output("y", DType::fp32, {128, 512});
  b.memset(q(), 0.0f);
  b.memset(k(), 0.0f);
  auto qk = b.psum("qk", DType::fp32, {128, N, 512}, {.bufs = bufs});
  b.affine_range("j", N, [&](Expr j) {
    if (read_previous) {
      // reads block j - 1 (written by the previous iteration) before writing block j
      b.tensor_copy(out({all(), one(j), all()}),
                    qk({all(), one(Expr::max(j - 1, Expr(0))), all()}));
    }
    b.matmul(qk({all(), one(j), all()}), q(), k());
    b.tensor_copy(out({all(), one(j), all()}), qk({all(), one(j), all()}));
  });
  if (read_after) {
    b.affine_range("j2", N, [&](Expr j) {
      b.tensor_copy(out({all(), one(j), all()}), qk({all(), one(j), all()}));
    });
  }
  b.dma_copy(y(), out({all(), one(Expr(0)), all()}));
  return b.finish();
}

TEST(AllocationRules, BlockIndexedPsumWithinOneIterationNeedsBufsBanks) {
  for (int64_t bufs : {1, 2}) {
    const Program p = block_indexed(bufs, false);
    const Allocation a = allocate(p, hw_config_trn1());
    ASSERT_EQ(a.regions.at(p.find_tensor("qk").value()).size(), 1u);
    const LiveRegion& r = a.regions.at(p.find_tensor("qk").value())[0];
    EXPECT_EQ(r.within.size(), 1u);
    EXPECT_EQ(r.block_dims, std::vector<int>{1});
    for (int64_t S : {512, 4096, 16384}) {
      EXPECT_EQ(at(a.psum_peak_bytes, S), bufs * kBank) << "bufs " << bufs << " S " << S;
    }
  }
}

TEST(AllocationRules, BlockReadAfterItsLoopNeedsEveryBlock) {
  const Program p = block_indexed(1, true);
  const Allocation a = allocate(p, hw_config_trn1());
  ASSERT_EQ(a.regions.at(p.find_tensor("qk").value()).size(), 1u);
  const LiveRegion& r = a.regions.at(p.find_tensor("qk").value())[0];
  EXPECT_TRUE(r.within.empty());
  EXPECT_TRUE(r.block_dims.empty());
  EXPECT_EQ(at(a.psum_peak_bytes, 4096), 8 * kBank);
  EXPECT_EQ(at(a.psum_peak_bytes, 4608), 9 * kBank);
}

TEST(AllocationRules, AValueReadInTheNextIterationKeepsTheWholeTensor) {
  const Program p = block_indexed(1, false, /*read_previous=*/true);
  const Allocation a = allocate(p, hw_config_trn1());
  ASSERT_EQ(a.regions.at(p.find_tensor("qk").value()).size(), 1u);
  EXPECT_TRUE(a.regions.at(p.find_tensor("qk").value())[0].within.empty());
  EXPECT_EQ(at(a.psum_peak_bytes, 4096), 8 * kBank);
}

// As the software-pipelined FlashAttention v10 uses its PSUM tiles: `qk` (4 banks' worth of
// blocks) in a loop, `sc` in the next, `qk` again in a third, each loop reading only what its
// iteration wrote. Between the loops neither holds anything: qk has two regions, and the
// requirement is the larger loop's one bank, not qk and sc together.
TEST(AllocationRules, ABufferUsedInSeveralIterationLocalLoopsIsDeadBetweenThem) {
  Builder b("segments");
  Expr S = b.param("S", 512, 4096, 512);
  Expr N = Expr::floordiv(S, 512);
  auto y = b.output("y", DType::fp32, {128, 512});
  auto src = b.sbuf("src", DType::fp32, {128, 512});
  b.memset(src(), 0.0f);
  auto qk = b.psum("qk", DType::fp32, {128, 4, 512});
  auto sc = b.psum("sc", DType::fp32, {128, 4, 512});
  auto use = [&](const TensorRef& t) {
    b.sequential_range("j", N, [&](Expr j) {
      b.tensor_copy(t({all(), one(Expr::mod(j, 4)), all()}), src());
      b.tensor_copy(src(), t({all(), one(Expr::mod(j, 4)), all()}));
    });
  };
  use(qk);
  use(sc);
  use(qk);
  b.dma_copy(y(), src());
  const Program p = b.finish();
  const Allocation a = allocate(p, hw_config_trn1());
  const auto& regions = a.regions.at(p.find_tensor("qk").value());
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].block_dims, std::vector<int>{1});
  EXPECT_NE(regions[0].body, &p.body);
  EXPECT_EQ(at(a.psum_peak_bytes, 4096), kBank);
}

// A buffer written whole, read, then written whole again and read is dead between the two uses
// (two regions). An nc_stream_shuffle with a 255 entry as the second write leaves those
// partitions holding the first write's values: one region, alive throughout.
TEST(AllocationRules, AStreamShuffleThatKeepsPartitionsDoesNotEndTheBuffersValues) {
  for (bool keeps : {false, true}) {
    Builder b("shuffle_keep");
    auto y = b.output("y", DType::fp32, {64, 8});
    auto a = b.sbuf("a", DType::fp32, {64, 8});
    auto d = b.sbuf("d", DType::fp32, {64, 8});
    b.memset(a(), 2.0f);
    b.memset(d(), 1.0f);
    b.dma_copy(y(), d());
    std::vector<int64_t> mask(32, 0);
    if (keeps) mask[7] = kShuffleKeep;
    b.emit(StreamShuffle{d(), a(), mask});
    b.dma_copy(y(), d());
    const Program p = b.finish();
    const Allocation al = allocate(p, hw_config_trn1());
    EXPECT_EQ(al.regions.at(p.find_tensor("d").value()).size(), keeps ? 1u : 2u) << keeps;
  }
}

TEST(AllocationRules, ExplicitPlacementIsKeptAsWrittenAndLeftOutOfTheRequirement) {
  Builder b("placed");
  Expr S = b.param("S", 512, 4096, 512);
  auto y = b.output("y", DType::fp32, {128, 512});
  auto src = b.sbuf("src", DType::fp32, {128, 512});
  b.memset(src(), 0.0f);
  auto placed = b.psum("placed", DType::fp32, {128, 512}, {.placement = Placement{0, 3 * kBank}});
  auto mine = b.psum("mine", DType::fp32, {128, Expr::floordiv(S, 512), 512});
  b.affine_range("j", Expr::floordiv(S, 512), [&](Expr j) {
    b.tensor_copy(placed(), src());
    b.tensor_copy(mine({all(), one(j), all()}), placed());
    b.tensor_copy(src(), mine({all(), one(j), all()}));
  });
  b.dma_copy(y(), src());
  const Program p = b.finish();
  const Allocation a = allocate(p, hw_config_trn1());
  const BufferPlacement& bp = *a.placements.at(p.find_tensor("placed").value());
  EXPECT_TRUE(bp.explicit_placement);
  EXPECT_EQ(at(bp.byte_offset, 4096), 3 * kBank);
  EXPECT_EQ(at(a.psum_peak_bytes, 4096), kBank);  // `mine`'s one block; `placed` is apart
}

TEST(AllocationRules, ABufferDeadAfterItsLastUseFreesItsBytes) {
  Builder b("spans");
  Expr S = b.param("S", 128, 8192, 128);
  auto y = b.output("y", DType::fp32, {128, 1});
  auto sink = b.sbuf("sink", DType::fp32, {128, 1});  // 4 bytes, live throughout
  auto first = b.sbuf("first", DType::fp32, {128, S});
  auto second = b.sbuf("second", DType::fp32, {128, S});
  b.memset(sink(), 0.0f);
  b.memset(first(), 0.0f);
  b.tensor_copy(sink(), first({all(), ds(0, 1)}));
  b.memset(second(), 0.0f);
  b.tensor_copy(sink(), second({all(), ds(0, 1)}));
  b.dma_copy(y(), sink());
  const Program p = b.finish();
  const Allocation a = allocate(p, hw_config_trn1());
  EXPECT_EQ(at(a.sbuf_peak_bytes, 1024), 4 + 4096);        // one of them at a time
  EXPECT_EQ(at(a.sbuf_layout_bytes, 1024), 4 + 2 * 4096);  // the layout keeps both apart
}

}  // namespace
}  // namespace ncv
