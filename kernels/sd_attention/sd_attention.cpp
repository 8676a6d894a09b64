// The sd_attention family: the NKI fused self-attention kernel for small head sizes
// (`fused_self_attn_for_SD_small_head_size`, nki-samples tutorials/sd_attention @7af4e4d), the five
// Autocomp rewrites of the calibration file (ucb-bar/autocomp examples/trn-tutorial/
// 5_sd_attention_trace.py), and the reference kernel's batched layout (nki-samples
// reference/attention.py @8370e11). One builder, parametrised by a per-step configuration.
//
// Per q tile of 128 rows the kernel computes all S/128 score tiles (Q K^T, Q pre-scaled by 0.125)
// into a [128, S] SBUF row block, the row max from per-tile partial maxima, one S-wide exp, the
// row sums, the transposes of P, PV accumulated in PSUM over all key tiles, and the deferred
// division by the row sums. Nothing is skipped for the causal mask.
//
// Calls whose engine the NKI source does not pin are emitted unpinned: the compiler-choice rules
// (model/compiler/README.md) pick the engine when the program runs, as the Neuron compiler does.
// What stays here is the lowering of NKI calls onto IR instructions:
//   nl.copy / nisa.tensor_copy without engine (PSUM evictions, casts)  -> unpinned tensor_copy
//   tile * 0.125                                                     -> unpinned tensor_scalar
//   1.0 / tile                                                       -> unpinned reciprocal
//   tile.broadcast_to((128, d))                                      -> unpinned tensor_copy of
//                                                                       a step-0 (broadcast) view
//   nisa.nc_transpose without engine                                 -> the engine
//                                                                       nc_transpose_engine
//                                                                       picks by shape (Tensor:
//                                                                       an fp32 PSUM tile, as on
//                                                                       v2, and a copy back)
//   nc_transpose(engine=nisa.vector_engine) (steps 3-4)              -> pinned Vector transposes
//   nl.zeros(psum) + `+=` nc_matmul                                  -> accumulation group: the
//                                                                       first matmul overwrites
//   affine_select on a PSUM tile (GpSimd cannot read PSUM)          -> tensor_copy to SBUF,
//                                                                       then affine_select in
//                                                                       place
// Buffers are declared single-buffered (the source gives no `bufs`); how many copies the
// compiler's allocator gives the loop-local ones is a compiler choice (compiler_buffers).
#include <string>

#include "kernels/families.h"
#include "kernels/nki_lowering.h"
#include "kernels/sd_attention/sd_attention_common.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

// Largest seqlen of the declared domain: every option set fits trn1 there (registry test
// EveryOptionSetFitsAtItsDomainMaximum); SdAttention.LargestSeqlenThatFitsTrn1 records the real
// per-option limits.
constexpr int64_t kMaxSeqlen = 4096;

constexpr int64_t kTile = 128;            // q_seq_tile_size = k_seq_tile_size = v_seq_tile_size
constexpr float kMaskValue = -9984.0f;    // "Magic number -9984.0 to replace -inf"
constexpr int64_t kVectorTranspose = 32;  // VectorE transpose block (ISA-OLD nc_transpose)

// DMA queues: the source leaves them to the compiler; V, Q, K and the stores get one each.
constexpr int kQueueV = 0, kQueueQ = 1, kQueueK = 2, kQueueOut = 3;

enum class Preload {
  separate,  // three loops: V; Q; K (tutorial, step 1)
  qk_fused,  // V; one loop for Q and K (step 2)
  fused,     // one loop for V, Q and K (steps 3-5)
};

enum class ExpForm {
  // exp_res (kernel_dtype) = activation; sum_res = tensor_reduce(add, exp_res);
  // softmax_res = nl.copy(exp_res, pe) (tutorial)
  separate_sum,
  // softmax_res (pe) = activation(..., reduce into sum_res) (steps 1, 2; steps 4, 5 into exp_res)
  fused_pe,
  // exp_res (kernel_dtype) = activation(..., reduce into sum_acc); softmax_res = tensor_copy
  // (step 3)
  fused_then_copy,
};

