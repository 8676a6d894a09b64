// The FlashAttention performance tutorial's kernels v8a to v11 (aws-neuron/nki-samples
// src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py, last changed in
// f35a06a): v8 refactored into per-q-tile stage functions (qk_max, exp_row_sum,
// transpose_scores, pv_matmul, write_back) called from a sequential loop, then given direct
// allocation (v9), a software-pipelined schedule on top of it (v10), and the schedule alone with
// the compiler's allocation (v11). v1 to v8 are in attn_fwd_tiled.cpp.
//
// What changes from v8: the output is bf16; the identity used by the transposes comes from an
// `nl.shared_constant` (generated on chip here, kernels/nki_lowering.h); V and P are transposed
// by matmuls against it (v8a and v11 pass is_transpose / is_moving_onezero, hints that change
// nothing on trn1); the exp reads the SBUF copy of the scores that tensor_scalar_reduce writes;
// every per-q-tile buffer is declared once, at kernel scope.
//
// Direct allocation (v9, v10): the source's module-level SBufAllocator hands out consecutive
// byte offsets in declaration order (size * num_buffers * dtype bytes; every tensor has its
// partition dim first, so mod_alloc's num_free_tiles changes nothing and each tensor is one
// region at its offset). PSUM: psum.mod_alloc puts v_psum_t block j in bank j % 8, qk and
// scores_psum_t block (i, j) in bank j % 7 (the same banks: the source relies on their uses not
// overlapping) and attn_out_psum in bank 7. Block-indexed PSUM tensors are declared here per
// block, in the loop that writes and reads the block, at the block's bank; the compiler's
// allocation of v8a and v11 gets the same per-block tiles without placements.
//
// The source accumulates PV into an `nl.ndarray` PSUM tile (no zeros): an accumulation group
// whose first matmul overwrites, peeled from its loop. The module-level allocator is never reset,
// so a second trace in one Python process would start where the first ended; offsets here start
// at 0, as for a fresh process.
#include <map>
#include <string>

#include "kernels/attn_fwd/attn_fwd_common.h"
#include "kernels/families.h"
#include "kernels/nki_lowering.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

using V = AttnFwdVersion;

// d_head, q rows per tile (also keys per transpose and PV matmul), keys per QK matmul
constexpr int64_t kDh = kAttnFwdDHead, kRows = kAttnFwdQTile, kKeys = kAttnFwdKvTile;
constexpr int64_t kPvPerQk = kKeys / kRows;  // PV matmuls per 512-key QK tile (fused_qkmax_and_pv)

// Largest seqlen of the declared domain, where every option set fits trn1 (Registry test
// EveryOptionSetFitsAtItsDomainMaximum); `ncverify frontier --up-to 16384` gives the rest. The
// fp32 option set is the limit: v9/v10 place scores_sbuf_t's end at 128b + 1292 + 3Sb + 14S +
// 3S/128 bytes (b = input dtype bytes), inside the 176 KiB direct allocation may use up to 6656
// (placements are honoured as written, model/ir/liveness.h rule 5); v11 (same buffers, the
// compiler's allocation: v_sbuf dead after the V transposes, the per-block PSUM tiles one bank
// each) to 7680; v8a (single-buffered qk_sbuf) to 9728.
int64_t max_seqlen(V v) {
  if (v == V::v8a) return 9728;
  return v == V::v11 ? 7680 : 6656;
}

constexpr int kQueueQ = 0, kQueueK = 1, kQueueV = 2, kQueueOut = 3;

class StagedBuilder {
 public:
  StagedBuilder(V version, const Options& o)
      : ver_(version),
        b_(attn_fwd_name(version)),
        x_(option_dtype(o)),
        placed_(version == V::v9 || version == V::v10),
        slotted_(version != V::v8a) {}

