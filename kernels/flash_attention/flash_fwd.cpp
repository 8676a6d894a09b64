// flash_fwd: the NKI reference flash-attention forward kernel (nki-samples
// src/nki_samples/reference/attention.py `flash_fwd` @8370e11), written against the builder from
// the source read at that commit (loop nest, buffers, dtypes, guards).
//
// Per (batch, kv head, q head of its group) the kernel keeps, for every 128-row q tile, a running
// row max m, an unnormalised output o and a running log-sum-exp l, and walks the keys in large
// tiles of L (seq_tile_size) keys. Per (q tile, large tile) `_flash_attention_core` computes the
// scores in 512-key PSUM tiles, masks them (causal / sliding window), takes the tile max, rescales
// o by exp(m_prev - m), exponentiates (the row sum from the fp32 activation results), transposes P
// on the Tensor engine, accumulates PV in PSUM, adds it to o and updates l = m + log(exp(l - m) +
// sum). The output is o * exp(m - l).
//
// The source skips work with Python `if`s on loop indices; the IR has no `if`, so each guard is a
// loop bound (trip counts may be 0):
//   (i, j) guard, causal: i*128 >= j*L          -> i1 starts at max(0, j*L/128 - i0*T)
//   (i, j) guard, window w: (j+1)*L - 1 > i*128 - w -> i1 < ((j+1)*L - 2 + w) // 128 + 1 - i0*T
//   per 512-key tile k_i, causal: the matmul runs iff i*128 >= k_start (left or diagonal tiles:
//   k_i <= kd = (i*128 - j*L) // 512); the other (right) tiles get qk_psum = 0 and are masked.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "kernels/flash_attention/flash_fwd_common.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

constexpr int64_t kP = 128;    // B_P_SIZE: q rows per tile, keys per PV matmul
constexpr int64_t kF = 512;    // B_F_SIZE: keys per QK matmul (one PSUM bank of fp32)
constexpr int64_t kRt = 2048;  // REDUCTION_TILE = min(2048, L / 2)

// A 512-key score tile against the causal diagonal: left of it (every key visible), on it (the
// causal select), right of it (every key masked, no matmul). Without the causal mask every tile
// is `left`.
enum class TileKind : uint8_t { left, diagonal, right };

// DMA queues: the source leaves them to the compiler; K, V, Q and the stores get one each.
constexpr int kQueueK = 0, kQueueV = 1, kQueueQ = 2, kQueueOut = 3;

class FlashFwdBuilder {
 public:
  explicit FlashFwdBuilder(const Options& o)
      : b_("flash_fwd"), cfg_(flash_fwd_config(o)), kd_(cfg_.kernel_dtype), acc_(cfg_.acc_dtype) {}