struct StepConfig {
  int step = 0;          // Autocomp step; 0 = the tutorial
  bool batched = false;  // reference layout q [bs, d, S], k/v/out [bs, S, d], SPMD over bs
  Preload preload = Preload::separate;
  bool k_block_copy = false;  // step 2: K lands in k_block and is copied into k_local
  bool pe_scores = false;     // steps 4-5: qk_res_buf (and the eviction) in the pe dtype
  ExpForm exp = ExpForm::separate_sum;
  bool vector_divisor_transpose = false;  // steps 3-4: nc_transpose(engine=vector_engine)
  bool flipped_pv = false;                // step 5: P^T stationary, [128, d] PSUM, tensor_scalar
};

StepConfig step_config(int step) {
  StepConfig c;
  c.step = step;
  if (step >= 1) c.exp = ExpForm::fused_pe;
  if (step == 2) {
    c.preload = Preload::qk_fused;
    c.k_block_copy = true;
  }
  if (step >= 3) c.preload = Preload::fused;
  if (step == 3) c.exp = ExpForm::fused_then_copy;
  if (step == 3 || step == 4) c.vector_divisor_transpose = true;
  if (step >= 4) c.pe_scores = true;
  if (step == 5) c.flipped_pv = true;
  return c;
}

Slice tile(Expr i) {
  return ds(i * kTile, kTile);
}

// Swaps the last two view dims of a 3-D HBM view (the batched kernel's transposing K load and
// store; transposed() handles 2-D views only).
Access swap_last_two(Access a) {
  a.perm = {0, 2, 1};
  return a;
}

class SdAttentionBuilder {
 public:
  SdAttentionBuilder(const StepConfig& cfg, const Options& o, const std::string& name)
      : cfg_(cfg),
        b_(name),
        causal_(option_flag(o, "use_causal_mask")),
        kd_(option_dtype(o)),
        pe_(pe_dtype(o)) {}

  Program build() {
    S_ = b_.param("seqlen", 128, kMaxSeqlen, kTile);
    d_ = b_.param("d_head", 1, 128);
    T_ = Expr::floordiv(S_, kTile);
    if (cfg_.batched) {
      Expr bs = b_.param("bs", 1, 64);
      b_.grid(bs);
      batch_ = Builder::program_id();
      q_ = b_.input("q", kd_, {bs, d_, S_});
      k_ = b_.input("k", kd_, {bs, S_, d_});
      v_ = b_.input("v", kd_, {bs, S_, d_});
      out_ = b_.output("out", kd_, {bs, S_, d_});
    } else {
      q_ = b_.input("q", kd_, {S_, d_});
      k_ = b_.input("k", kd_, {S_, d_});
      v_ = b_.input("v", kd_, {S_, d_});
      out_ = b_.output("out", kd_, {S_, d_});
    }
    preload();
    b_.affine_range("i_q_seq_tile", T_, [&](Expr i) { q_tile(i); });
    return b_.finish();
  }

 private:
  // HBM views of one 128-row tile.
  Access v_rows(Expr i) const {  // v[i*128 + ip_v, if_v]: [128, d]
    return cfg_.batched ? v_({one(batch_), tile(i), all()}) : v_({tile(i), all()});
  }
  Access q_cols(Expr i) const {  // load_transpose2d(q[i*128 + .., :]) or q[b, :, i*128 + ..]
    return cfg_.batched ? q_({one(batch_), all(), tile(i)}) : transposed(q_({tile(i), all()}));
  }
  Access k_cols(Expr i) const {  // load_transpose2d(k[(b,) i*128 + .., :]): [d, 128]
    return cfg_.batched ? swap_last_two(k_({one(batch_), tile(i), all()}))
                        : transposed(k_({tile(i), all()}));
  }
  Access out_rows(Expr i) const {  // out[(b,) i*128 + .., :] as [128, d]
    return cfg_.batched ? out_({one(batch_), tile(i), all()}) : out_({tile(i), all()});
  }
  Access out_cols(Expr i) const {  // out[(b,) i*128 + if_out, ip_out]: transposing store [d, 128]
    return cfg_.batched ? swap_last_two(out_rows(i)) : transposed(out_rows(i));
  }