  Program build() {
    S_ = b_.param("seqlen", kAttnFwdMinSeqlen, max_seqlen(ver_), kKeys);
    Nq_ = Expr::floordiv(S_, kRows);
    Nk_ = Expr::floordiv(S_, kKeys);
    const int64_t xb = static_cast<int64_t>(dtype_size(x_));
    auto q = b_.input("q", x_, {kDh, S_});
    auto k = b_.input("k", x_, {kDh, S_});
    auto v = b_.input("v", x_, {kDh, S_});
    out_ = b_.output("out", DType::bf16, {S_, kDh});  // kernel_out is bf16 from v8a on

    // identity_load = nl.load(shared_constant(identity, dtype=v.dtype)); identity_bf16 =
    // tensor_copy(identity_load, dtype=bf16)
    identity_ = b_.sbuf("identity_load", x_, {kRows, kRows}, sbuf_at(kRows * xb));
    identity_on_chip(b_, identity_());
    identity_bf16_ = b_.sbuf("identity_bf16", DType::bf16, {kRows, kRows}, sbuf_at(kRows * 2));
    b_.tensor_copy(identity_bf16_(), identity_());
    q_sbuf_ = b_.sbuf("q_sbuf", x_, {kDh, S_}, sbuf_at(S_ * xb));
    k_sbuf_ = b_.sbuf("k_sbuf", x_, {kDh, S_}, sbuf_at(S_ * xb));
    auto v_sbuf = b_.sbuf("v_sbuf", x_, {kDh, S_}, sbuf_at(S_ * xb));
    b_.dma_copy(q_sbuf_(), q(), kQueueQ);
    b_.dma_copy(k_sbuf_(), k(), kQueueK);
    b_.dma_copy(v_sbuf(), v(), kQueueV);

    // v_sbuf_t[:, j, :] = tensor_copy(nc_matmul(v_sbuf[:, j*128:+128], identity_load), bf16)
    v_sbuf_t_ = b_.sbuf("v_sbuf_t", DType::bf16, {kRows, Nq_, kDh}, sbuf_at(S_ * 2));
    b_.affine_range("i_tile_kv", Nq_, [&](Expr j) {
      auto v_psum_t = b_.psum("v_psum_t", DType::fp32, {kRows, kDh}, psum_at(Expr::mod(j, 8)));
      b_.matmul(v_psum_t(), v_sbuf({all(), ds(j * kRows, kRows)}), identity_());
      b_.tensor_copy(v_sbuf_t_({all(), one(j), all()}), v_psum_t());
    });

    declare_stage_buffers();
    if (ver_ == V::v8a || ver_ == V::v9) {
      b_.sequential_range("i_tile_q", Nq_, [&](Expr i) {
        qk_max(i);
        exp_row_sum(i);
        transpose_scores(i);
        pv_matmul(i);
        write_back(i);
      });
    } else {
      // software pipelining: the QK and max of tile i + 2 interleaved with the PV of tile i
      qk_max(Expr(0));
      exp_row_sum(Expr(0));
      transpose_scores(Expr(0));
      qk_max(Expr(1));
      // sequential_range(Nq - 2, directives=no_reorder())
      b_.sequential_range("i_tile_q", Nq_ - 2, [&](Expr i) {
        exp_row_sum(i + 1);
        fused_qkmax_and_pv(i);
        transpose_scores(i + 1);
        write_back(i);
      });
      pv_matmul(Nq_ - 2);
      write_back(Nq_ - 2);
      exp_row_sum(Nq_ - 1);
      transpose_scores(Nq_ - 1);
      pv_matmul(Nq_ - 1);
      write_back(Nq_ - 1);
    }
    return b_.finish();
  }

 private:
  // A PSUM block declared again by each call of its stage: "qk", "qk_1", ... (IR tensor names
  // are unique; the source has one block-indexed tensor).
  std::string fresh(const std::string& name) {
    const int n = declared_[name]++;
    return n == 0 ? name : name + "_" + std::to_string(n);
  }

  // The next SBUF offset of the source's SBufAllocator (v9, v10), or the compiler's choice.
  BufferOptions sbuf_at(Expr bytes) {
    if (!placed_) return {};
    BufferOptions o{.placement = Placement{Expr(0), next_}};
    next_ = next_ + bytes;
    return o;
  }
  BufferOptions psum_at(Expr bank) const {
    if (!placed_) return {};
    return {.placement = Placement{Expr(0), bank * psum_bank_bytes()}};
  }

