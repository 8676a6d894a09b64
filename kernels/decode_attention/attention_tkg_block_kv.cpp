#include "kernels/decode_attention/attention_tkg_block_kv.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/decode_attention/gen_mask_tkg_swa.h"

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

// A PSUM tile's options: bank `bank` when the tile asks for explicit banks.
BufferOptions psum_at(const BlockKvTile& t, Expr bank) {
  if (t.psum_bank_bytes <= 0) return {};
  return {.placement = Placement{Expr(0), bank * t.psum_bank_bytes}};
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
    // attention_tkg.py 3429–3465: one DMA of the tile's table columns, partition-major: the
    // table [B, S / bl] declared [B, S / (128 bl), 128] (the same bytes), viewed
    // [128 (p), folds, batches] (perm 2, 1, 0) into table_sb's columns f · batches + b.
    Access src = table({ds(t.batch_start, t.batches), ds(t.fold_start, t.folds), all()});
    src.perm = {2, 1, 0};
    b.dma_copy(table_sb(), src);
    return;
  }
  // attention_tkg.py 3466–3545 (rf > 1, batches <= 128: one batch chunk): the tile's original
  // entries with batches on partitions, each entry e expanded to the rf sub-blocks e·rf + r in
  // fp32, then one PE transpose per fold into table_sb [128, folds, batches] (uint32 again).
  const int64_t rf = t.resize;
  const Expr orig = Expr::floordiv(t.folds * P, rf);  // original blocks of this tile
  b.sequential_range("table_resize_scope", 1, [&](Expr) {
    auto pre =
        b.sbuf("active_blk_pre_reshape" + t.suffix, DType::uint32, {t.batches, orig, Expr(1)});
    b.dma_copy(pre(), table({ds(t.batch_start, t.batches),
                             ds(Expr::floordiv(t.fold_start * P, rf), orig)}));
    auto arange =
        b.sbuf("reshape_arange" + t.suffix, DType::uint32, {t.batches, Expr(1), Expr(rf)});
    b.iota(arange(), Expr(0), 0, {0, 1});
    // scalar_tensor_tensor(data = pre broadcast over r, op0 = multiply by rf, op1 = add arange
    // broadcast over the blocks) into fp32 (line 3515): the IR has no scalar_tensor_tensor;
    // the same fp32 arithmetic in two exact steps (values < 2^24).
    auto expanded =
        b.sbuf("active_blk_reshaped" + t.suffix, DType::fp32, {t.batches, orig, Expr(rf)});
    b.tensor_scalar(expanded(), broadcast(pre(), 2, Expr(rf)), AluOp::multiply,
                    Imm{static_cast<float>(rf)}, false, std::nullopt, Imm{0.0f}, false,
                    Engine::Vector);
    b.tensor_tensor(expanded(), expanded(), broadcast(arange(), 1, orig), AluOp::add,
                    Engine::Vector);
    b.affine_range("table_fold", t.folds, [&](Expr f) {
      auto tp = b.psum("active_blk_transposed" + t.suffix, DType::fp32, {Expr(P), t.batches},
                       psum_at(t, Expr::mod(f, 8)));
      // Fold f's 128 sub-blocks: original blocks f·128/rf .. (f + 1)·128/rf − 1, all r.
      b.transpose(tp(), expanded({all(), ds(f * (P / rf), P / rf), all()}), Engine::Tensor);
      b.tensor_copy(table_sb({all(), one(f), all()}), tp(), Engine::Vector);
    });
  });
}

std::vector<Expr> block_table_sb_shape(const BlockKvTile& t) {
  if (t.resize == 1) return {Expr(P), t.folds * t.batches};
  return {Expr(P), t.folds, t.batches};
}

std::vector<Expr> block_table_shape(const BlockKvTile& t, Expr batches, Expr seqlen,
                                    int64_t table_block_len) {
  if (t.resize == 1) return {batches, Expr::floordiv(seqlen, P * table_block_len), Expr(P)};
  return {batches, Expr::floordiv(seqlen, table_block_len)};
}