  // ---- Preload: trans_v (P=128, T, d), q_local (T, P=d, 128), k_local (T, P=d, 128), all pe.
  // The NKI block dim T of q_local/k_local becomes a free dim after the partition dim here.
  void preload() {
    trans_v_ = b_.sbuf("trans_v", pe_, {kTile, T_, d_});
    q_local_ = b_.sbuf("q_local", pe_, {d_, T_, kTile});
    k_local_ = b_.sbuf("k_local", pe_, {d_, T_, kTile});
    switch (cfg_.preload) {
      case Preload::separate:
        b_.affine_range("i_k_seq_tile", T_, [&](Expr i) { load_v(i); });
        b_.affine_range("i_q_seq_tile", T_, [&](Expr i) { load_q(i, "q_t"); });
        b_.affine_range("i_k_seq_tile", T_, [&](Expr i) { load_k(i); });
        break;
      case Preload::qk_fused:
        b_.affine_range("i_k_seq_tile", T_, [&](Expr i) { load_v(i); });
        b_.affine_range("i_seq", T_, [&](Expr i) {
          load_q(i, "q_block");
          load_k(i);
        });
        break;
      case Preload::fused:
        b_.affine_range("i_seq_tile", T_, [&](Expr i) {
          load_v(i);
          load_q(i, "q_block");
          load_k(i);
        });
        break;
    }
  }
  // trans_v[ip_v, i, if_v] = nl.load(v_ref[i*128 + ip_v, if_v], dtype=pe_in_dt)
  void load_v(Expr i) { b_.dma_copy(trans_v_({all(), one(i), all()}), v_rows(i), kQueueV); }
  // t = nl.load_transpose2d(q_ref[...], dtype=pe_in_dt) (batched: nl.load(q_ref[b, ip_q, ...]));
  // q_local[i, ip_q, if_q] = t * softmax_scale
  void load_q(Expr i, const std::string& tmp_name) {
    auto t = b_.sbuf(tmp_name, pe_, {d_, kTile});
    b_.dma_copy(t(), q_cols(i), kQueueQ);
    b_.tensor_scalar(q_local_({all(), one(i), all()}), t(), AluOp::multiply,
                     Imm{static_cast<float>(kSdSoftmaxScale)});
  }
  // k_local[i, ip_k, if_k] = nl.load_transpose2d(k_ref[...], dtype=pe_in_dt); step 2 loads into
  // k_block and assigns `k_local[i, ip, if_] = k_block` (a copy, as written).
  void load_k(Expr i) {
    Access dst = k_local_({all(), one(i), all()});
    if (!cfg_.k_block_copy) {
      b_.dma_copy(dst, k_cols(i), kQueueK);
      return;
    }
    auto k_block = b_.sbuf("k_block", pe_, {d_, kTile});
    b_.dma_copy(k_block(), k_cols(i), kQueueK);
    b_.tensor_copy(dst, k_block());
  }

  // nc_transpose without engine (kernels/nki_lowering.h).
  void nc_transpose(const std::string& psum_name, Access dst, Access src, Expr p, Expr f) {
    nc_transpose_unpinned(b_, psum_name, dst, src, p, f);
  }

  // ---- Main loop body for q tile i (research note A.4 L4 and D.1-D.5).
  void q_tile(Expr i) {
    const DType score_dt = cfg_.pe_scores ? pe_ : kd_;
    auto qk_res_buf = b_.sbuf("qk_res_buf", score_dt, {kTile, S_});
    auto neg_max_res = b_.sbuf("neg_max_res", kd_, {kTile, T_});
    b_.affine_range("i_k_seq_tile", T_, [&](Expr j) {
      // qk_psum = nl.zeros(psum); qk_psum += nc_matmul(moving=k_local[j], stationary=q_local[i])
      auto qk_psum = b_.psum("qk_psum", DType::fp32, {kTile, kTile});
      b_.matmul(qk_psum(), q_local_({all(), one(i), all()}), k_local_({all(), one(j), all()}));
      Access scores = qk_res_buf({all(), tile(j)});
      // Eviction: nl.copy / tensor_copy(qk_psum, dtype) or affine_select(pred, qk_psum, -9984)
      b_.tensor_copy(scores, qk_psum());
      if (causal_) {
        // pred: i*128 + p >= j*128 + f, i.e. (i*128 - j*128) + p - f >= 0
        b_.affine_select(scores, scores, i * kTile - j * kTile, 1, {-1}, CmpOp::ge, kMaskValue);
      }
      // neg_max_res[:, j] = tensor_reduce(max, qk_res_buf[:, j*128:+128], negate=True)
      b_.tensor_reduce(neg_max_res({all(), one(j)}), scores, AluOp::max, 1, true);
    });
    // neg_max_res_final = tensor_reduce(min, neg_max_res) = -rowmax
    auto neg_max_final = b_.sbuf("neg_max_res_final", kd_, {kTile, 1});
    b_.tensor_reduce(neg_max_final(), neg_max_res(), AluOp::min);

    Access p = softmax(qk_res_buf(), neg_max_final());  // [128, S] pe: unnormalised P

    // trans_softmax_res[:, j, :] = nc_transpose(P[:, j*128:+128])
    auto trans_softmax_res = b_.sbuf("trans_softmax_res", pe_, {kTile, T_, kTile});
    b_.affine_range("i_k_seq_tile", T_, [&](Expr j) {
      Access block = p;
      block.dims[1] = AccessDim{j * kTile, Expr(kTile), 1};
      nc_transpose("trans_psum", trans_softmax_res({all(), one(j), all()}), block, kTile, kTile);
    });
    if (cfg_.flipped_pv) {
      output_flipped(i, trans_softmax_res);
    } else {
      output_tutorial(i, trans_softmax_res);
    }
  }