  // In the source's declaration order (v8a declares sum_row_tiles and row_max_kv last; its
  // kernel-scope row_max_kv is shadowed by qk_max's local one and never used, so it is not
  // declared here).
  void declare_stage_buffers() {
    const Expr slots = slotted_ ? Expr(2) : Expr(1);
    auto per_tile_row = [&](const std::string& name, DType dt, std::vector<Expr> free, Expr bytes) {
      return b_.sbuf(name, dt, free, sbuf_at(bytes));
    };
    if (slotted_) {
      qk_sbuf_ = per_tile_row("qk_sbuf", DType::fp32, {kRows, slots, Nk_, kKeys}, slots * S_ * 4);
      row_max_kv_ = per_tile_row("row_max_kv", DType::fp32, {kRows, Nk_}, Nk_ * 4);
    } else {
      qk_sbuf_ = per_tile_row("qk_sbuf", DType::fp32, {kRows, Nk_, kKeys}, S_ * 4);
    }
    row_max_ = per_tile_row("row_max", DType::fp32, {kRows, 1}, Expr(4));
    exp_row_ = per_tile_row("exp_row", DType::bf16, {kRows, S_}, S_ * 2);
    if (slotted_) {
      sum_row_tiles_ =
          per_tile_row("sum_row_tiles", DType::fp32, {kRows, slots, Nk_}, slots * Nk_ * 4);
    }
    sum_row_ = per_tile_row("sum_row", DType::fp32, {kRows, 1}, Expr(4));
    inverse_sum_row_ = per_tile_row("inverse_sum_row", DType::fp32, {kRows, 1}, Expr(4));
    scores_sbuf_t_ = per_tile_row("scores_sbuf_t", DType::bf16, {kRows, Nq_, kRows}, S_ * 2);
    attn_out_ = per_tile_row("attn_out", DType::fp32, {kRows, kDh}, Expr(kDh * 4));
    attn_out_sbuf_ = per_tile_row("attn_out_sbuf", DType::fp32, {kRows, kDh}, Expr(kDh * 4));
    if (!slotted_) {
      sum_row_tiles_ = per_tile_row("sum_row_tiles", DType::fp32, {kRows, Nk_}, Nk_ * 4);
    }
  }

  // qk_sbuf[:, slot(i), j, :] (v9 on: the free-dim double buffer indexed i % 2)
  Access qk_sbuf(Expr i, Expr j) const {
    return slotted_ ? qk_sbuf_({all(), one(Expr::mod(i, 2)), one(j), all()})
                    : qk_sbuf_({all(), one(j), all()});
  }
  Access sum_row_tiles(Expr i, std::optional<Expr> j) const {
    Slice cols = j ? one(*j) : all();
    return slotted_ ? sum_row_tiles_({all(), one(Expr::mod(i, 2)), cols})
                    : sum_row_tiles_({all(), cols});
  }

  // qk[i, j] = nc_matmul(q tile i, k keys j*512:+512); qk_sbuf = tensor_scalar_reduce(qk[i, j],
  // multiply 1.0, max -> row_max_kv[:, j])
  void qk_tile(Expr i, Expr j, const TensorRef& row_max_kv) {
    auto qk = b_.psum(fresh("qk"), DType::fp32, {kRows, kKeys}, psum_at(Expr::mod(j, 7)));
    b_.matmul(qk(), q_sbuf_({all(), ds(i * kRows, kRows)}), k_sbuf_({all(), ds(j * kKeys, kKeys)}));
    b_.tensor_scalar_reduce(qk_sbuf(i, j), qk(), AluOp::multiply, Imm{1.0f}, AluOp::max,
                            row_max_kv({all(), one(j)}));
  }

  void qk_max(Expr i) {
    // v8a: qk_max declares its own row_max_kv
    const TensorRef row_max_kv =
        slotted_ ? row_max_kv_ : b_.sbuf(fresh("row_max_kv"), DType::fp32, {kRows, Nk_});
    b_.affine_range("i_tile_kv", Nk_, [&](Expr j) { qk_tile(i, j, row_max_kv); });
    b_.tensor_reduce(row_max_(), row_max_kv(), AluOp::max, 1, true);  // -max
  }

