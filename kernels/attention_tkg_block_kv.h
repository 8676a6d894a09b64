// attention_tkg's paged (block) KV cache (aws-neuron/nki-library d2ad3a5,
// src/nkilib_src/nkilib/core/attention/attention_tkg.py; /work/notes/research28.md §1.2–§1.4,
// §1.7): the block table load into SBUF, the K and V loads through it, and the active tokens'
// placement into the last blocks.
//
// Geometry: the S slots of a batch are folds of 128·bl slots; partition p of fold f holds
// physical block table[b, f·128 + p] of the cache [num_blocks, bl, d], whose row j is slot
// f·128·bl + p·bl + j. K lands in k_sb [d, n, 128] at [:, f·bl + j, p], V in v_sb [128, n, d] at
// [p, f·bl + j, :], so tile t = f·bl + j holds, on partition p, the slot the block iota
// (gen_mask_tkg_swa.h SlotLayout::block) gives (p, t).
//
// Resize (attention_tkg_utils.py 240–329): when a core's tile has fewer than 128 blocks per fold
// the source cuts every block into rf sub-blocks of bl / rf rows (the cache read as
// [num_blocks·rf, bl / rf, d], entry e becoming e·rf + r); everything below then uses the
// resized block length. BlockKvTile::block_len is that length, BlockKvTile::resize is rf, and the
// caller declares the cache input as [num_blocks·rf, bl / rf, d] (the same bytes).
//
// K takes the source's PE transpose path (1666–1729: indirect DMA of 128 blocks, a Tensor-engine
// transpose per block row, copies alternating Vector/Scalar per group of 8 rows) for every d and
// dtype; the source takes a DMA transpose instead when d = 128, the K dtype has 2 bytes and the
// resized block length is >= 8 (line 821, 943, 1639–1664), which moves the same values (the IR's
// indirect offsets select view rows, not the block axis a DMA transpose puts last: research28 §3
// gap 4).
#pragma once

#include <cstdint>

#include "model/ir/builder.h"

namespace ncv::kernels::tkg {

struct BlockKvTile {
  int64_t block_len = 0;  // atp.block_len: the (resized) block length (static)
  int64_t resize = 1;     // rf: sub-blocks per original table entry (static)
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
// partition p, the (sub-)block of logical (sub-)block (fold_start + f)·128 + p of batch
// batch_start + b. rf = 1: table[batch_start + b, (fold_start + f)·128 + p] (source: one DMA of a
// permuted, partition-major view; here one DMA per fold, since a view cannot split the table's
// block axis into (fold, p)). rf > 1: the source's path (3466–3545) for batches <= 128: the
// entries with batches on partitions, e·rf + r in fp32, a PE transpose per fold. table is the HBM
// input [B, S / bl_original] uint32.
void load_block_table(Builder& b, const TensorRef& table, const TensorRef& table_sb,
                      const BlockKvTile& t);

// The offsets column of tile-relative batch `batch` and fold `fold`: table_sb[:, fold·batches +
// batch] (attention_tkg.py 1632 batch_pos = i_fold_rel·bs + i_b; the V load 2712–2718 reads the
// same column through a [folds, bs] reshape).
Access block_column(const TensorRef& table_sb, const BlockKvTile& t, Expr fold, Expr batch);

// K of tile-relative batch `batch`: for every fold an indirect DMA of the fold's 128 blocks
// [bl·d] into a [128, bl·d] tile of `load_dtype` (the source's k_prior_load_type: bf16 for fp8
// caches, else the cache dtype), then per block row j a Tensor-engine transpose into a PSUM
// [d, 128] tile of load_dtype and a copy into k_sb[:, f·bl + j, :] (cast to k_sb's dtype).
// k_cache is the HBM cache [num_blocks·rf, bl, d], k_sb [d, n, 128].
void load_block_k(Builder& b, const TensorRef& k_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& k_sb, DType load_dtype);

// V of tile-relative batch `batch`: per fold one indirect DMA of the fold's 128 blocks into
// v_sb[:, f·bl .. (f + 1)·bl, :] (attention_tkg.py 2705–2748). v_cache [num_blocks·rf, bl, d],
// v_sb [128, n, d].
void load_block_v(Builder& b, const TensorRef& v_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& v_sb);

// The active tokens into the last s_active slots of the tile's last fold: slot 128·bl − s_a + a
// of that fold is partition p = (128·bl − s_a + a) / bl, row j = (128·bl − s_a + a) % bl, i.e.
// k_sb[:, (folds − 1)·bl + j, p] and v_sb[p, (folds − 1)·bl + j, :]. K comes from k_active_sb
// [d, B, s_active] (SBUF) by tensor_copy (attention_tkg.py 1799–1887), V from the HBM v_active
// [B, 1, s_active, d] by DMA (2783–2873): one copy for the first (partial) block, one per whole
// block after it. The caller guards them to the last core's last FA tile.
void place_block_k_active(Builder& b, const BlockKvTile& t, const Access& k_sb,
                          const TensorRef& k_active_sb, Expr global_batch, Expr s_active);
void place_block_v_active(Builder& b, const BlockKvTile& t, const Access& v_sb,
                          const TensorRef& v_active, Expr global_batch, Expr s_active);

// The HBM active mask [s_active, B, H, s_active] into mask_out [128, n, batches, H, s_active]
// at the active slots' (p, t) of the block layout, one DMA per active key (gen_mask_tkg.py
// 684–743).
void load_block_active_mask(Builder& b, const BlockKvTile& t, const TensorRef& mask_out,
                            const TensorRef& active_mask, Expr tiles, Expr s_active);

}  // namespace ncv::kernels::tkg