  // exp, row sums, reciprocal (and its broadcast for the tutorial's normalisation). Returns P.
  Access softmax(Access scores, Access neg_max) {
    ActivationArgs exp{.func = ActFunc::exp, .scale = Imm{1.0f}, .bias = neg_max};
    Access p;
    if (cfg_.exp == ExpForm::separate_sum) {
      auto softmax_res = b_.sbuf("softmax_res", pe_, {kTile, S_});
      sum_divisor_ = b_.sbuf("sum_divisor", kd_, {kTile, d_});
      // exp_res = activation(exp, qk_res_buf, bias=neg_max_res_final, scale=1.0): kernel_dtype
      auto exp_res = b_.sbuf("exp_res", kd_, {kTile, S_});
      b_.activation(exp_res(), scores, exp);
      // sum_res = tensor_reduce(add, exp_res)
      auto sum_res = b_.sbuf("sum_res", kd_, {kTile, 1});
      b_.tensor_reduce(sum_res(), exp_res(), AluOp::add);
      // softmax_res = nl.copy(exp_res, dtype=pe_in_dt)
      b_.tensor_copy(softmax_res(), exp_res());
      sum_ = sum_res();
      p = softmax_res();
    } else {
      // sum_res / sum_acc = nl.zeros((128, 1), kernel_dtype); activation(exp, ...,
      // reduce_op=add, reduce_res=sum, reduce_cmd=reset_reduce, dtype=...)
      const bool steps12 = cfg_.step <= 2;
      TensorRef softmax_res;
      if (steps12) softmax_res = b_.sbuf("softmax_res", pe_, {kTile, S_});
      auto sum = b_.sbuf(steps12 ? "sum_res" : "sum_acc", kd_, {kTile, 1});
      b_.memset(sum(), 0.0f);
      exp.reduce_cmd = ReduceCmd::reset_reduce;
      exp.reduce_res = sum();
      sum_ = sum();
      if (steps12) {
        b_.activation(softmax_res(), scores, exp);
        p = softmax_res();
      } else if (cfg_.exp == ExpForm::fused_then_copy) {
        // step 3: exp_res (kernel_dtype) then softmax_res = tensor_copy(exp_res, dtype=pe)
        auto exp_res = b_.sbuf("exp_res", kd_, {kTile, S_});
        b_.activation(exp_res(), scores, exp);
        auto sm = b_.sbuf("softmax_res", pe_, {kTile, S_});
        b_.tensor_copy(sm(), exp_res());
        p = sm();
      } else {
        // steps 4-5: exp_res (pe) is P; the transposes read it
        auto exp_res = b_.sbuf("exp_res", pe_, {kTile, S_});
        b_.activation(exp_res(), scores, exp);
        p = exp_res();
      }
    }
    // sum_reciprocal = 1.0 / sum (kernel_dtype, [128, 1])
    auto recip = b_.sbuf("sum_reciprocal", kd_, {kTile, 1});
    b_.reciprocal(recip(), sum_);
    recip_ = recip();
    if (!cfg_.flipped_pv) {
      // sum_divisor = nl.copy / tensor_copy(sum_reciprocal.broadcast_to((128, d)), kernel_dtype)
      if (cfg_.exp != ExpForm::separate_sum)
        sum_divisor_ = b_.sbuf("sum_divisor", kd_, {kTile, d_});
      b_.tensor_copy(sum_divisor_(), broadcast(recip_, 1, d_));
    }
    return p;
  }

