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
  b.affine_range("table_fold", t.folds, [&](Expr f) {
    const Access src = table({ds(t.batch_start, t.batches), ds((t.fold_start + f) * P, P)});
    b.dma_copy(table_sb({all(), ds(f * t.batches, t.batches)}), transposed(src));
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
        b.tensor_copy(sub(k_sb, 1, (f * bl + j) * P, Expr(P)), tp(),
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
    b.dma_copy(sub(v_sb, 1, f * t.d_head * bl, t.d_head * bl),
               fold_blocks(v_cache, table_sb, t, f, batch));
  });
}

void place_block_k_active(Builder& b, const BlockKvTile& t, const Access& k_sb,
                          const TensorRef& k_active_sb, Expr global_batch, Expr s_active) {
  check_tile(t);
  const Expr n = t.folds * t.block_len;
  // Columns (n − s_a + a)·128 + 127: partition 127's rows bl − s_a.. of the last fold.
  b.tensor_copy(sub(k_sb, 1, (n - s_active) * P + (P - 1), s_active, P),
                k_active_sb({all(), ds(global_batch * s_active, s_active)}));
}

void place_block_v_active(Builder& b, const BlockKvTile& t, const Access& v_sb,
                          const TensorRef& v_active, Expr global_batch, Expr s_active) {
  check_tile(t);
  const Expr n = t.folds * t.block_len;
  b.dma_copy(
      sub(sub(v_sb, 0, Expr(P - 1), Expr(1)), 1, (n - s_active) * t.d_head, s_active * t.d_head),
      v_active({one(global_batch), all(), all(), all()}));
}

void load_block_active_mask(Builder& b, const BlockKvTile& t, const TensorRef& mask_out,
                            const TensorRef& active_mask, Expr tiles, Expr s_active) {
  check_tile(t);
  b.dma_copy(mask_out({ds(P - 1, 1), ds(tiles - s_active, s_active), all(), all(), all()}),
             active_mask({all(), ds(t.batch_start, t.batches), all(), all()}));
}

}  // namespace ncv::kernels::tkg
