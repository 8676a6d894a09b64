// The FlashAttention performance tutorial's kernels v1 to v8 (aws-neuron/nki-samples
// src/nki_samples/tutorials/attention_fwd_performance/attention_kernels.py, last changed in
// f35a06a), each version a rewrite of the one before; v8a to v11 are in attn_fwd_staged.cpp.
//
// All versions compute softmax(q^T k) v^T for q, k, v given as [128, S] (d_head on the
// partitions) with a two-pass softmax per 128-row q tile: the full row max first, then exp and
// sums with that max. What each version changes, from its comment in the source:
//   v1  one 128 x 128 tile with nki.language calls (the compiler places every op);
//   v2  the same with nki.isa calls: pinned Vector-engine tensor_scalar ops, a reciprocal;
//   v3  tiling for S >= 512; every softmax stage a loop nest of its own, round-tripping through
//       HBM scratch (norm_row, exp_row, scores, v_t, scores_t);
//   v4  loop fusion: one loop over q tiles holds QK, the softmax stages and PV;
//   v5  the division delayed: PV on unnormalised exp, the [128, 128] result times 1 / sum;
//   v6  subtract, exp and the partial row sums in one Scalar-engine activation (bias = -max);
//   v7  exp and V^T downcast to bf16 before the transposes and PV;
//   v8  a Vector tensor_scalar_reduce evicts the scores to SBUF with the partial max (the copy
//       is never read: the exp still reads PSUM, as in the source).
//
// Lowering of NKI calls (as in the sd_attention family):
//   calls without engine=                 -> unpinned; model/compiler picks the engine
//   nc_transpose / nl.transpose           -> kernels/nki_lowering.h (Tensor engine for
//                                            128 x 128: an fp32 PSUM tile and a copy back)
//   nl.matmul(x, y, transpose_x=False)    -> the compiler's transpose of x, then the matmul
//   nl.store of a PSUM tile               -> the compiler's fp32 copy to SBUF, then the store
//   nl.zeros(psum) and `+=` nc_matmul     -> an accumulation group whose first matmul
//                                            overwrites (peeled from the loop)
// Tensors the source rebinds to a new tile under the same Python name (v3's nl.load results)
// get a suffix naming their use: IR tensor names are unique.
// v3's first three loop nests (QK into one [Nq, Nk] PSUM tensor, the row max, the subtraction)
// are modelled fused per q tile: see kQkPhasesFused.
#include <string>

#include "kernels/attn_fwd/attn_fwd_common.h"
#include "kernels/families.h"
#include "kernels/nki_lowering.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

using V = AttnFwdVersion;

constexpr int64_t kD = kAttnFwdDHead;
constexpr int64_t kQ = kAttnFwdQTile;
constexpr int64_t kK = kAttnFwdKvTile;

// The largest seqlen of each version's declared domain: every option set fits trn1 there
// (Registry.EveryOptionSetFitsAtItsDomainMaximum); `ncverify frontier --up-to 16384` predicts
// beyond it. Under the compiler's allocation rules (model/ir/liveness.h) the Nk = S/512 score
// banks of a q tile are live from the QK loop to the last loop reading them (the max and the exp
// read every bank after all are written), and the PV and transpose banks come after: Nk banks
// at the peak, 8 at 4096 (trn1's whole PSUM), 9 at 4608. v3 likewise.
int64_t max_seqlen(V /*v*/) {
  return 4096;
}

// DMA queues: the source leaves them to the compiler; as in every kernel here, each HBM tensor
// gets its own, numbered by first transfer.
constexpr int kQueueQ = 0, kQueueK = 1, kQueueV = 2;

class TiledBuilder {
 public:
  TiledBuilder(V version, const Options& o)
      : ver_(version), b_(attn_fwd_name(version)), x_(option_dtype(o)) {}