  // Tutorial to step 4: attn_res_psum [d, 128] += nc_matmul(stationary=trans_v[j] [128, d],
  // moving=trans_softmax_res[j] [128, 128]); copy out of PSUM; multiply by the transposed
  // divisor; transposing store.
  void output_tutorial(Expr i, const TensorRef& trans_softmax_res) {
    auto attn_res_psum = b_.psum("attn_res_psum", DType::fp32, {d_, kTile});
    auto pv = [&](Expr j, bool accumulate) {
      b_.matmul(attn_res_psum(), trans_v_({all(), one(j), all()}),
                trans_softmax_res({all(), one(j), all()}), accumulate);
    };
    pv(Expr(0), false);  // the first matmul of the accumulation group overwrites the PSUM zeros
    b_.affine_range("i_k_seq_tile", 1, T_, 1, [&](Expr j) { pv(j, true); });
    // attn_res_sbuf = nl.copy / tensor_copy(attn_res_psum, dtype=kernel_dtype)
    auto attn_res_sbuf = b_.sbuf("attn_res_sbuf", kd_, {d_, kTile});
    b_.tensor_copy(attn_res_sbuf(), attn_res_psum());
    // nc_transpose(sum_divisor [128, d]) -> [d, 128]
    TensorRef divisor_t;
    if (cfg_.vector_divisor_transpose) {
      // divisor_vec = nc_transpose(sum_divisor, engine=vector_engine): a [128, d] tile exceeds
      // the 32x32 VectorE transpose, so it is modelled as the compiler's tiling into 32x32
      // blocks (the last d block partial when d is not a multiple of 32).
      divisor_t = b_.sbuf("divisor_vec", kd_, {d_, kTile});
      Expr d_blocks = Expr::floordiv(d_ + (kVectorTranspose - 1), kVectorTranspose);
      b_.affine_range("i_tp_q", kTile / kVectorTranspose, [&](Expr a) {
        b_.affine_range("i_tp_d", d_blocks, [&](Expr c) {
          Expr w = Expr::min(Expr(kVectorTranspose), d_ - c * kVectorTranspose);
          Slice rows = ds(a * kVectorTranspose, kVectorTranspose);
          Slice cols = ds(c * kVectorTranspose, w);
          b_.transpose(divisor_t({cols, rows}), sum_divisor_({rows, cols}), Engine::Vector);
        });
      });
    } else {
      divisor_t = b_.sbuf("divisor_t", kd_, {d_, kTile});
      nc_transpose("divisor_psum", divisor_t(), sum_divisor_(), kTile, d_);
    }
    // attn_res_div = attn_res_sbuf * divisor_t
    auto attn_res_div = b_.sbuf("attn_res_div", kd_, {d_, kTile});
    b_.tensor_tensor(attn_res_div(), attn_res_sbuf(), divisor_t(), AluOp::multiply);
    // nl.store(out_ref[i*128 + if_out, ip_out], value=attn_res_div): transposing store
    b_.dma_copy(out_cols(i), attn_res_div(), kQueueOut);
  }

  // Step 5: attn_res_psum [128, d] += nc_matmul(stationary=trans_softmax_res[j],
  // moving=trans_v[j]); attn_res_div = tensor_scalar(attn_res_psum, multiply, sum_reciprocal,
  // dtype=kernel_dtype) straight from PSUM; plain store.
  void output_flipped(Expr i, const TensorRef& trans_softmax_res) {
    auto attn_res_psum = b_.psum("attn_res_psum", DType::fp32, {kTile, d_});
    auto pv = [&](Expr j, bool accumulate) {
      b_.matmul(attn_res_psum(), trans_softmax_res({all(), one(j), all()}),
                trans_v_({all(), one(j), all()}), accumulate);
    };
    pv(Expr(0), false);
    b_.affine_range("i_k_seq_tile", 1, T_, 1, [&](Expr j) { pv(j, true); });
    auto attn_res_div = b_.sbuf("attn_res_div", kd_, {kTile, d_});
    b_.tensor_scalar(attn_res_div(), attn_res_psum(), AluOp::multiply, recip_);
    b_.dma_copy(out_rows(i), attn_res_div(), kQueueOut);
  }

