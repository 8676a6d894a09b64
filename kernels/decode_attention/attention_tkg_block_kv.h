// attention_tkg's paged (block) KV cache (aws-neuron/nki-library d2ad3a5,
// src/nkilib_src/nkilib/core/attention/attention_tkg.py):
// the block table load into SBUF, the K and V loads through it, and the active tokens'
// placement into the last blocks.
//
// Geometry: the S slots of a batch are folds of 128·bl slots; partition p of fold f holds
// physical block table[b, f·128 + p] of the cache [num_blocks, bl, d], whose row j is slot
// f·128·bl + p·bl + j. K lands in k_sb [d, folds, bl, 128] at [:, f, j, p] (the tiles n = folds·bl
// split in two dims, so that each of the copies' loop indices has a dim of its own), V in v_sb
// [128, n, d] at [p, f·bl + j, :], so tile t = f·bl + j holds, on partition p, the slot the block
// iota (gen_mask_tkg_swa.h SlotLayout::block) gives (p, t).
//
// Resize (attention_tkg_utils.py 240–329): when a core's tile has fewer than 128 blocks per fold
// the source cuts every block into rf sub-blocks of bl / rf rows (the cache read as
// [num_blocks·rf, bl / rf, d], entry e becoming e·rf + r); everything below then uses the
// resized block length. BlockKvTile::block_len is that length, BlockKvTile::resize is rf, and the
// caller declares the cache input as [num_blocks·rf, bl / rf, d] (the same bytes).
//
// K takes the source's PE transpose path (1666–1729: indirect DMA of 128 blocks, a Tensor-engine
// transpose per block row and a copy out of PSUM; the source alternates the copies' engine per
// group of 8 rows, here all run on the Vector engine) for every d and dtype; the source takes a DMA
// transpose instead when d = 128, the K dtype has 2 bytes and the resized block length is >= 8
// (line 821, 943, 1639–1664), which moves the same values (the IR's indirect offsets select view
// rows, not the block axis a DMA transpose puts last: research28 §3 gap 4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  std::string suffix;  // appended to the names of the buffers the emitters declare
  // > 0: PSUM tiles at the source's explicit banks (it is not auto-allocated under the test's
  // SbufManager): K transpose j of a group of 8 in bank j (attention_tkg.py 1700–1707, batch
  // interleave degree 1), table transpose of fold f in bank f % 8 (3530–3535); the bank size in
  // bytes per partition. 0: the allocator places them.
  int64_t psum_bank_bytes = 0;
};

// The table of this tile into table_sb: on partition p, the (sub-)block of logical (sub-)block
// (fold_start + f)·128 + p of batch batch_start + b.
// rf = 1: the source's one DMA of a partition-major view (attention_tkg.py 3429–3465) from the
// table [B, S / bl] declared [B, S / (128·bl), 128] (the same bytes; S / bl is a multiple of 128
// without resize) into table_sb [128, folds·batches], column f·batches + b.
// rf > 1: the source's path for batches <= 128 (3466–3545): the table [B, S / bl_original] rows
// on partitions, e·rf + r in fp32, a PE transpose per fold into table_sb [128, folds, batches]
// (3-D: each fold's copy writes one index of the fold dim).
void load_block_table(Builder& b, const TensorRef& table, const TensorRef& table_sb,
                      const BlockKvTile& t);
// The shapes to declare: table_sb (SBUF, uint32) and the HBM table (uint32) of a program with
// `batches` batches, `seqlen` slots and table blocks of `table_block_len` (the original length).
std::vector<Expr> block_table_sb_shape(const BlockKvTile& t);
std::vector<Expr> block_table_shape(const BlockKvTile& t, Expr batches, Expr seqlen,
                                    int64_t table_block_len);

// The offsets column of tile-relative batch `batch` and fold `fold` (attention_tkg.py 1632
// batch_pos = i_fold_rel·bs + i_b; the V load 2712–2718 reads the same column through a
// [folds, bs] reshape): table_sb[:, fold·batches + batch], or [:, fold, batch] with rf > 1.
Access block_column(const TensorRef& table_sb, const BlockKvTile& t, Expr fold, Expr batch);

// K of tile-relative batch `batch`: for every fold an indirect DMA of the fold's 128 blocks
// [bl·d] into a [128, bl·d] tile of `load_dtype` (the source's k_prior_load_type: bf16 for fp8
// caches, else the cache dtype), then per block row j a Tensor-engine transpose into a PSUM
// [d, 128] tile of load_dtype and a copy into k_sb[:, f, j, :] (cast to k_sb's dtype).
// k_cache is the HBM cache [num_blocks·rf, bl, d], k_sb [d, folds, bl, 128].
void load_block_k(Builder& b, const TensorRef& k_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& k_sb, DType load_dtype);

// V of tile-relative batch `batch`: per fold one indirect DMA of the fold's 128 blocks into
// v_sb[:, f·bl .. (f + 1)·bl, :] (attention_tkg.py 2705–2748). v_cache [num_blocks·rf, bl, d],
// v_sb [128, n, d].
void load_block_v(Builder& b, const TensorRef& v_cache, const TensorRef& table_sb,
                  const BlockKvTile& t, Expr batch, const Access& v_sb);

// The active tokens into the last s_active slots of the tile's last fold: slot 128·bl − s_a + a
// of that fold is partition p = (128·bl − s_a + a) / bl, row j = (128·bl − s_a + a) % bl, i.e.
// k_sb[:, folds − 1, j, p] and v_sb[p, (folds − 1)·bl + j, :]. K comes from k_active_sb
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
