#include "kernels/decode_attention/gen_mask_tkg.h"

#include "kernels/decode_attention/attention_tkg_block_kv.h"
#include "kernels/decode_attention/gen_mask_tkg_swa.h"

namespace ncv::kernels {

namespace {

// _generate_iota_tensor, flat cache (gen_mask_tkg.py lines 357-365): tmp_iota[p, t] = the key
// slot of partition p, tile t.
void flat_iota(Builder& b, const GenMaskTkgArgs& a, const TensorRef& tmp_iota) {
  if (!a.strided_mm1) {
    // iota(pattern [[128, n]], offset = base, channel_multiplier = 1): base + t * 128 + p
    b.iota(tmp_iota({all(), all(), all()}), a.iota_base, 1, {128, 0});
    return;
  }
  // Strided: iota(pattern [[1, n]], offset = base, channel_multiplier = n): base + p * n + t.
  // The IR's channel multiplier is a build-time constant and n = s_prior / 128 is a param, so
  // the p * n term is computed exactly in fp32 (values < 2^24) from two more iotas: base + t,
  // then + p * n with p and n each an iota column.
  b.iota(tmp_iota({all(), all(), all()}), a.iota_base, 0, {1, 0});
  auto part = b.sbuf("iota_partition" + a.name_suffix, DType::fp32, {128, 1});
  auto n_col = b.sbuf("iota_stride" + a.name_suffix, DType::fp32, {128, 1});
  b.iota(part(), Expr(0), 1, {0});
  b.iota(n_col(), a.n, 0, {0});
  b.tensor_tensor(part(), part(), n_col(), AluOp::multiply, Engine::Vector);
  b.tensor_scalar(tmp_iota({all(), all(), all()}), tmp_iota({all(), all(), all()}), AluOp::add,
                  part(), false, std::nullopt, Imm{0.0f}, false, Engine::Vector);
}

// load_active_mask_to_last_section, flat (lines 632-681): the active keys' rows of the HBM
// active mask into the last s_a slots of the tile.
void active_tail(Builder& b, const GenMaskTkgArgs& a) {
  const TensorRef& am = *a.active_mask;
  if (a.block_len > 0) {
    tkg::BlockKvTile t;
    t.block_len = a.block_len;
    t.batches = a.bs;
    t.batch_start = a.batch_start;
    tkg::load_block_active_mask(b, t, a.mask_out, am, a.n, a.s_active);
    return;
  }
  if (!a.strided_mm1) {
    // One DMA: active[:, batches] -> mask_out[128 - s_a:, n - 1]
    b.dma_copy(a.mask_out({ds(128 - a.s_active, a.s_active), one(a.n - 1), all(), all(), all()}),
               am({all(), ds(a.batch_start, a.bs), all(), all()}));
    return;
  }
  // Strided: key k sits at (p, t) = divmod(n * 128 - s_a + k, n); with s_a <= n (a domain
  // relation) that is p = 127, t = n - s_a + k: one DMA per key as in the source.
  b.affine_range("k_idx", a.s_active, [&](Expr k) {
    b.dma_copy(a.mask_out({ds(127, 1), one(a.n - a.s_active + k), all(), all(), all()}),
               am({one(k), ds(a.batch_start, a.bs), all(), all()}));
  });
}

// gen_mask_tkg's standard path: prior slot j visible to every query of batch b iff j < pos[b, 0].
void standard_masks(Builder& b, const GenMaskTkgArgs& a, const TensorRef& tmp_iota) {
  const Expr hs = a.q_head * a.s_active;
  // mask_iota = tmp_iota broadcast over H * s_a (ScalarE, lines 236-248)
  auto mask_iota = b.sbuf("mask_iota" + a.name_suffix, DType::fp32, {128, a.n, hs});
  b.tensor_copy(mask_iota(), broadcast(tmp_iota(), 2, hs), Engine::Scalar);
  // _create_batch_masks (lines 380-423): per batch cur_mask = mask_iota < pos[b, 0], each
  // batch its own buffer (not freed per batch), copied into mask_out[:, :, b] on the Scalar
  // engine for even batches and the Vector engine for odd ones.
  auto cur_mask = b.sbuf("cur_mask" + a.name_suffix, DType::uint8, {128, a.bs, a.n, hs});
  auto pos = [&](Expr bi) {
    Access col = a.pos_ids;
    col.dims[1] = AccessDim{a.pos_ids.dims[1].start + bi, Expr(1), 1};
    col.dims[2] = AccessDim{a.pos_ids.dims[2].start, Expr(1), 1};  // pos[b, 0]
    return col;
  };
  auto one_batch = [&](Expr bi, Engine e) {
    b.tensor_scalar(cur_mask({all(), one(bi), all(), all()}), mask_iota(), AluOp::is_lt, pos(bi));
    b.tensor_copy(a.mask_out({all(), all(), one(bi), all(), all()}),
                  cur_mask({all(), one(bi), all(), all()}), e);
  };
  b.affine_range("batch_even", Expr::floordiv(a.bs + 1, 2),
                 [&](Expr i) { one_batch(i * 2, Engine::Scalar); });
  b.affine_range("batch_odd", Expr::floordiv(a.bs, 2),
                 [&](Expr i) { one_batch(i * 2 + 1, Engine::Vector); });
}

}  // namespace

void gen_mask_tkg(Builder& b, const GenMaskTkgArgs& a) {
  // sbm.open_scope(name="gen_mask_tkg"): a one-trip loop is the IR's scope
  b.sequential_range("gen_mask_scope", 1, [&](Expr) {
    b.memset(a.mask_out(), 0.0f);  // line 175
    auto tmp_iota = b.sbuf("tmp_iota" + a.name_suffix, DType::fp32, {128, a.n, 1});
    b.memset(tmp_iota(), 0.0f);
    if (a.block_len > 0) {
      tkg::emit_slot_iota(b, tmp_iota(),
                          {tkg::SlotLayout::block, a.block_len, a.n, a.iota_base, a.name_suffix});
    } else {
      flat_iota(b, a, tmp_iota);
    }
    if (a.start_pos) {
      // _create_batch_masks_swa (lines 417-540): per query, no replication over the heads.
      tkg::emit_swa_mask(b, {tmp_iota(), a.mask_out, a.pos_ids, *a.start_pos, a.n, a.bs, a.q_head,
                             a.s_active, a.name_suffix});
    } else {
      standard_masks(b, a, tmp_iota);
    }
    if (a.active_mask) {
      b.sequential_range("load_active_mask", a.active_trips, [&](Expr) { active_tail(b, a); });
    }
  });
}

}  // namespace ncv::kernels
