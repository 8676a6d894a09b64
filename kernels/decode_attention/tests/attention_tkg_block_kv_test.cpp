// attention_tkg's block-KV loads (attention_tkg_block_kv.h) in a tiny program on the
// interpreter (trn2): the table into SBUF, K through indirect DMAs and Tensor-engine transposes,
// V through indirect DMAs, the active tokens into the last blocks. Every loaded element must be
// the cache row the block layout (gen_mask_tkg_swa.h slot_of) names through the table, or the
// active token for the last s_active slots — bit for bit.
#include "kernels/decode_attention/attention_tkg_block_kv.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/decode_attention/gen_mask_tkg_swa.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv::kernels::tkg {
namespace {

constexpr int64_t P = kSlotPartitions;

struct LoadCase {
  // block_len is the table's; the kernel works with block_len / resize (folds count those).
  int64_t batches = 2, block_len = 8, resize = 1, folds = 2, d = 16, s_active = 3;
  // The tile: batches [batch_start, batch_start + tile_batches), folds [fold_start, + tile_folds).
  int64_t batch_start = 0, tile_batches = 2, fold_start = 0, tile_folds = 2;
  DType kv = DType::bf16;
  int64_t bl_r() const { return block_len / resize; }
  int64_t slots() const { return folds * P * bl_r(); }
  int64_t per_batch() const { return slots() / block_len; }
  int64_t num_blocks() const { return (batches + 1) * per_batch(); }
};

struct LoadRun {
  std::vector<int64_t> table;
  HostTensor k_cache, v_cache, k_active, v_active, k_out, v_out;
};

LoadRun run_loads(const LoadCase& c) {
  Builder b("attention_tkg_block_kv_test");
  const int64_t nblk = c.num_blocks(), bl = c.bl_r(), rf = c.resize, d = c.d;
  const int64_t n = c.tile_folds * bl;
  BlockKvTile t;
  t.block_len = bl;
  t.resize = rf;
  // The cache [num_blocks, block_len, d] read as [num_blocks·rf, block_len / rf, d].
  auto k_cache = b.input("k_cache", c.kv, {nblk * rf, bl, d});
  auto v_cache = b.input("v_cache", c.kv, {nblk * rf, bl, d});
  auto k_active = b.input("k_active", c.kv, {d, c.batches, c.s_active});
  auto v_active = b.input("v_active", c.kv, {c.batches, 1, c.s_active, d});
  auto k_out = b.output("k_out", c.kv, {c.tile_batches, d, c.tile_folds, bl, P});
  auto v_out = b.output("v_out", c.kv, {c.tile_batches, P, n, d});
  t.d_head = Expr(d);
  t.folds = Expr(c.tile_folds);
  t.fold_start = Expr(c.fold_start);
  t.batches = Expr(c.tile_batches);
  t.batch_start = Expr(c.batch_start);
  t.max_blocks = nblk * rf;
  auto table = b.input("table", DType::uint32,
                       block_table_shape(t, Expr(c.batches), Expr(c.slots()), c.block_len),
                       ValueRange{0, nblk - 1});
  auto table_sb = b.sbuf("active_blocks_sb", DType::uint32, block_table_sb_shape(t));
  load_block_table(b, table, table_sb, t);
  auto k_active_sb = b.sbuf("k_active_sb", c.kv, {d, c.batches, c.s_active});
  b.dma_copy(k_active_sb(), k_active());
  const DType load = c.kv == DType::fp8_e4m3 ? DType::bf16 : c.kv;
  b.affine_range("i_b", Expr(c.tile_batches), [&](Expr bi) {
    auto k_sb = b.sbuf("k_sb", c.kv, {d, c.tile_folds, bl, P});
    load_block_k(b, k_cache, table_sb, t, bi, k_sb(), load);
    place_block_k_active(b, t, k_sb(), k_active_sb, bi + c.batch_start, Expr(c.s_active));
    b.dma_copy(k_out({one(bi), all(), all(), all(), all()}), k_sb());
    auto v_sb = b.sbuf("v_sb", c.kv, {P, n, d});
    load_block_v(b, v_cache, table_sb, t, bi, v_sb());
    place_block_v_active(b, t, v_sb(), v_active, bi + c.batch_start, Expr(c.s_active));
    b.dma_copy(v_out({one(bi), all(), all(), all()}), v_sb());
  });
  Program p = b.finish();

  LoadRun r;
  std::mt19937_64 rng(7);
  // A random permutation of the physical blocks: batch b's logical block L is perm[b·per + L].
  std::vector<int64_t> perm(static_cast<size_t>(nblk));
  for (int64_t i = 0; i < nblk; ++i) perm[static_cast<size_t>(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  HostTensor tab(DType::uint32, concrete_shape(p, *p.find_tensor("table"), {}));
  for (int64_t e = 0; e < tab.num_elements(); ++e) {
    r.table.push_back(perm[static_cast<size_t>(e)]);
    tab.set(e, static_cast<float>(r.table.back()));
  }
  // Every element distinct where the dtype allows: small integers (exact in bf16 and fp8 up to
  // 16 / 240) times a per-tensor sign keep mix-ups visible; fp32 gets unique values.
  auto fill = [&](HostTensor& h, float tag) {
    for (int64_t e = 0; e < h.num_elements(); ++e) {
      h.set(e, c.kv == DType::fp32 ? tag * 100000.0f + static_cast<float>(e)
                                   : tag * static_cast<float>(1 + (rng() % 15)));
    }
  };
  r.k_cache = HostTensor(c.kv, {nblk * rf, bl, d});
  r.v_cache = r.k_cache;
  r.k_active = HostTensor(c.kv, {d, c.batches, c.s_active});
  r.v_active = HostTensor(c.kv, {c.batches, 1, c.s_active, d});
  fill(r.k_cache, 1.0f);
  fill(r.v_cache, 2.0f);
  fill(r.k_active, -1.0f);
  fill(r.v_active, -2.0f);
  std::map<std::string, HostTensor> in{{"table", tab},
                                       {"k_cache", r.k_cache},
                                       {"v_cache", r.v_cache},
                                       {"k_active", r.k_active},
                                       {"v_active", r.v_active}};
  RunOptions o;
  o.hw = &hw_config_trn2();
  RunResult res = run_program(p, {}, in, o);
  EXPECT_FALSE(res.error) << res.error->message;
  r.k_out = res.outputs.at("k_out");
  r.v_out = res.outputs.at("v_out");
  return r;
}

// Elements of k_out / v_out that differ (bits) from what the layout names.
int64_t mismatches(const LoadCase& c, const LoadRun& r) {
  // Slots follow the resized layout; a slot's table entry and row follow the table's blocks.
  const int64_t bl = c.bl_r(), tbl = c.block_len, d = c.d, n = c.tile_folds * bl;
  const int64_t base = c.fold_start * P * bl;
  const int64_t first_active = base + n * P - c.s_active;  // the tile's last s_active slots
  int64_t bad = 0;
  for (int64_t tb = 0; tb < c.tile_batches; ++tb) {
    const int64_t gb = c.batch_start + tb;
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t t = 0; t < n; ++t) {
        const int64_t slot = slot_of(SlotLayout::block, bl, n, base, p, t);
        for (int64_t e = 0; e < d; ++e) {
          uint32_t want_k, want_v;
          if (slot >= first_active) {
            const int64_t a = slot - first_active;
            want_k = r.k_active.bits(e * c.batches * c.s_active + gb * c.s_active + a);
            want_v = r.v_active.bits((gb * c.s_active + a) * d + e);
          } else {
            const int64_t blk = r.table[static_cast<size_t>(gb * c.per_batch() + slot / tbl)];
            want_k = r.k_cache.bits((blk * tbl + slot % tbl) * d + e);
            want_v = r.v_cache.bits((blk * tbl + slot % tbl) * d + e);
          }
          if (r.k_out.bits((tb * d + e) * n * P + t * P + p) != want_k) ++bad;
          if (r.v_out.bits((tb * P + p) * n * d + t * d + e) != want_v) ++bad;
        }
      }
    }
  }
  return bad;
}

TEST(AttentionTkgBlockKv, WholeBatchTileBf16) {
  LoadCase c;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

TEST(AttentionTkgBlockKv, Fp32BlockLen16ActiveFillsOneBlock) {
  LoadCase c;
  c.kv = DType::fp32;
  c.block_len = 16;
  c.folds = 1;
  c.tile_folds = 1;
  c.s_active = 16;  // s_active == block_len: the whole last block is active
  c.d = 8;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

TEST(AttentionTkgBlockKv, Fp8CacheThroughBf16Transposes) {
  LoadCase c;
  c.kv = DType::fp8_e4m3;
  c.s_active = 1;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

TEST(AttentionTkgBlockKv, ResizedBlocksWithActiveTokensOverThreeBlocks) {
  // Table blocks of 8 rows cut into rf = 4 sub-blocks of 2 (a 256-slot cache has 32 blocks per
  // batch, fewer than 128): the table is expanded on chip; 5 active tokens span 3 sub-blocks.
  LoadCase c;
  c.block_len = 8;
  c.resize = 4;
  c.folds = 1;
  c.tile_folds = 1;
  c.s_active = 5;
  c.batches = 3;
  c.tile_batches = 3;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

TEST(AttentionTkgBlockKv, ResizedSecondFoldOfTwo) {
  LoadCase c;
  c.block_len = 16;
  c.resize = 2;
  c.folds = 2;
  c.fold_start = 1;
  c.tile_folds = 1;
  c.s_active = 8;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

TEST(AttentionTkgBlockKv, SecondBatchLastFoldTile) {
  // A tile of the second batch and the second fold (an FA tile / batch tile / core shard).
  LoadCase c;
  c.batches = 3;
  c.batch_start = 1;
  c.tile_batches = 2;
  c.fold_start = 1;
  c.tile_folds = 1;
  c.s_active = 5;
  EXPECT_EQ(mismatches(c, run_loads(c)), 0);
}

}  // namespace
}  // namespace ncv::kernels::tkg