  Program build() {
    if (ver_ == V::v1 || ver_ == V::v2) {
      S_ = b_.param("seqlen", kQ, kQ, kQ);  // `assert seqlen_q == 128`
    } else {
      S_ = b_.param("seqlen", kAttnFwdMinSeqlen, max_seqlen(ver_), kK);
    }
    Nq_ = Expr::floordiv(S_, kQ);
    Nk_ = Expr::floordiv(S_, kK);
    N128_ = Expr::floordiv(S_, kQ);
    q_ = b_.input("q", x_, {kD, S_});
    k_ = b_.input("k", x_, {kD, S_});
    v_ = b_.input("v", x_, {kD, S_});
    out_ = b_.output("out", x_, {S_, kD});
    // q_sbuf, k_sbuf, v_sbuf = nl.load(q), nl.load(k), nl.load(v): [128, S] in the input dtype
    q_sbuf_ = b_.sbuf("q_sbuf", x_, {kD, S_});
    k_sbuf_ = b_.sbuf("k_sbuf", x_, {kD, S_});
    v_sbuf_ = b_.sbuf("v_sbuf", x_, {kD, S_});
    b_.dma_copy(q_sbuf_(), q_(), kQueueQ);
    b_.dma_copy(k_sbuf_(), k_(), kQueueK);
    b_.dma_copy(v_sbuf_(), v_(), kQueueV);
    if (ver_ == V::v1 || ver_ == V::v2) {
      single_tile();
    } else if (ver_ == V::v3) {
      staged_through_hbm();
    } else {
      fused();
    }
    return b_.finish();
  }

 private:
  Slice q_cols(Expr i) const { return ds(i * kQ, kQ); }  // 128 q rows as columns of q_sbuf
  Slice k_cols(Expr j) const { return ds(j * kK, kK); }  // 512 keys
  Slice c128(Expr j) const { return ds(j * kQ, kQ); }    // 128 keys

  // ---- v1, v2: seqlen 128, no loops.
  void single_tile() {
    const bool isa = ver_ == V::v2;
    const EngineChoice vector = isa ? EngineChoice(Engine::Vector) : std::nullopt;
    // qk = matmul(q_sbuf, k_sbuf, transpose_x=True) / nc_matmul(stationary=q, moving=k)
    auto qk = b_.psum("qk", DType::fp32, {kQ, kQ});
    b_.matmul(qk(), q_sbuf_(), k_sbuf_());
    auto row_max = b_.sbuf("row_max", DType::fp32, {kQ, 1});
    b_.tensor_reduce(row_max(), qk(), AluOp::max);
    auto norm_row = b_.sbuf("norm_row", DType::fp32, {kQ, kQ});
    b_.tensor_scalar(norm_row(), qk(), AluOp::subtract, row_max(), false, std::nullopt, Imm{0.0f},
                     false, vector);
    auto exp_row = b_.sbuf("exp_row", DType::fp32, {kQ, kQ});
    b_.activation(exp_row(), norm_row(), {.func = ActFunc::exp});
    auto sum_row = b_.sbuf("sum_row", DType::fp32, {kQ, 1});
    b_.tensor_reduce(sum_row(), exp_row(), AluOp::add);
    TensorRef scores;
    if (!isa) {
      // scores = nl.divide(exp_row, sum_row): fp32
      scores = b_.sbuf("scores", DType::fp32, {kQ, kQ});
      b_.tensor_scalar(scores(), exp_row(), AluOp::divide, sum_row());
    } else {
      // inverse_sum_row = reciprocal(sum_row); scores = tensor_scalar(exp_row, multiply,
      // inverse_sum_row, engine=vector, dtype=q.dtype)
      auto inverse = b_.sbuf("inverse_sum_row", DType::fp32, {kQ, 1});
      b_.reciprocal(inverse(), sum_row());
      scores = b_.sbuf("scores", x_, {kQ, kQ});
      b_.tensor_scalar(scores(), exp_row(), AluOp::multiply, inverse(), false, std::nullopt,
                       Imm{0.0f}, false, vector);
    }
    // v_sbuf_t = nl.transpose(v_sbuf) / tensor_copy(nc_transpose(v_sbuf)): fp32 from PSUM
    auto v_sbuf_t = b_.sbuf("v_sbuf_t", DType::fp32, {kQ, kD});
    nc_transpose_unpinned(b_, "v_psum_t", v_sbuf_t(), v_sbuf_(), kD, kQ);
    // v1: nl.matmul(scores, v_sbuf_t, transpose_x=False) makes the compiler transpose scores;
    // v2 transposes it itself (tensor_copy(nc_transpose(scores))): fp32 from PSUM either way.
    auto scores_sbuf_t = b_.sbuf("scores_sbuf_t", DType::fp32, {kQ, kQ});
    nc_transpose_unpinned(b_, "scores_psum_t", scores_sbuf_t(), scores(), kQ, kQ);
    auto attn_out = b_.psum("attn_out", DType::fp32, {kQ, kD});
    b_.matmul(attn_out(), scores_sbuf_t(), v_sbuf_t());
    // nl.store(kernel_out, attn_out) from PSUM: the compiler's copy to SBUF first
    auto attn_out_sbuf = b_.sbuf("attn_out_sbuf", DType::fp32, {kQ, kD});
    b_.tensor_copy(attn_out_sbuf(), attn_out());
    b_.dma_copy(out_(), attn_out_sbuf(), kQueueV + 1);
  }

