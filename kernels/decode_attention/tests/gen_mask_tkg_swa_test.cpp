// gen_mask_tkg's slot iota (flat strided, flat contiguous, block) and its sliding-window prior
// mask, each run on the interpreter (trn2) in a tiny program and compared exactly with the
// documented formula, as nki-library's own gen_mask tests compare with rtol = atol = 0
// (test_gen_mask_tkg.py): windows inside the cache, empty ones, and windows wrapping around a
// circular cache; with the block layout also the active mask placed at the active slots.
#include "kernels/decode_attention/gen_mask_tkg_swa.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/decode_attention/attention_tkg_block_kv.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv::kernels::tkg {
namespace {

struct MaskCase {
  SlotLayout layout = SlotLayout::flat_strided;
  int64_t block_len = 0;
  int64_t n = 4, batches = 2, heads = 2, s_active = 3, base = 0;
  std::vector<int64_t> start, end;  // [batches][s_active]
  bool active_mask = false;         // block layout: also load the active mask
};

int64_t at(int64_t b, int64_t i, int64_t s_active) {
  return b * s_active + i;
}

// The mask (and the iota) the program computes for case c.
struct MaskRun {
  HostTensor mask, iota;
  std::vector<uint8_t> active;  // [s_active][batches][heads][s_active] when c.active_mask
};

MaskRun run_mask(const MaskCase& c, bool ge_as_gt = false) {
  const int64_t P = kSlotPartitions;
  Builder b("gen_mask_tkg_swa_test");
  auto pos = b.input("pos", DType::fp32, {1, c.batches, c.s_active});
  auto start = b.input("start", DType::fp32, {1, c.batches, c.s_active});
  std::optional<TensorRef> active;
  if (c.active_mask) {
    active = b.input("active", DType::uint8, {c.s_active, c.batches, c.heads, c.s_active},
                     ValueRange{0, 1});
  }
  auto mask = b.output("mask", DType::uint8, {P, c.n, c.batches, c.heads, c.s_active});
  auto iota_out = b.output("iota", DType::fp32, {P, c.n, 1});
  auto pos_sb = b.sbuf("pos_sb", DType::fp32, {P, c.batches, c.s_active});
  auto start_sb = b.sbuf("start_sb", DType::fp32, {P, c.batches, c.s_active});
  // The positions on every partition (the source broadcasts them with stream shuffles).
  b.dma_copy(pos_sb(), broadcast(pos(), 0, P));
  b.dma_copy(start_sb(), broadcast(start(), 0, P));
  auto mask_sb = b.sbuf("mask_sb", DType::uint8, {P, c.n, c.batches, c.heads, c.s_active});
  b.memset(mask_sb(), 0.0f);
  auto iota = b.sbuf("tmp_iota", DType::fp32, {P, c.n, 1});
  b.memset(iota(), 0.0f);
  emit_slot_iota(b, iota(), SlotIota{c.layout, c.block_len, Expr(c.n), Expr(c.base)});
  emit_swa_mask(b, SwaMask{iota(), mask_sb, pos_sb(), start_sb(), Expr(c.n), Expr(c.batches),
                           Expr(c.heads), Expr(c.s_active)});
  if (active) {
    BlockKvTile t;
    t.block_len = c.block_len;
    t.d_head = Expr(1);
    t.folds = Expr(c.n / c.block_len);
    t.fold_start = Expr(0);
    t.batches = Expr(c.batches);
    t.batch_start = Expr(0);
    load_block_active_mask(b, t, mask_sb, *active, Expr(c.n), Expr(c.s_active));
  }
  b.dma_copy(mask(), mask_sb());
  b.dma_copy(iota_out(), iota());
  Program p = b.finish();
  if (ge_as_gt) {
    // The catalogue's tkg_swa_window_start_dropped edit, by hand: greater_equal -> greater.
    bool found = false;
    std::function<void(std::vector<Stmt>&)> walk = [&](std::vector<Stmt>& body) {
      for (Stmt& s : body) {
        if (auto* loop = std::get_if<Loop>(&s.node)) walk(loop->body);
        if (auto* ins = std::get_if<InstrStmt>(&s.node)) {
          if (auto* ts = std::get_if<TensorScalar>(&ins->ins); ts && ts->op0 == AluOp::is_ge) {
            ts->op0 = AluOp::is_gt;
            found = true;
          }
        }
      }
    };
    walk(p.body);
    EXPECT_TRUE(found);
  }

  std::map<std::string, HostTensor> in;
  HostTensor pos_t(DType::fp32, {1, c.batches, c.s_active}), start_t = pos_t;
  for (int64_t k = 0; k < c.batches * c.s_active; ++k) {
    pos_t.set(k, static_cast<float>(c.end[static_cast<size_t>(k)]));
    start_t.set(k, static_cast<float>(c.start[static_cast<size_t>(k)]));
  }
  in["pos"] = pos_t;
  in["start"] = start_t;
  MaskRun r;
  if (active) {
    HostTensor a(DType::uint8, {c.s_active, c.batches, c.heads, c.s_active});
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      // A pattern that is neither all ones nor the causal triangle: (k * 7 + 3) % 5 < 3.
      r.active.push_back((k * 7 + 3) % 5 < 3 ? 1 : 0);
      a.set(k, r.active.back());
    }
    in["active"] = a;
  }
  RunOptions o;
  o.hw = &hw_config_trn2();
  RunResult res = run_program(p, {}, in, o);
  EXPECT_FALSE(res.error) << res.error->message;
  r.mask = res.outputs.at("mask");
  r.iota = res.outputs.at("iota");
  return r;
}

