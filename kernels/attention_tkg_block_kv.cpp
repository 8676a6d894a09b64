#include "kernels/attention_tkg_block_kv.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/gen_mask_tkg_swa.h"

namespace ncv::kernels::tkg {

namespace {

constexpr int64_t P = kSlotPartitions;

// View dim `dim` of `a` replaced by [start, start + size) with `step`, relative to the view's
// current start.
Access sub(Access a, size_t dim, Expr start, Expr size, int64_t step = 1) {
  a.dims[dim].start = a.dims[dim].start + start;
  a.dims[dim].size = size;
  a.dims[dim].step = step;
  return a;
}

void check_tile(const BlockKvTile& t) {
  if (t.block_len < 1) throw std::invalid_argument("block KV: block_len must be >= 1");
  if (t.max_blocks < 1) throw std::invalid_argument("block KV: max_blocks must be >= 1");
}

// The fold's 128 physical blocks [bl, d] of `cache`, block of row p = the offsets column's p.
Access fold_blocks(const TensorRef& cache, const TensorRef& table_sb, const BlockKvTile& t,
                   Expr fold, Expr batch) {
  // Row p of the view starts at block 0 (step 0) and is moved to block table_sb[p, column] by
  // the indirect offsets (attention_tkg.py 1670–1680: ap [[bl·d, 128], [1, bl·d]],
  // vector_offset = the column, indirect_dim 0).
  return indirect(cache({ds(0, P, 0), all(), all()}), 0, block_column(table_sb, t, fold, batch), 0,
                  t.max_blocks - 1);
}

}  // namespace

void load_block_table(Builder& b, const TensorRef& table, const TensorRef& table_sb,
                      const BlockKvTile& t) {
  check_tile(t);
  if (t.resize == 1) {
    // attention_tkg.py 3429–3465: table columns of the tile's folds, partition-major.
    b.affine_range("table_fold", t.folds, [&](Expr f) {
      const Access src = table({ds(t.batch_start, t.batches), ds((t.fold_start + f) * P, P)});
      b.dma_copy(table_sb({all(), ds(f * t.batches, t.batches)}), transposed(src));
    });
    return;
  }
  // attention_tkg.py 3466–3545 (rf > 1, batches <= 128: one batch chunk): the tile's original
  // entries with batches on partitions, each entry e expanded to the rf sub-blocks e·rf + r in
  // fp32, then one PE transpose per fold into the [128, batches] columns (uint32 again).
  const int64_t rf = t.resize;
  const Expr orig = Expr::floordiv(t.folds * P, rf);  // original blocks of this tile
  b.sequential_range("table_resize_scope", 1, [&](Expr) {
    auto pre = b.sbuf("active_blk_pre_reshape", DType::uint32, {t.batches, orig, Expr(1)});
    b.dma_copy(pre(), table({ds(t.batch_start, t.batches),
                             ds(Expr::floordiv(t.fold_start * P, rf), orig)}));
    auto arange = b.sbuf("reshape_arange", DType::uint32, {t.batches, Expr(1), Expr(rf)});
    b.iota(arange(), Expr(0), 0, {0, 1});
    // scalar_tensor_tensor(data = pre broadcast over r, op0 = multiply by rf, op1 = add arange
    // broadcast over the blocks) into fp32 (line 3515): the IR has no scalar_tensor_tensor;
    // the same fp32 arithmetic in two exact steps (values < 2^24).
    auto expanded = b.sbuf("active_blk_reshaped", DType::fp32, {t.batches, orig, Expr(rf)});
    b.tensor_scalar(expanded(), broadcast(pre(), 2, Expr(rf)), AluOp::multiply,
                    Imm{static_cast<float>(rf)}, false, std::nullopt, Imm{0.0f}, false,
                    Engine::Vector);
    b.tensor_tensor(expanded(), expanded(), broadcast(arange(), 1, orig), AluOp::add,
                    Engine::Vector);
    b.affine_range("table_fold", t.folds, [&](Expr f) {
      auto tp = b.psum("active_blk_transposed", DType::fp32, {Expr(P), t.batches});
      // Fold f's 128 sub-blocks: original blocks f·128/rf .. (f + 1)·128/rf − 1, all r.
      b.transpose(tp(), expanded({all(), ds(f * (P / rf), P / rf), all()}), Engine::Tensor);
      b.tensor_copy(table_sb({all(), ds(f * t.batches, t.batches)}), tp(), Engine::Vector);
    });
  });
}

Access block_column(const TensorRef& table_sb, const BlockKvTile& t, Expr fold, Expr batch) {
  return table_sb({all(), ds(fold * t.batches + batch, 1)});
}

void load_block_k(Builder& b, const TensorRef& k_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& k_sb, DType load_dtype) {
  check_tile(t);
  const int64_t bl = t.block_len;
  const Expr d = t.d_head;
  // transpose_grp_size = min(8, bl) (line 1686); bl > 8 must be a multiple of 8 (1689–1695).
  const int64_t grp = std::min<int64_t>(8, bl);
  if (bl % grp != 0) {
    throw std::invalid_argument("block KV: a block length above 8 must be a multiple of 8");
  }
  b.affine_range("k_fold", t.folds, [&](Expr f) {
    auto k_loaded = b.sbuf("k_loaded", load_dtype, {P, d * bl});
    b.dma_copy(k_loaded(), fold_blocks(k_cache, table_sb, t, f, batch));
    // Groups of 8 rows: even groups copy on the Vector engine, odd ones on the Scalar engine
    // (1712–1717); the group index is static (bl is), the row within a group a loop.
    for (int64_t g = 0; g < bl / grp; ++g) {
      b.affine_range("k_row", Expr(grp), [&](Expr jj) {
        const Expr j = jj + g * grp;
        auto tp = b.psum("k_tp_g" + std::to_string(g), load_dtype, {d, P});
        b.transpose(tp(), k_loaded({all(), ds(j * d, d)}), Engine::Tensor);
        b.tensor_copy(sub(k_sb, 1, f * bl + j, Expr(1)), tp(),
                      g % 2 == 0 ? Engine::Vector : Engine::Scalar);
      });
    }
  });
}

void load_block_v(Builder& b, const TensorRef& v_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& v_sb) {
  check_tile(t);
  const int64_t bl = t.block_len;
  b.affine_range("v_fold", t.folds, [&](Expr f) {
    b.dma_copy(sub(v_sb, 1, f * bl, Expr(bl)), fold_blocks(v_cache, table_sb, t, f, batch));
  });
}

namespace {

// The last s_active slots of the tile in the block layout (attention_tkg.py 1803–1812): they
// cover nb = ceil(s_a / bl) blocks, the partitions 128 − nb .. 127 of the last fold; the first of
// them holds active tokens from row extra = nb·bl − s_a on, the others whole blocks. `place`
// gets (first partition, rows, first row, first active token, tokens per partition) for the
// partial block (one call) and each whole block after it (a loop over them: the source copies
// them with one access pattern of two free dims; an IR access has one dim per tensor dim, and the
// active tokens are one).
template <typename F>
void each_active_block(Builder& b, const BlockKvTile& t, Expr s_active, const std::string& name,
                       F&& place) {
  const int64_t bl = t.block_len;
  const Expr nb = Expr::floordiv(s_active + (bl - 1), bl);
  const Expr extra = nb * bl - s_active;
  const Expr last_fold_tile = (t.folds - 1) * bl;  // tile of row 0 of the last fold
  // Partial (or, when extra = 0, whole) first block: partition 128 − nb, rows extra .. bl − 1,
  // active tokens 0 .. bl − extra − 1.
  place(Expr(P) - nb, last_fold_tile + extra, Expr(bl) - extra, Expr(0));
  // Whole blocks: partition 128 − nb + 1 + k, rows 0 .. bl − 1, tokens bl − extra + k·bl ...
  b.affine_range(name, nb - 1, [&](Expr k) {
    place(Expr(P) - nb + 1 + k, last_fold_tile, Expr(bl), Expr(bl) - extra + k * bl);
  });
}

}  // namespace

void place_block_k_active(Builder& b, const BlockKvTile& t, const Access& k_sb,
                          const TensorRef& k_active_sb, Expr global_batch, Expr s_active) {
  check_tile(t);
  each_active_block(b, t, s_active, "k_active_blk", [&](Expr p, Expr t0, Expr rows, Expr a0) {
    b.tensor_copy(sub(sub(k_sb, 1, t0, rows), 2, p, Expr(1)),
                  k_active_sb({all(), one(global_batch), ds(a0, rows)}));
  });
}

void place_block_v_active(Builder& b, const BlockKvTile& t, const Access& v_sb,
                          const TensorRef& v_active, Expr global_batch, Expr s_active) {
  check_tile(t);
  each_active_block(b, t, s_active, "v_active_blk", [&](Expr p, Expr t0, Expr rows, Expr a0) {
    b.dma_copy(sub(sub(v_sb, 0, p, Expr(1)), 1, t0, rows),
               v_active({one(global_batch), all(), ds(a0, rows), all()}));
  });
}

void load_block_active_mask(Builder& b, const BlockKvTile& t, const TensorRef& mask_out,
                            const TensorRef& active_mask, Expr tiles, Expr s_active) {
  check_tile(t);
  // gen_mask_tkg.py 684–743: one DMA per active key k at (p, f) of slot tile_slots − s_a + k.
  b.affine_range("active_key", s_active, [&](Expr k) {
    const Expr q = Expr(P * t.block_len) - s_active + k;  // position within the last fold
    const Expr p = Expr::floordiv(q, t.block_len);
    const Expr f = tiles - t.block_len + Expr::mod(q, t.block_len);
    b.dma_copy(mask_out({ds(p, 1), ds(f, 1), all(), all(), all()}),
               active_mask({one(k), ds(t.batch_start, t.batches), all(), all()}));
  });
}

}  // namespace ncv::kernels::tkg