  Program build() {
    const int64_t L = cfg_.seq_tile_size;
    Expr bs = b_.param("bs", 1, kFlashMaxBatch);
    Expr kvh = b_.param("kv_heads", 1, kFlashMaxKvHeads);
    G_ = b_.param("group", 1, kFlashMaxGroup);
    S_ = b_.param("seqlen", L, kFlashMaxSeqlen, L);  // the source asserts Sk % L == 0
    d_ = b_.param("d_head", 1, 128);                 // asserted d <= 128
    if (cfg_.sliding_window) w_ = b_.param("window", 1, kFlashMaxSeqlen);
    b_.grid(bs);
    batch_ = Builder::program_id();
    Expr heads = G_ * kvh;
    q_ = b_.input("q", cfg_.io_dtype, {bs, heads, d_, S_});
    k_ = b_.input("k", cfg_.io_dtype, {bs, kvh, d_, S_});
    v_ = b_.input("v", cfg_.io_dtype, {bs, kvh, S_, d_});
    out_ = b_.output("o", cfg_.io_dtype, {bs, heads, S_, d_});
    if (cfg_.logit_bias) {
      // attention.py:298, 420-422: logit_bias [1, 1, Sq, Sk], broadcast over batch and heads.
      bias_ = b_.input("logit_bias", cfg_.io_dtype, {Expr(1), Expr(1), S_, S_});
    }
    if (cfg_.training) {
      // attention.py: lse [b, h, 128, n_tile_q] in lse_dtype or acc_type (acc_type here).
      lse_ = b_.output("lse", acc_, {bs, heads, Expr(kP), Expr::floordiv(S_, kP)});
    }

    n_ = Expr::floordiv(S_, kP);  // n_tile_q
    // attention.py:435-436: n_remat = div_ceil(n_tile_q, attn_core_tile_size), then the tile
    // count capped by n_tile_q.
    const int64_t core_tiles = cfg_.attn_core_tile_size;
    Expr n_remat = Expr::floordiv(n_ + (core_tiles - 1), core_tiles);
    T_ = Expr::min(n_, Expr(core_tiles));
    Expr n_large = Expr::floordiv(S_, L);  // num_large_k_tile
    // Grid axis 1 (kv heads) as a loop: the IR grid is 1-D and Expr divides by constants only.
    b_.affine_range("head_id", kvh, [&](Expr head) {
      b_.affine_range("i_q_h", G_, [&](Expr qh) {
        Expr q_head = head * G_ + qh;
        auto l_buffer = b_.sbuf("l_buffer", acc_, {kP, n_});
        b_.memset(l_buffer(), kFp32Min);
        b_.sequential_range("i0", n_remat, [&](Expr i0) {
          auto o_buffer = b_.sbuf("o_buffer", acc_, {kP, T_, d_});
          auto m_buffer = b_.sbuf("m_buffer", acc_, {kP, T_});
          b_.memset(o_buffer(), 0.0f);
          b_.memset(m_buffer(), kFp32Min);
          b_.sequential_range("j", n_large, [&](Expr j) {
            auto k_tile = b_.sbuf("cur_k_tile", kd_, {d_, Expr(L)});
            b_.dma_copy(k_tile(), k_({one(batch_), one(head), all(), ds(j * L, L)}), kQueueK);
            auto v_tile = b_.sbuf("cur_v_tile", kd_, {kP, Expr(L / kP), d_});
            b_.affine_range("v_i", L / kP, [&](Expr vi) {
              b_.dma_copy(v_tile({all(), one(vi), all()}),
                          v_({one(batch_), one(head), ds(j * L + vi * kP, kP), all()}), kQueueV);
            });
            auto [lo, hi] = q_tile_range(i0, j);
            b_.affine_range("i1", lo, hi, 1, [&](Expr i1) {
              Expr i = i0 * T_ + i1;
              auto q_sbuf = b_.sbuf("q_sbuf_tile", kd_, {d_, kP});
              b_.dma_copy(q_sbuf(), q_({one(batch_), one(q_head), all(), ds(i * kP, kP)}), kQueueQ);
              auto q_tile = b_.sbuf("q_tile", kd_, {d_, kP});
              b_.tensor_scalar(q_tile(), q_sbuf(), AluOp::multiply, Imm{cfg_.softmax_scale});
              std::optional<TensorRef> bias_tile;
              if (cfg_.logit_bias) {
                // attention.py:478-483: the bias of q tile i and large tile j, in kernel_dtype.
                bias_tile = b_.sbuf("logit_bias_tile", kd_, {kP, Expr(L)});
                b_.dma_copy((*bias_tile)(),
                            bias_({one(Expr(0)), one(Expr(0)), ds(i * kP, kP), ds(j * L, L)}),
                            kQueueQ);
              }
              core(i, i1, j, q_tile(), k_tile, v_tile, o_buffer, l_buffer, m_buffer, bias_tile);
            });
          });
          // out = o * exp(m - l), rounded to kernel_dtype, stored.
          b_.affine_range("i1", Expr::min(T_, n_ - i0 * T_), [&](Expr i1) {
            Expr i = i0 * T_ + i1;
            auto scale = b_.sbuf("exp", acc_, {kP, 1});
            b_.activation(scale(), l_buffer({all(), one(i)}),
                          {.func = ActFunc::exp,
                           .scale = Imm{-1.0f},
                           .bias = Operand{m_buffer({all(), one(i1)})}});
            auto out = b_.sbuf("out", kd_, {kP, d_});
            b_.tensor_scalar(out(), o_buffer({all(), one(i1), all()}), AluOp::multiply, scale());
            b_.dma_copy(out_({one(batch_), one(q_head), ds(i * kP, kP), all()}), out(), kQueueOut);
          });
        });
        // attention.py:510-511: if training, nl.store(lse[b, head_id*G + i_q_h, :, :], l_buffer)
        if (cfg_.training) {
          b_.dma_copy(lse_({one(batch_), one(q_head), all(), all()}), l_buffer(), kQueueOut);
        }
      });
    });
    return b_.finish();
  }

 private:
  // The q tiles i = i0*T + i1 that large tile j reaches, as [lo, hi) on i1 (the per-(i, j) guard).
  std::pair<Expr, Expr> q_tile_range(Expr i0, Expr j) const {
    const int64_t L = cfg_.seq_tile_size;
    Expr base = i0 * T_;
    Expr hi = Expr::min(T_, n_ - base);
    if (!cfg_.causal) return {Expr(0), hi};
    // i*128 >= j*L: exact, L is a multiple of 128.
    Expr lo = Expr::max(Expr(0), j * (L / kP) - base);
    if (cfg_.sliding_window) {
      // (j+1)*L - 1 > i*128 - w, i.e. i <= ((j+1)*L - 2 + w) // 128: the first row of tile i
      // has the earliest window start, so the tile is skipped only when every row is masked.
      hi = Expr::min(hi, Expr::floordiv((j + 1) * L - 2 + w_, kP) + 1 - base);
    }
    return {lo, Expr::max(lo, hi)};
  }