  StepConfig cfg_;
  Builder b_;
  bool causal_;
  DType kd_, pe_;  // kernel_dtype (= input dtype), pe_in_dt
  Expr S_, d_, T_, batch_;
  TensorRef q_, k_, v_, out_;
  TensorRef trans_v_, q_local_, k_local_;
  TensorRef sum_divisor_;
  Access sum_, recip_;
};

Program build_sd_attention(const StepConfig& cfg, const Options& o, const std::string& name) {
  return SdAttentionBuilder(cfg, o, name).build();
}

const char* const kTutorialSource =
    "aws-neuron/nki-samples src/nki_samples/tutorials/sd_attention/sd_attention_nki_kernels.py "
    "fused_self_attn_for_SD_small_head_size @7af4e4d0210b";
const char* const kBatchedSource =
    "aws-neuron/nki-samples src/nki_samples/reference/attention.py "
    "fused_self_attn_for_SD_small_head_size (lines 1080-1288) @8370e11ba8d8";

std::vector<std::string> common_notes() {
  return {
      "softmax scale fixed at 0.125 (1/sqrt(64)) whatever d_head is, as in the source; the spec "
      "uses 0.125",
      "seqlen must be a multiple of 128: the source does not assert it, but a tail would leave "
      "rows of out unwritten",
      "causal: every score tile is still computed; masked scores are set to -9984.0 (exp "
      "underflows to 0), no tile is skipped",
      "affine_select cannot read PSUM (GpSimd): the causal path evicts the score tile to SBUF "
      "first and masks it in place (a compiler-inserted copy in the source)",
      "calls without engine= are unpinned and placed by the compiler-choice rules "
      "(model/compiler: float copies and PSUM evictions on the Scalar engine, t * 0.125 as a "
      "Scalar activation, 1/x on Vector); nc_transpose without engine on the engine its shape "
      "selects (Tensor here, through an fp32 PSUM tile and a copy back); buffers declared "
      "single-buffered (no bufs in the source), the compiler double-buffers loop-local ones",
      "kernel_dtype = the dtype option (scores, max, sums, divisor, output); mixed_precision "
      "selects bf16 (else fp32) Tensor-engine operands",
      "seqlen <= 4096 (the calibration shape): every option set fits trn1's SBUF there at "
      "d_head = 128; beyond it the [128, S] row buffers and the preloaded Q/K/V outgrow SBUF "
      "for some option sets (fp32 operands at d_head 64: fits up to 9984, not at 10112; `ncverify "
      "frontier`)",
  };
}

}  // namespace