// Mismatches between the run and the formula (0: exact).
int64_t mismatches(const MaskCase& c, const MaskRun& r) {
  const int64_t P = kSlotPartitions;
  const int64_t slots = c.n * P, first_active = c.base + slots - c.s_active;
  int64_t bad = 0;
  for (int64_t p = 0; p < P; ++p) {
    for (int64_t t = 0; t < c.n; ++t) {
      const int64_t slot = slot_of(c.layout, c.block_len, c.n, c.base, p, t);
      if (r.iota.get(p * c.n + t) != static_cast<float>(slot)) ++bad;
      for (int64_t b = 0; b < c.batches; ++b) {
        for (int64_t h = 0; h < c.heads; ++h) {
          for (int64_t i = 0; i < c.s_active; ++i) {
            const size_t q = static_cast<size_t>(at(b, i, c.s_active));
            bool want = swa_keeps(slot, c.start[q], c.end[q]);
            if (c.active_mask && slot >= first_active) {
              const int64_t a = slot - first_active;
              want = r.active[static_cast<size_t>(((a * c.batches + b) * c.heads + h) * c.s_active +
                                                  i)] != 0;
            }
            const int64_t e = (((p * c.n + t) * c.batches + b) * c.heads + h) * c.s_active + i;
            if (r.mask.get(e) != (want ? 1.0f : 0.0f)) ++bad;
          }
        }
      }
    }
  }
  return bad;
}

TEST(GenMaskTkgSwa, SlotOfFollowsTheSourceFormulas) {
  // flat strided: base + p·n + t; contiguous: base + t·128 + p; block: fold·128·bl + p·bl + j.
  EXPECT_EQ(slot_of(SlotLayout::flat_strided, 0, 4, 10, 3, 2), 10 + 3 * 4 + 2);
  EXPECT_EQ(slot_of(SlotLayout::flat_contiguous, 0, 4, 10, 3, 2), 10 + 2 * 128 + 3);
  EXPECT_EQ(slot_of(SlotLayout::block, 8, 16, 0, 3, 10), 1 * 128 * 8 + 3 * 8 + 2);
  EXPECT_TRUE(swa_keeps(5, 5, 6));
  EXPECT_FALSE(swa_keeps(6, 5, 6));
  EXPECT_FALSE(swa_keeps(4, 5, 6));
  EXPECT_TRUE(swa_keeps(0, 500, 3));  // wraps: [500, S) ∪ [0, 3)
  EXPECT_TRUE(swa_keeps(510, 500, 3));
  EXPECT_FALSE(swa_keeps(3, 500, 3));
  EXPECT_FALSE(swa_keeps(7, 7, 7));  // empty window
}

// Windows of every kind for 2 batches x 3 queries over 512 slots: inside, starting at 0, ending
// at the last slot, empty, and wrapping around (start > end) with and without an empty tail.
MaskCase flat_case(SlotLayout layout) {
  MaskCase c;
  c.layout = layout;
  c.start = {100, 101, 0, /*wrap*/ 500, 7, 300};
  c.end = {228, 229, 1, /*wrap*/ 3, 7, 512};
  return c;
}

TEST(GenMaskTkgSwa, FlatStridedWindowsExact) {
  MaskCase c = flat_case(SlotLayout::flat_strided);
  EXPECT_EQ(mismatches(c, run_mask(c)), 0);
}

TEST(GenMaskTkgSwa, FlatContiguousWindowsExactOnTheSecondShard) {
  MaskCase c = flat_case(SlotLayout::flat_contiguous);
  // The second s_prior shard of an LNC2 split of 1024 slots: slots 512..1023.
  c.base = 512;
  c.start = {600, 512, 1000, /*wrap*/ 1020, 0, 900};
  c.end = {700, 1024, 1010, /*wrap*/ 530, 600, 901};
  EXPECT_EQ(mismatches(c, run_mask(c)), 0);
}

TEST(GenMaskTkgSwa, BlockWindowsAndActiveMaskExact) {
  MaskCase c;
  c.layout = SlotLayout::block;
  c.block_len = 8;
  c.n = 16;  // two folds of 128 blocks of 8 slots: 2048 slots
  c.heads = 3;
  // Block caches are linear (start = max(0, pos − W + 1)): windows across the fold boundary
  // (1024), inside one block, from slot 0, and reaching the active slots.
  c.start = {1000, 1001, 1002, 0, 17, 1500};
  c.end = {1100, 1101, 1102, 5, 18, 2047};
  c.active_mask = true;
  EXPECT_EQ(mismatches(c, run_mask(c)), 0);
}

TEST(GenMaskTkgSwa, DroppedWindowStartIsCaught) {
  // greater for greater_equal drops each window's first slot (research28 §5).
  MaskCase c = flat_case(SlotLayout::flat_strided);
  EXPECT_GT(mismatches(c, run_mask(c, /*ge_as_gt=*/true)), 0);
}

}  // namespace
}  // namespace ncv::kernels::tkg