Access block_column(const TensorRef& table_sb, const BlockKvTile& t, Expr fold, Expr batch) {
  if (t.resize == 1) return table_sb({all(), ds(fold * t.batches + batch, 1)});
  return table_sb({all(), one(fold), one(batch)});
}

void load_block_k(Builder& b, const TensorRef& k_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& k_sb, DType load_dtype) {
  check_tile(t);
  const int64_t bl = t.block_len;
  const Expr d = t.d_head;
  // The source requires a block length above 8 to be a multiple of 8 (lines 1686–1695).
  if (bl > 8 && bl % 8 != 0) {
    throw std::invalid_argument("block KV: a block length above 8 must be a multiple of 8");
  }
  b.affine_range("k_fold", t.folds, [&](Expr f) {
    auto k_loaded = b.sbuf("k_loaded" + t.suffix, load_dtype, {P, d * bl});
    b.dma_copy(k_loaded(), fold_blocks(k_cache, table_sb, t, f, batch));
    // Per block row j a transpose into PSUM bank j % 8 (per_batch_interleave_degree 8 with batch
    // interleave 1, lines 1700–1707) and a copy into the row's k_sb tile. The source copies
    // groups of 8 rows alternately on the Vector and Scalar engines (1712–1717); here every copy
    // is on the Vector engine (the same values): one copy instruction over all rows keeps the
    // writes of k_sb in the form the initialization prover covers.
    b.affine_range("k_row", Expr(bl), [&](Expr j) {
      auto tp = b.psum("k_tp" + t.suffix, load_dtype, {d, P}, psum_at(t, Expr::mod(j, 8)));
      b.transpose(tp(), k_loaded({all(), ds(j * d, d)}), Engine::Tensor);
      b.tensor_copy(sub(sub(k_sb, 1, f, Expr(1)), 2, j, Expr(1)), tp(), Engine::Vector);
    });
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
// gets (partition, first row within the last fold, rows, first active token) for the
// partial block (one call) and each whole block after it (a loop over them: the source copies
// them with one access pattern of two free dims; an IR access has one dim per tensor dim, and the
// active tokens are one).
template <typename F>
void each_active_block(Builder& b, const BlockKvTile& t, Expr s_active, const std::string& name,
                       F&& place) {
  const int64_t bl = t.block_len;
  const Expr nb = Expr::floordiv(s_active + (bl - 1), bl);
  const Expr extra = nb * bl - s_active;
  // Partial (or, when extra = 0, whole) first block: partition 128 − nb, rows extra .. bl − 1,
  // active tokens 0 .. bl − extra − 1.
  place(Expr(P) - nb, extra, Expr(bl) - extra, Expr(0));
  // Whole blocks: partition 128 − nb + 1 + k, rows 0 .. bl − 1, tokens bl − extra + k·bl ...
  b.affine_range(name, nb - 1, [&](Expr k) {
    place(Expr(P) - nb + 1 + k, Expr(0), Expr(bl), Expr(bl) - extra + k * bl);
  });
}

}  // namespace

void place_block_k_active(Builder& b, const BlockKvTile& t, const Access& k_sb,
                          const TensorRef& k_active_sb, Expr global_batch, Expr s_active) {
  check_tile(t);
  // k_sb [d, folds, bl, 128]: the last fold, rows r0.., partition p
  each_active_block(b, t, s_active, "k_active_blk", [&](Expr p, Expr r0, Expr rows, Expr a0) {
    b.tensor_copy(sub(sub(sub(k_sb, 1, t.folds - 1, Expr(1)), 2, r0, rows), 3, p, Expr(1)),
                  k_active_sb({all(), one(global_batch), ds(a0, rows)}));
  });
}

void place_block_v_active(Builder& b, const BlockKvTile& t, const Access& v_sb,
                          const TensorRef& v_active, Expr global_batch, Expr s_active) {
  check_tile(t);
  // v_sb [128, n, d]: partition p, tiles (folds − 1)·bl + r0..
  each_active_block(b, t, s_active, "v_active_blk", [&](Expr p, Expr r0, Expr rows, Expr a0) {
    const Expr t0 = (t.folds - 1) * t.block_len + r0;
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