  void exp_row_sum(Expr i) {
    b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
      b_.activation(exp_row_({all(), ds(j * kKeys, kKeys)}), qk_sbuf(i, j),
                    {.func = ActFunc::exp,
                     .bias = row_max_(),
                     .reduce_cmd = ReduceCmd::reset_reduce,
                     .reduce_res = sum_row_tiles(i, j)});
    });
  }

  // scores_psum_t[i, j] = nc_matmul(exp_row[:, j*128:+128], identity_bf16) = P^T tile;
  // scores_sbuf_t[:, j, :] = tensor_copy(..., dtype=bf16)
  void transpose_scores(Expr /*i*/) {
    b_.affine_range("i_tile_kv", Nq_, [&](Expr j) {
      auto ps =
          b_.psum(fresh("scores_psum_t"), DType::fp32, {kRows, kRows}, psum_at(Expr::mod(j, 7)));
      b_.matmul(ps(), exp_row_({all(), ds(j * kRows, kRows)}), identity_bf16_());
      b_.tensor_copy(scores_sbuf_t_({all(), one(j), all()}), ps());
    });
  }

  void pv(const TensorRef& psum, Expr j, bool accumulate) {
    b_.matmul(psum(), scores_sbuf_t_({all(), one(j), all()}), v_sbuf_t_({all(), one(j), all()}),
              accumulate);
  }
  TensorRef attn_out_psum() {
    return b_.psum(fresh("attn_out_psum"), DType::fp32, {kRows, kDh}, psum_at(Expr(7)));
  }

  // attn_out_psum[i] += nc_matmul(scores_sbuf_t[:, j], v_sbuf_t[:, j]); attn_out_sbuf = copy
  void pv_matmul(Expr /*i*/) {
    auto psum = attn_out_psum();
    pv(psum, Expr(0), false);
    b_.affine_range("i_tile_kv", 1, Nq_, 1, [&](Expr j) { pv(psum, j, true); });
    b_.tensor_copy(attn_out_sbuf_(), psum());
  }

  void write_back(Expr i) {
    b_.tensor_reduce(sum_row_(), sum_row_tiles(i, std::nullopt), AluOp::add);
    b_.reciprocal(inverse_sum_row_(), sum_row_());
    b_.tensor_scalar(attn_out_(), attn_out_sbuf_(), AluOp::multiply, inverse_sum_row_(), false,
                     std::nullopt, Imm{0.0f}, false, Engine::Vector);
    b_.dma_copy(out_({ds(i * kRows, kRows), all()}), attn_out_(), kQueueOut);
  }

  // For each 512-key tile j: QK and partial max of q tile i + 2, then the four PV matmuls of q
  // tile i over the same keys; then PV's copy-out and tile i + 2's -max.
  void fused_qkmax_and_pv(Expr i) {
    auto psum = attn_out_psum();
    auto body = [&](Expr j, bool first) {
      qk_tile(i + 2, j, row_max_kv_);
      if (first) {
        pv(psum, Expr(0), false);
        b_.affine_range("i_tile_kv_i", 1, kPvPerQk, 1, [&](Expr t) { pv(psum, t, true); });
      } else {
        b_.affine_range("i_tile_kv_i", kPvPerQk, [&](Expr t) { pv(psum, j * kPvPerQk + t, true); });
      }
    };
    body(Expr(0), true);
    b_.affine_range("i_tile_kv", 1, Nk_, 1, [&](Expr j) { body(j, false); });
    b_.tensor_copy(attn_out_sbuf_(), psum());
    b_.tensor_reduce(row_max_(), row_max_kv_(), AluOp::max, 1, true);
  }

  V ver_;
  Builder b_;
  DType x_;
  bool placed_;   // direct allocation (v9, v10)
  bool slotted_;  // qk_sbuf and sum_row_tiles double-buffered in a free dim (v9 on)
  Expr next_ = Expr(0);
  std::map<std::string, int> declared_;
  Expr S_, Nq_, Nk_;
  TensorRef out_, identity_, identity_bf16_, q_sbuf_, k_sbuf_, v_sbuf_t_;
  TensorRef qk_sbuf_, row_max_kv_, row_max_, exp_row_, sum_row_tiles_, sum_row_, inverse_sum_row_,
      scores_sbuf_t_, attn_out_, attn_out_sbuf_;
};

}  // namespace

Program build_attn_fwd_staged(AttnFwdVersion v, const Options& o) {
  return StagedBuilder(v, o).build();
}

}  // namespace ncv::kernels
