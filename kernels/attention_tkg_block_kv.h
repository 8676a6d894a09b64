// attention_tkg's paged (block) KV cache (aws-neuron/nki-library d2ad3a5,
// src/nkilib_src/nkilib/core/attention/attention_tkg.py; /work/notes/research28.md §1.2–§1.4,
// §1.7): the block table load into SBUF, the K and V loads through it, and the active tokens'
// placement into the last blocks.
//
// Geometry (no resize, rf = 1): the S slots of a batch are folds of 128·bl slots; partition p of
// fold f holds physical block table[b, f·128 + p] of the cache [num_blocks, bl, d], whose row j is
// slot f·128·bl + p·bl + j. K lands in k_sb [d, n·128] at column (f·bl + j)·128 + p, V in v_sb
// [128, n·d] at columns (f·bl + j)·d.., so tile t = f·bl + j holds, on partition p, the slot the
// block iota (gen_mask_tkg_swa.h SlotLayout::block) gives (p, t).
//
// Modelled: the table's resize-1 branch (attention_tkg.py 3429–3465); resize factor rf > 1
// (S / bl < 128 · s_prior programs, utils.py 240–329) is outside the domain (the builder
// requires 128 · bl · programs | S and, with FA, 128 · bl | 8192). K takes the source's PE
// transpose path (1666–1729: indirect DMA of 128 blocks, a Tensor-engine transpose per block row,
// copies alternating Vector/Scalar per group of 8 rows) for every d and dtype; the source takes a
// DMA transpose instead when d = 128, the K dtype has 2 bytes and bl >= 8 (line 821, 1639–1664),
// which moves the same values (the IR's indirect offsets select view rows, not the block axis a DMA
// transpose puts last: research28 §3 gap 4). The active tokens' placement assumes
// s_active <= bl (one block holds them all: the source's tests use bl 16 and 32 with s_active <=
// 8).
#pragma once

#include <cstdint>

#include "model/ir/builder.h"

namespace ncv::kernels::tkg {

struct BlockKvTile {
  int64_t block_len = 0;  // bl (static: the block_len option)
  Expr d_head;
  Expr folds;        // folds of this s_prior tile: tile slots / (128·bl)
  Expr fold_start;   // the tile's first fold in the batch's table (core shard and FA tile included)
  Expr batches;      // batches of this tile (tile_bs)
  Expr batch_start;  // global index of the tile's first batch
  // Declared range of the table's entries (Indirect lo/hi): [0, max_blocks - 1] with max_blocks
  // the largest num_blocks of the domain; the interpreter checks every entry read against it and
  // the cache's actual extent.
  int64_t max_blocks = 1;
};

// The table of this tile into table_sb [128, folds·batches] uint32: column f·batches + b holds, on
// partition p, table[batch_start + b, (fold_start + f)·128 + p] (source: one DMA of a permuted,
// partition-major view; here one DMA per fold, since a view cannot split the table's block axis
// into (fold, p)). table is the HBM input [B, S / bl] uint32.
void load_block_table(Builder& b, const TensorRef& table, const TensorRef& table_sb,
                      const BlockKvTile& t);

// The offsets column of tile-relative batch `batch` and fold `fold`: table_sb[:, fold·batches +
// batch] (attention_tkg.py 1632 batch_pos = i_fold_rel·bs + i_b; the V load 2712–2718 reads the
// same column through a [folds, bs] reshape).
Access block_column(const TensorRef& table_sb, const BlockKvTile& t, Expr fold, Expr batch);

// K of tile-relative batch `batch`: for every fold an indirect DMA of the fold's 128 blocks
// [bl·d] into a [128, bl·d] tile of `load_dtype` (the source's k_prior_load_type: bf16 for fp8
// caches, else the cache dtype), then per block row j a Tensor-engine transpose into a PSUM
// [d, 128] tile of load_dtype and a copy into k_sb[:, (f·bl + j)·128 ..] (cast to k_sb's dtype).
// k_cache is the HBM cache [num_blocks, bl, d].
void load_block_k(Builder& b, const TensorRef& k_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& k_sb, DType load_dtype);

// V of tile-relative batch `batch`: per fold one indirect DMA of the fold's 128 blocks into
// v_sb[:, f·bl·d .. (f + 1)·bl·d] (attention_tkg.py 2705–2748). v_cache [num_blocks, bl, d],
// v_sb [128, n·d].
void load_block_v(Builder& b, const TensorRef& v_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& v_sb);

// The active tokens into the last s_active slots of the tile's last fold: slot S − s_active + a
// is partition 127, row j = bl − s_active + a of that fold (s_active <= bl), i.e. k_sb column
// ((folds − 1)·bl + bl − s_active + a)·128 + 127 and v_sb partition 127, columns
// ((folds − 1)·bl + bl − s_active + a)·d... K comes from k_active_sb [d, B·s_active] (SBUF,
// columns of global batch `global_batch`) by a tensor_copy (attention_tkg.py 1799–1887), V from
// the HBM v_active [B, 1, s_active, d] by a DMA (2783–2873). The caller guards them to the last
// core's last FA tile.
void place_block_k_active(Builder& b, const BlockKvTile& t, const Access& k_sb,
                          const TensorRef& k_active_sb, Expr global_batch, Expr s_active);
void place_block_v_active(Builder& b, const BlockKvTile& t, const Access& v_sb,
                          const TensorRef& v_active, Expr global_batch, Expr s_active);

// The HBM active mask [s_active, B, H, s_active] into mask_out [128, n, batches, H, s_active]
// at the active slots' (p, t) of the block layout (gen_mask_tkg.py 684–743: the source issues
// one DMA per active key; with s_active <= bl they all sit on partition 127, tiles
// n − s_active .. n − 1, so one DMA here).
void load_block_active_mask(Builder& b, const BlockKvTile& t, const TensorRef& mask_out,
                            const TensorRef& active_mask, Expr tiles, Expr s_active);

}  // namespace ncv::kernels::tkg