std::vector<Variant> sd_attention_variants() {
  struct Step {
    const char* name;
    const char* summary;
    bool same_numerics;
    std::vector<std::string> notes;
  };
  const std::vector<Step> steps = {
      {"sd_attention",
       "NKI SD fused self-attention tutorial (d_head <= 128): per 128-row q tile, all score tiles "
       "into a [128, S] row block, one S-wide exp, Tensor-engine transposes of P, PV in PSUM, "
       "deferred division by the row sums, transposing store",
       false,
       {}},
      {"sd_attention_step1",
       "Autocomp step 1 (fused softmax): the exp activation writes P in the pe dtype and sums the "
       "row in its accumulator (no exp_res, no separate sum or cast)",
       false,
       {"not bit-identical to sd_attention: the row sum adds the fp32 activation results instead "
        "of exp_res rounded to kernel_dtype, and P is rounded once from fp32 instead of from "
        "exp_res; identical when dtype is fp32, different for dtype bf16"}},
      {"sd_attention_step2",
       "Autocomp step 2: the Q and K preload loops fused into one (K through a k_block copy)",
       true,
       {"bit-identical to step 1: only the preload loops change; the K copy is exact"}},
      {"sd_attention_step3",
       "Autocomp step 3: one preload loop for V, Q and K; exp written in kernel_dtype with the "
       "row sum fused and a separate copy to pe; divisor transposed on the Vector engine",
       false,
       {"not bit-identical to step 2: P = pe(kernel_dtype(exp)) instead of pe(exp), which "
        "differs for dtype bf16 without mixed precision (bf16 exp fed as fp32 P); identical for "
        "the other option combinations with finite inputs",
        "the VectorE transpose of the [128, d] divisor exceeds the 32x32 VectorE limit; modelled "
        "as the compiler tiling it into 32x32 vector transposes (the source compiled and ran)"}},
      {"sd_attention_step4",
       "Autocomp step 4: scores stored in the pe dtype (bf16 with mixed precision) and the exp "
       "writes P in the pe dtype again",
       false,
       {"not bit-identical to step 3: max and exp read bf16-rounded scores",
        "the VectorE transpose of the [128, d] divisor is modelled as 32x32 vector transposes"}},
      {"sd_attention_step5",
       "Autocomp step 5: flipped PV matmul (P^T stationary) into a [128, d] PSUM tile, "
       "normalised by one tensor_scalar multiply with the [128, 1] reciprocal straight from "
       "PSUM; plain store",
       false,
       {"PV is bit-identical to step 4 (same fma chain per element, operands swapped), but the "
        "normalisation rounds once (fl(acc * r)) instead of twice (fl(fl(acc) * r)) in "
        "kernel_dtype: identical for dtype fp32, different for dtype bf16"}},
  };
  const char* const autocomp_source =
      "ucb-bar/autocomp examples/trn-tutorial/5_sd_attention_trace.py, step ";
  std::vector<Variant> out;
  for (int s = 0; s < static_cast<int>(steps.size()); ++s) {
    Variant v;
    v.name = steps[s].name;
    v.family = "sd_attention";
    v.models = s == 0 ? std::string(kTutorialSource)
                      : std::string(autocomp_source) + std::to_string(s) +
                            "; calibration trn1-sd-attention-autocomp.json";
    v.summary = steps[s].summary;
    v.rewrites = s == 0 ? "" : steps[s - 1].name;
    v.same_numerics_as_predecessor = steps[s].same_numerics;
    v.options = sd_attention_options();
    v.notes = common_notes();
    v.notes.insert(v.notes.end(), steps[s].notes.begin(), steps[s].notes.end());
    const StepConfig cfg = step_config(s);
    const std::string name = v.name;
    v.build = [cfg, name](const Options& o) { return build_sd_attention(cfg, o, name); };
    v.contract = [s](const Options& o) { return sd_attention_contract(o, s); };
    v.spec = sd_attention_spec;
    v.layout = Layout{{"q", {Axis::seq, Axis::dim}},
                      {"k", {Axis::seq, Axis::dim}},
                      {"v", {Axis::seq, Axis::dim}},
                      {"out", {Axis::seq, Axis::dim}}};
    out.push_back(std::move(v));
  }

  Variant v;
  v.name = "sd_attention_batched";
  v.family = "sd_attention";
  v.models = kBatchedSource;
  v.summary =
      "The reference-library version of the tutorial kernel: q [bs, d, S] loaded without a "
      "transpose, k/v/out [bs, S, d], one SPMD program instance per batch entry";
  v.options = sd_attention_options();
  v.notes = common_notes();
  v.notes.push_back(
      "SPMD kernel[bs]: modelled as a grid of bs program instances (program_id = batch index), "
      "each with its own SBUF/PSUM; on hardware the instances may share one NeuronCore");
  StepConfig cfg = step_config(0);
  cfg.batched = true;
  v.build = [cfg](const Options& o) { return build_sd_attention(cfg, o, "sd_attention_batched"); };
  v.contract = [](const Options& o) { return sd_attention_contract(o, 0); };
  v.spec = sd_attention_spec;
  v.layout = Layout{{"q", {Axis::batch, Axis::dim, Axis::seq}},
                    {"k", {Axis::batch, Axis::seq, Axis::dim}},
                    {"v", {Axis::batch, Axis::seq, Axis::dim}},
                    {"out", {Axis::batch, Axis::seq, Axis::dim}}};
  out.push_back(std::move(v));
  return out;
}

}  // namespace ncv::kernels