  // ---- v3: every softmax stage a loop nest of its own, through HBM scratch.
  //
  // kQkPhasesFused: the source declares qk as one PSUM tensor of Nq x Nk [128, 512] tiles
  // written by the QK loop nest and read by the max and subtraction nests, i.e. Nq * Nk banks
  // live at once (16 at S = 1024, of 8). Its test compiles and runs v3 at S = 4096, so the
  // compiler cannot have kept them: the three nests are affine loops over the same q tiles with
  // nothing in between, and fusing them per q tile (the middle-end loop fusion that v9 and v10
  // switch off with skip_middle_end_transformations) leaves Nk banks per q tile. That fused
  // form is what is modelled; the later nests stay separate (they meet through HBM).
  void staged_through_hbm() {
    // first transfers: norm_row, exp_row, scores, v_t, scores_t, out
    const int q_norm = 3, q_exp = 4, q_scores = 5, q_vt = 6, q_st = 7, q_out = 8;
    auto row_max = b_.sbuf("row_max", DType::fp32, {kQ, Nq_, 1});
    auto norm_row = b_.scratch("norm_row", DType::fp32, {Nq_, kQ, S_});
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto qk = b_.psum("qk", DType::fp32, {kQ, Nk_, kK});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.matmul(qk({all(), one(j), all()}), q_sbuf_({all(), q_cols(i)}),
                  k_sbuf_({all(), k_cols(j)}));
      });
      auto row_max_kv = b_.sbuf("row_max_kv", DType::fp32, {kQ, Nk_});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_reduce(row_max_kv({all(), one(j)}), qk({all(), one(j), all()}), AluOp::max);
      });
      b_.tensor_reduce(row_max({all(), one(i), all()}), row_max_kv(), AluOp::max);
      auto norm_buf = b_.sbuf("norm_buf", DType::fp32, {kQ, S_});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_scalar(norm_buf({all(), k_cols(j)}), qk({all(), one(j), all()}), AluOp::subtract,
                         row_max({all(), one(i), all()}), false, std::nullopt, Imm{0.0f}, false,
                         Engine::Vector);
      });
      b_.dma_copy(norm_row({one(i), all(), all()}), norm_buf(), q_norm);
    });
    // exp, one S-wide activation per q tile
    auto exp_row = b_.scratch("exp_row", DType::fp32, {Nq_, kQ, S_});
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto exp_buf = b_.sbuf("exp_buf", DType::fp32, {kQ, S_});
      auto norm_buf = b_.sbuf("norm_buf_loaded", DType::fp32, {kQ, S_});
      b_.dma_copy(norm_buf(), norm_row({one(i), all(), all()}), q_norm);
      b_.activation(exp_buf(), norm_buf(), {.func = ActFunc::exp});
      b_.dma_copy(exp_row({one(i), all(), all()}), exp_buf(), q_exp);
    });
    // sums, one S-wide reduce per q tile; one reciprocal over [128, Nq]
    auto sum_row = b_.sbuf("sum_row", DType::fp32, {kQ, Nq_});
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto exp_buf = b_.sbuf("exp_buf_to_sum", DType::fp32, {kQ, S_});
      b_.dma_copy(exp_buf(), exp_row({one(i), all(), all()}), q_exp);
      b_.tensor_reduce(sum_row({all(), one(i)}), exp_buf(), AluOp::add);
    });
    auto inverse_sum_row = b_.sbuf("inverse_sum_row", DType::fp32, {kQ, Nq_});
    b_.reciprocal(inverse_sum_row(), sum_row());
    auto scores = b_.scratch("scores", DType::fp32, {Nq_, kQ, S_});
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto scores_buf = b_.sbuf("scores_buf", DType::fp32, {kQ, S_});
      auto exp_buf = b_.sbuf("exp_buf_to_scale", DType::fp32, {kQ, S_});
      b_.dma_copy(exp_buf(), exp_row({one(i), all(), all()}), q_exp);
      b_.tensor_scalar(scores_buf(), exp_buf(), AluOp::multiply, inverse_sum_row({all(), one(i)}),
                       false, std::nullopt, Imm{0.0f}, false, Engine::Vector);
      b_.dma_copy(scores({one(i), all(), all()}), scores_buf(), q_scores);
    });
    // V^T tiles to HBM
    auto v_t = b_.scratch("v_t", DType::fp32, {N128_, kQ, kD});
    b_.affine_range("i_tile_kv", N128_, [&](Expr j) {
      auto v_sbuf_t = b_.sbuf("v_sbuf_t", DType::fp32, {kQ, kD});
      nc_transpose_unpinned(b_, "v_psum_t", v_sbuf_t(), v_sbuf_({all(), c128(j)}), kD, kQ);
      b_.dma_copy(v_t({one(j), all(), all()}), v_sbuf_t(), q_vt);
    });
    // P^T tiles to HBM: each a strided [128, 128] read of scores
    auto scores_t = b_.scratch("scores_t", DType::fp32, {N128_, Nq_, kQ, kQ});
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      b_.affine_range("i_tile_kv", N128_, [&](Expr j) {
        auto scores_buf = b_.sbuf("scores_tile", DType::fp32, {kQ, kQ});
        b_.dma_copy(scores_buf(), scores({one(i), all(), c128(j)}), q_scores);
        auto scores_sbuf_t = b_.sbuf("scores_sbuf_t", DType::fp32, {kQ, kQ});
        nc_transpose_unpinned(b_, "scores_psum_t", scores_sbuf_t(), scores_buf(), kQ, kQ);
        b_.dma_copy(scores_t({one(j), one(i), all(), all()}), scores_sbuf_t(), q_st);
      });
    });
    // PV per q tile, both operands loaded from HBM per key tile
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto attn_out_psum = b_.psum("attn_out_psum", DType::fp32, {kQ, kQ});
      auto attn_out = b_.sbuf("attn_out", DType::fp32, {kQ, kD});
      // the peeled first matmul's loads are tensors of their own ("..._first")
      auto pv = [&](Expr j, bool accumulate) {
        const std::string tail = accumulate ? "_loaded" : "_first";
        auto scores_sbuf_t = b_.sbuf("scores_sbuf_t" + tail, DType::fp32, {kQ, kQ});
        b_.dma_copy(scores_sbuf_t(), scores_t({one(j), one(i), all(), all()}), q_st);
        auto v_sbuf_t = b_.sbuf("v_sbuf_t" + tail, DType::fp32, {kQ, kD});
        b_.dma_copy(v_sbuf_t(), v_t({one(j), all(), all()}), q_vt);
        b_.matmul(attn_out_psum(), scores_sbuf_t(), v_sbuf_t(), accumulate);
      };
      pv(Expr(0), false);
      b_.affine_range("i_tile_kv", 1, N128_, 1, [&](Expr j) { pv(j, true); });
      b_.tensor_copy(attn_out(), attn_out_psum());
      b_.dma_copy(out_({c128(i), all()}), attn_out(), q_out);
    });
  }

  // ---- v4 to v8: one loop over q tiles.
  void fused() {
    const DType pv_dt = at_least(ver_, V::v7) ? DType::bf16 : DType::fp32;
    const int q_out = kQueueV + 1;
    // v_sbuf_t[:, j, :] = tensor_copy(nc_transpose(v_sbuf[:, j*128:+128]), dtype=...)
    auto v_sbuf_t = b_.sbuf("v_sbuf_t", pv_dt, {kQ, N128_, kD});
    b_.affine_range("i_tile_kv", N128_, [&](Expr j) {
      nc_transpose_unpinned(b_, "v_psum_t", v_sbuf_t({all(), one(j), all()}),
                            v_sbuf_({all(), c128(j)}), kD, kQ);
    });
    b_.affine_range("i_tile_q", Nq_, [&](Expr i) {
      auto qk = b_.psum("qk", DType::fp32, {kQ, Nk_, kK});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.matmul(qk({all(), one(j), all()}), q_sbuf_({all(), q_cols(i)}),
                  k_sbuf_({all(), k_cols(j)}));
      });
      Access p = softmax(qk);  // [128, S]: normalised (v4) or not
      // scores_sbuf_t[:, j, :] = tensor_copy(nc_transpose(P[:, j*128:+128]), dtype=pv_dt)
      auto scores_sbuf_t = b_.sbuf("scores_sbuf_t", pv_dt, {kQ, N128_, kQ});
      b_.affine_range("i_tile_kv", N128_, [&](Expr j) {
        Access block = p;
        block.dims[1] = AccessDim{j * kQ, Expr(kQ), 1};
        nc_transpose_unpinned(b_, "scores_psum_t", scores_sbuf_t({all(), one(j), all()}), block, kQ,
                              kQ);
      });
      auto attn_out = b_.sbuf("attn_out", DType::fp32, {kQ, kD});
      auto attn_out_psum = b_.psum("attn_out_psum", DType::fp32, {kQ, kD});
      auto pv = [&](Expr j, bool accumulate) {
        b_.matmul(attn_out_psum(), scores_sbuf_t({all(), one(j), all()}),
                  v_sbuf_t({all(), one(j), all()}), accumulate);
      };
      pv(Expr(0), false);
      b_.affine_range("i_tile_kv", 1, N128_, 1, [&](Expr j) { pv(j, true); });
      if (ver_ == V::v4) {
        b_.tensor_copy(attn_out(), attn_out_psum());
      } else {
        // attn_out = tensor_scalar(attn_out_psum, multiply, inverse_sum_row, engine=vector)
        b_.tensor_scalar(attn_out(), attn_out_psum(), AluOp::multiply, inverse_sum_row_, false,
                         std::nullopt, Imm{0.0f}, false, Engine::Vector);
      }
      b_.dma_copy(out_({c128(i), all()}), attn_out(), q_out);
    });
  }

  // Row max, exp and row sums of one q tile's scores; returns what the transposes read. Sets
  // inverse_sum_row_.
  Access softmax(const TensorRef& qk) {
    auto tile = [&](Expr j) { return qk({all(), one(j), all()}); };
    auto row_max = b_.sbuf("row_max", DType::fp32, {kQ, 1});
    auto row_max_kv = b_.sbuf("row_max_kv", DType::fp32, {kQ, Nk_});
    if (ver_ == V::v8) {
      // qk_sbuf[:, j, :] = tensor_scalar_reduce(qk[j], multiply 1.0, max -> row_max_kv[:, j]);
      // qk_sbuf is never read (the exp below still reads PSUM, as in the source)
      auto qk_sbuf = b_.sbuf("qk_sbuf", DType::fp32, {kQ, Nk_, kK});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_scalar_reduce(qk_sbuf({all(), one(j), all()}), tile(j), AluOp::multiply,
                                Imm{1.0f}, AluOp::max, row_max_kv({all(), one(j)}));
      });
    } else {
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_reduce(row_max_kv({all(), one(j)}), tile(j), AluOp::max);
      });
    }
    // v6 on: row_max holds -max (negate=True), the exp's bias
    const bool fused_exp = at_least(ver_, V::v6);
    b_.tensor_reduce(row_max(), row_max_kv(), AluOp::max, 1, fused_exp);
    auto exp_row = b_.sbuf("exp_row", at_least(ver_, V::v7) ? DType::bf16 : DType::fp32, {kQ, S_});
    auto slice = [&](const TensorRef& t, Expr j) { return t({all(), k_cols(j)}); };
    TensorRef sums;
    if (fused_exp) {
      // exp_row[:, j*512:+512] = activation(exp, qk[j], bias=row_max, reduce add ->
      // sum_row_tiles[:, j], reset_reduce[, dtype=bf16])
      sums = b_.sbuf("sum_row_tiles", DType::fp32, {kQ, Nk_});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.activation(slice(exp_row, j), tile(j),
                      {.func = ActFunc::exp,
                       .bias = row_max(),
                       .reduce_cmd = ReduceCmd::reset_reduce,
                       .reduce_res = sums({all(), one(j)})});
      });
    } else {
      // norm_row = tensor_scalar(qk[j], subtract, row_max, engine=vector); exp per 512 keys;
      // partial sums per 512 keys
      auto norm_row = b_.sbuf("norm_row", DType::fp32, {kQ, S_});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_scalar(slice(norm_row, j), tile(j), AluOp::subtract, row_max(), false,
                         std::nullopt, Imm{0.0f}, false, Engine::Vector);
      });
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.activation(slice(exp_row, j), slice(norm_row, j), {.func = ActFunc::exp});
      });
      sums = b_.sbuf("sum_row_kv", DType::fp32, {kQ, Nk_});
      b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
        b_.tensor_reduce(sums({all(), one(j)}), slice(exp_row, j), AluOp::add);
      });
    }
    auto sum_row = b_.sbuf("sum_row", DType::fp32, {kQ, 1});
    b_.tensor_reduce(sum_row(), sums(), AluOp::add);
    auto inverse = b_.sbuf("inverse_sum_row", DType::fp32, {kQ, 1});
    b_.reciprocal(inverse(), sum_row());
    inverse_sum_row_ = inverse();
    if (ver_ != V::v4) return exp_row();
    // v4: scores[:, j*512:+512] = tensor_scalar(exp_row slice, multiply, inverse_sum_row,
    // engine=vector)
    auto scores = b_.sbuf("scores", DType::fp32, {kQ, S_});
    b_.affine_range("i_tile_kv", Nk_, [&](Expr j) {
      b_.tensor_scalar(slice(scores, j), slice(exp_row, j), AluOp::multiply, inverse(), false,
                       std::nullopt, Imm{0.0f}, false, Engine::Vector);
    });
    return scores();
  }

  V ver_;
  Builder b_;
  DType x_;
  Expr S_, Nq_, Nk_, N128_;
  TensorRef q_, k_, v_, out_, q_sbuf_, k_sbuf_, v_sbuf_;
  Access inverse_sum_row_;
};

}  // namespace

Program build_attn_fwd_tiled(AttnFwdVersion v, const Options& o) {
  return TiledBuilder(v, o).build();
}

}  // namespace ncv::kernels