  // _flash_attention_core for q tile i (i1 within the pass) and large tile j.
  void core(Expr i, Expr i1, Expr j, Access q_tile, const TensorRef& k_tile,
            const TensorRef& v_tile, const TensorRef& o_buffer, const TensorRef& l_buffer,
            const TensorRef& m_buffer, const std::optional<TensorRef>& bias_tile) {
    const int64_t L = cfg_.seq_tile_size;
    const int64_t nk = L / kF;
    auto qk_res_buf = b_.sbuf("qk_res_buf", acc_, {kP, Expr(L)});
    auto max_local = b_.sbuf("max_local", acc_, {kP, Expr(nk)});
    // One 512-key score tile of kind `kind`: QK^T into PSUM (or 0 for a tile right of the
    // diagonal), to SBUF (a copy: affine_select cannot read PSUM, GpSimd; or, with the bias, the
    // add that reads PSUM), the masks, the tile max.
    auto score_tile = [&](Expr ki, TileKind kind) {
      const bool multiply = kind != TileKind::right;
      Expr k_start = j * L + ki * kF;
      // Distinct names: the builder wants one declaration per name (the bias path has a loop
      // for the left tiles and one for the diagonal tile).
      const char* name = !multiply                                 ? "qk_psum_zero"
                         : bias_tile && kind == TileKind::diagonal ? "qk_psum_diagonal"
                                                                   : "qk_psum";
      auto qk_psum = b_.psum(name, DType::fp32, {kP, Expr(kF)});
      if (multiply) {
        b_.matmul(qk_psum(), q_tile, k_tile({all(), ds(ki * kF, kF)}));
      } else {
        b_.memset(qk_psum(), 0.0f);
      }
      Access scores = qk_res_buf({all(), ds(ki * kF, kF)});
      if (bias_tile && multiply) {
        // attention.py:155-157, 164-166, 186-189: nl.add(qk_psum, logit_bias_tile[:, k_i
        // slice], dtype=acc_type) on left and diagonal tiles (every tile without the causal
        // mask); right tiles (attention.py:146-152) are masked whole, without the bias.
        b_.tensor_tensor(scores, qk_psum(), (*bias_tile)({all(), ds(ki * kF, kF)}), AluOp::add);
      } else {
        b_.tensor_copy(scores, qk_psum());
      }
      // With the bias the source selects on diagonal and right tiles only (attention.py:158-161,
      // 149-152); without it on every tile. On a left tile the causal select keeps everything.
      if (cfg_.causal && !(bias_tile && kind == TileKind::left)) {
        // q_pos >= k_pos: (i*128 + p) - (k_start + f) >= 0
        b_.affine_select(scores, scores, i * kP - k_start, 1, {-1}, CmpOp::ge, kFp32Min);
        if (cfg_.sliding_window && multiply) {
          // k_pos > q_pos - w: (k_start + f) - (i*128 + p) + w > 0 (diagonal and left tiles)
          b_.affine_select(scores, scores, k_start - i * kP + w_, -1, {1}, CmpOp::gt, kFp32Min);
        }
      }
      b_.tensor_reduce(max_local({all(), one(ki)}), scores, AluOp::max);
    };
    if (cfg_.causal) {
      // kd: the diagonal 512-key tile; tiles k_i <= kd need the matmul, the rest are masked.
      Expr kd = Expr::floordiv(i * kP - j * L, kF);
      Expr split = Expr::min(Expr(nk), kd + 1);
      if (bias_tile) {
        // The source treats left and diagonal tiles apart when it adds the bias: three ranges.
        Expr left_end = Expr::min(Expr(nk), kd);
        b_.affine_range("k_i", left_end, [&](Expr ki) { score_tile(ki, TileKind::left); });
        b_.affine_range("k_i", left_end, split, 1,
                        [&](Expr ki) { score_tile(ki, TileKind::diagonal); });
      } else {
        b_.affine_range("k_i", split, [&](Expr ki) { score_tile(ki, TileKind::diagonal); });
      }
      b_.affine_range("k_i", split, Expr(nk), 1, [&](Expr ki) { score_tile(ki, TileKind::right); });
    } else {
      b_.affine_range("k_i", nk, [&](Expr ki) { score_tile(ki, TileKind::left); });
    }
    auto max_ = b_.sbuf("max_", acc_, {kP, 1});
    b_.tensor_reduce(max_(), max_local(), AluOp::max);

    // Online softmax: m = max(m_prev, max_), alpha = exp(m_prev - m), o_prev * alpha.
    Access m_cur = m_buffer({all(), one(i1)});
    auto m_prev = b_.sbuf("m_previous", acc_, {kP, 1});
    b_.tensor_copy(m_prev(), m_cur);
    b_.tensor_tensor(m_cur, m_prev(), max_(), AluOp::max);
    auto alpha = b_.sbuf("alpha", acc_, {kP, 1});
    b_.activation(alpha(), m_cur,
                  {.func = ActFunc::exp, .scale = Imm{-1.0f}, .bias = Operand{m_prev()}});
    Access o_cur = o_buffer({all(), one(i1), all()});
    auto o_scaled = b_.sbuf("o_previous_scaled", acc_, {kP, d_});
    b_.tensor_scalar(o_scaled(), o_cur, AluOp::multiply, alpha());

    // p = exp(s - m) in kernel_dtype, the row sum per reduction tile from the fp32 results.
    const int64_t rt = std::min(kRt, L / 2);
    auto neg_m = b_.sbuf("neg_max", acc_, {kP, 1});  // bias = -1 * m_current
    b_.tensor_scalar(neg_m(), m_cur, AluOp::multiply, Imm{-1.0f});
    auto p_local = b_.sbuf("p_local", kd_, {kP, Expr(L)});
    auto p_partial = b_.sbuf("p_partial_sum", acc_, {kP, Expr(L / rt)});
    b_.affine_range("k_r_i", L / rt, [&](Expr r) {
      b_.activation(p_local({all(), ds(r * rt, rt)}), qk_res_buf({all(), ds(r * rt, rt)}),
                    {.func = ActFunc::exp,
                     .scale = Imm{1.0f},
                     .bias = Operand{neg_m()},
                     .reduce_cmd = ReduceCmd::reset_reduce,
                     .reduce_res = p_partial({all(), one(r)})});
    });
    auto ps = b_.sbuf("ps", acc_, {kP, 1});
    b_.tensor_reduce(ps(), p_partial(), AluOp::add);

    // transpose_p_local: 4 Tensor-engine transposes per 512 keys into one PSUM bank, one copy.
    auto p_t = b_.sbuf("p_local_transposed", kd_, {kP, Expr(L)});
    b_.affine_range("c", L / kF, [&](Expr c) {
      auto t_psum = b_.psum("p_local_t_tmp", DType::fp32, {kP, Expr(kF)});
      b_.affine_range("t", kF / kP, [&](Expr t) {
        b_.transpose(t_psum({all(), ds(t * kP, kP)}), p_local({all(), ds(c * kF + t * kP, kP)}),
                     Engine::Tensor);
      });
      b_.tensor_copy(p_t({all(), ds(c * kF, kF)}), t_psum());
    });

    // pv_psum += P^T[k_i] (stationary) x V[k_i]; the first matmul of the group overwrites.
    auto pv_psum = b_.psum("pv_psum", DType::fp32, {kP, d_});
    auto pv = [&](Expr ki, bool accumulate) {
      b_.matmul(pv_psum(), p_t({all(), ds(ki * kP, kP)}), v_tile({all(), one(ki), all()}),
                accumulate);
    };
    pv(Expr(0), false);
    b_.affine_range("k_i", 1, Expr(L / kP), 1, [&](Expr ki) { pv(ki, true); });
    b_.tensor_tensor(o_cur, o_scaled(), pv_psum(), AluOp::add);

    // l = m + log(exp(l_prev - m) + ps)
    Access l_cur = l_buffer({all(), one(i)});
    auto e = b_.sbuf("exp_l", acc_, {kP, 1});
    b_.activation(e(), m_cur, {.func = ActFunc::exp, .scale = Imm{-1.0f}, .bias = Operand{l_cur}});
    auto lg = b_.sbuf("log_l", acc_, {kP, 1});
    b_.activation(lg(), e(), {.func = ActFunc::log, .scale = Imm{1.0f}, .bias = Operand{ps()}});
    b_.tensor_tensor(l_cur, m_cur, lg(), AluOp::add);
  }

  Builder b_;
  FlashFwdConfig cfg_;
  DType kd_, acc_;
  Expr G_, S_, d_, w_, n_, T_, batch_;
  TensorRef q_, k_, v_, out_, lse_, bias_;
};

}  // namespace

Program build_flash_fwd(const Options& o) {
  if (const std::string why = flash_fwd_excluded(o); !why.empty()) {
    throw BuildError("flash_fwd: " + why);
  }
  return FlashFwdBuilder(o).build();
}

}  // namespace ncv::kernels
