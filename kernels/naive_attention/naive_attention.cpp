// naive_attention: what a compiler produces for eager (unfused) attention. Every op of
//
//   scores = (q * 0.125) @ k.T
//   scores = scores.masked_fill(~causal, -9984.0)        # use_causal_mask only
//   m      = scores.amax(-1, keepdim=True)
//   e      = torch.exp(scores - m)
//   l      = e.sum(-1, keepdim=True)
//   p      = (e / l).to(q.dtype)                        # the cast: bf16 inputs only
//   out    = p @ v
//
// is lowered on its own: one loop nest over 128-row tiles that loads its inputs from HBM, computes,
// and stores its result to HBM. Like an eager lowering it takes any seqlen in [1, 8192]: the
// query and key axes are cut into ceil(S / 128) tiles, the last one partial (S - 128 * (tiles - 1)
// rows or keys), and every stage works on the top-left corner of its on-chip tiles. The [S, S]
// score matrix and each softmax stage are materialised in HBM scratch tensors; nothing is fused
// across ops and nothing is kept on chip between passes. It is the slow baseline the fused NKI
// kernels are measured against (the re:Invent talk cites a 6-8x end-to-end gap to the NKI flash
// kernel). The only fusion is inside one op: the scale is applied to the q tile in the QK^T matmul
// pass, and `exp(scores - m)` is one ScalarE activation (func(x + bias)), as torch's
// exp-of-difference lowers to the activation's free affine prologue.
//
// Dtypes (chosen to match eager PyTorch, as Hugging Face's eager_attention_forward writes it:
// `softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)`):
//   - scores and masked scores are stored in the dtype option (matmul outputs keep the input
//     dtype);
//   - the softmax stages (row max, exp, row sum, probs) are fp32, then the probs are cast back to
//     the dtype option in a pass of their own when that is not fp32 (the `.to(q.dtype)` op);
//     every engine computes in fp32 and rounds on write;
//   - mixed_precision=true feeds the Tensor engine bf16 operands (q, k, v and probs are cast at
//     the load), like autocast's matmul inputs; PSUM accumulates in fp32 and the matmul results
//     are stored in the dtype option (not bf16 as autocast would), as the tutorial kernel does,
//     so the baseline and the fused kernels solve the same problem;
//   - the output is the dtype option.
#include <vector>

#include "kernels/families.h"
#include "kernels/sd_attention/sd_attention_common.h"
#include "model/ir/builder.h"

namespace ncv::kernels {

namespace {

constexpr int64_t kRows = 128;      // query rows per tile (partitions)
constexpr int64_t kKeyChunk = 512;  // keys per QK^T matmul (one fp32 PSUM bank)
constexpr int64_t kKeyTile = 128;   // keys per PV matmul (the transposed probs tile)
// The NKI kernels' stand-in for -inf ("similar to what neuronx-cc uses"); exact in bf16.
constexpr float kMaskValue = -9984.0f;

// The coarser of two float dtypes among fp32/bf16 (the only ones the options produce).
DType coarser(DType a, DType b) {
  return (a == DType::bf16 || b == DType::bf16) ? DType::bf16 : DType::fp32;
}

// Tiles of `width` covering an axis of `length`: ceil(length / width). An eager lowering handles
// any sequence length, so the last tile is partial when `width` does not divide `length`.
Expr tile_count(Expr length, int64_t width) {
  return Expr::floordiv(length + (width - 1), width);
}

// The extent of tile `t`: `width`, or what is left of the axis for the partial last tile.
Expr tile_extent(Expr length, Expr t, int64_t width) {
  return Expr::min(Expr(width), length - t * width);
}

// The first `n` partitions of a 2-D on-chip tile, every column. Partial tiles always start at
// partition 0, the start every partition count allows (ARCH2 partition constraints,
// model/isa/rules.h).
Access top_rows(const TensorRef& tile, Expr n) {
  return tile({ds(0, n), all()});
}

// The top-left [rows, cols] corner of a 2-D on-chip tile.
Access corner(const TensorRef& tile, Expr rows, Expr cols) {
  return tile({ds(0, rows), ds(0, cols)});
}

// One pass per eager op, in the order the eager model runs them: kept in one function so that it
// reads like the sequence it models. NOLINTNEXTLINE(readability-function-size)
Program build_naive_attention(const Options& o) {
  const bool causal = option_flag(o, "use_causal_mask");
  const DType kd = option_dtype(o);  // inputs, scores, output
  const DType pe = pe_dtype(o);      // Tensor-engine operands

  Builder b("naive_attention");
  Expr S = b.param("seqlen", 1, 8192);
  Expr d = b.param("d_head", 1, 128);
  auto q = b.input("q", kd, {S, d});
  auto k = b.input("k", kd, {S, d});
  auto v = b.input("v", kd, {S, d});
  auto out = b.output("out", kd, {S, d});
  // One HBM tensor per eager op result.
  auto scores = b.scratch("scores", kd, {S, S});
  auto masked = causal ? b.scratch("masked_scores", kd, {S, S}) : scores;
  const DType sm = DType::fp32;  // softmax(..., dtype=torch.float32)
  auto row_max = b.scratch("row_max", sm, {S, 1});
  auto exp_hbm = b.scratch("exp", sm, {S, S});
  auto row_sum = b.scratch("row_sum", sm, {S, 1});
  auto probs = b.scratch("probs", sm, {S, S});
  auto probs_kd = kd == sm ? probs : b.scratch("probs_cast", kd, {S, S});

  // Every pass walks the query rows in 128-row tiles (one row per partition; at most 128
  // partitions, ARCH2), the last one `rows_of(i)` = S - 128 i rows when 128 does not divide S.
  const Expr q_tiles = tile_count(S, kRows);
  const Expr key_chunks = tile_count(S, kKeyChunk);
  const Expr key_tiles = tile_count(S, kKeyTile);
  auto rows_of = [&](Expr i) { return tile_extent(S, i, kRows); };
  auto chunk_width = [&](Expr j) { return tile_extent(S, j, kKeyChunk); };
  auto keys_of = [&](Expr t) { return tile_extent(S, t, kKeyTile); };
  // The rows of q tile i in an HBM tensor.
  auto rows = [&](Expr i) { return ds(i * kRows, rows_of(i)); };

  // Pass 1 — `scores = (q * 0.125) @ k.T` (torch.matmul after the scalar multiply): per q tile of
  // r <= 128 rows, q loaded transposed [d, r] and cast to the pe dtype, scaled by 0.125 (exact: a
  // power of two); per chunk of w <= 512 keys, k loaded transposed [d, w], one matmul into fp32
  // PSUM (K = d <= 128, M = r <= 128, N = w <= 512: ISA-NEW nc_matmul limits, and w fp32 fit
  // one 2 KiB PSUM bank), evicted in the intermediate dtype and stored.
  b.affine_range("i1", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto q_t = b.sbuf("p1_q_t", pe, {d, kRows});
    auto q_s = b.sbuf("p1_q_scaled", pe, {d, kRows});
    b.dma_copy(q_t({all(), ds(0, r)}), transposed(q({rows(i), all()})));
    b.tensor_scalar(q_s({all(), ds(0, r)}), q_t({all(), ds(0, r)}), AluOp::multiply,
                    Imm{static_cast<float>(kSdSoftmaxScale)});
    b.affine_range("j1", key_chunks, [&](Expr j) {
      Expr w = chunk_width(j);
      auto k_t = b.sbuf("p1_k_t", pe, {d, kKeyChunk}, {.bufs = 2});
      auto s_ps = b.psum("p1_scores_psum", DType::fp32, {kRows, kKeyChunk}, {.bufs = 2});
      auto s_sb = b.sbuf("p1_scores", kd, {kRows, kKeyChunk}, {.bufs = 2});
      b.dma_copy(k_t({all(), ds(0, w)}), transposed(k({ds(j * kKeyChunk, w), all()})), 1);
      b.matmul(corner(s_ps, r, w), q_s({all(), ds(0, r)}), k_t({all(), ds(0, w)}));
      b.tensor_copy(corner(s_sb, r, w), corner(s_ps, r, w));
      b.dma_copy(scores({rows(i), ds(j * kKeyChunk, w)}), corner(s_sb, r, w), 2);
    });
  });

  // Pass 2 — `scores.masked_fill(~tril, -9984.0)` (use_causal_mask): a separate elementwise pass
  // over the stored scores into a new tensor; key j of query row r stays when r - j >= 0. No
  // tile is skipped: eager attention computes and masks the whole [S, S] matrix.
  if (causal) {
    b.affine_range("i2", q_tiles, [&](Expr i) {
      Expr r = rows_of(i);
      b.affine_range("j2", key_chunks, [&](Expr j) {
        Expr w = chunk_width(j);
        auto s_in = b.sbuf("p2_scores", kd, {kRows, kKeyChunk}, {.bufs = 2});
        auto s_out = b.sbuf("p2_masked", kd, {kRows, kKeyChunk}, {.bufs = 2});
        b.dma_copy(corner(s_in, r, w), scores({rows(i), ds(j * kKeyChunk, w)}));
        b.affine_select(corner(s_out, r, w), corner(s_in, r, w), i * kRows - j * kKeyChunk, 1, {-1},
                        CmpOp::ge, kMaskValue);
        b.dma_copy(masked({rows(i), ds(j * kKeyChunk, w)}), corner(s_out, r, w), 2);
      });
    });
  }

  // Pass 3 — `m = scores.amax(-1, keepdim=True)` (the first stage of the fp32 softmax): per q
  // tile, the [r, S] row block in, one max reduction, the [r, 1] fp32 column out.
  b.affine_range("i3", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto s = b.sbuf("p3_scores", kd, {kRows, S}, {.bufs = 2});
    auto m = b.sbuf("p3_row_max", sm, {kRows, 1});
    b.dma_copy(top_rows(s, r), masked({rows(i), all()}));
    b.tensor_reduce(top_rows(m, r), top_rows(s, r), AluOp::max);
    b.dma_copy(row_max({rows(i), all()}), top_rows(m, r), 2);
  });

  // Pass 4 — `e = torch.exp(scores - m)`: per q tile, the row block and its max in; one exp
  // activation exp(x + (-m)) over the whole block; the fp32 block out.
  b.affine_range("i4", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto s = b.sbuf("p4_scores", kd, {kRows, S}, {.bufs = 2});
    auto m = b.sbuf("p4_row_max", sm, {kRows, 1});
    auto neg_m = b.sbuf("p4_neg_max", DType::fp32, {kRows, 1});
    auto e = b.sbuf("p4_exp", sm, {kRows, S}, {.bufs = 2});
    b.dma_copy(top_rows(s, r), masked({rows(i), all()}));
    b.dma_copy(top_rows(m, r), row_max({rows(i), all()}), 1);
    b.tensor_scalar(top_rows(neg_m, r), top_rows(m, r), AluOp::multiply, Imm{-1.0f});
    b.activation(top_rows(e, r), top_rows(s, r),
                 {.func = ActFunc::exp, .bias = top_rows(neg_m, r)});
    b.dma_copy(exp_hbm({rows(i), all()}), top_rows(e, r), 2);
  });

  // Pass 5 — `l = e.sum(-1, keepdim=True)`: per q tile, the exp block in, one add reduction
  // (sequential, fp32), the [r, 1] fp32 sum out.
  b.affine_range("i5", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto e = b.sbuf("p5_exp", sm, {kRows, S}, {.bufs = 2});
    auto l = b.sbuf("p5_row_sum", sm, {kRows, 1});
    b.dma_copy(top_rows(e, r), exp_hbm({rows(i), all()}));
    b.tensor_reduce(top_rows(l, r), top_rows(e, r), AluOp::add);
    b.dma_copy(row_sum({rows(i), all()}), top_rows(l, r), 2);
  });

  // Pass 6 — `p = e / l`: per q tile, the exp block and its sum in, one divide by the
  // per-partition column, the normalised probabilities out (normalised before PV: eager order).
  b.affine_range("i6", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto e = b.sbuf("p6_exp", sm, {kRows, S}, {.bufs = 2});
    auto l = b.sbuf("p6_row_sum", sm, {kRows, 1});
    auto p = b.sbuf("p6_probs", sm, {kRows, S}, {.bufs = 2});
    b.dma_copy(top_rows(e, r), exp_hbm({rows(i), all()}));
    b.dma_copy(top_rows(l, r), row_sum({rows(i), all()}), 1);
    b.tensor_scalar(top_rows(p, r), top_rows(e, r), AluOp::divide, top_rows(l, r));
    b.dma_copy(probs({rows(i), all()}), top_rows(p, r), 2);
  });

  // Pass 6b — `p = p.to(q.dtype)` (bf16 inputs only): per q tile, the fp32 probs in, one cast
  // copy, the probs in the dtype option out.
  if (kd != sm) {
    b.affine_range("i6b", q_tiles, [&](Expr i) {
      Expr r = rows_of(i);
      auto p = b.sbuf("p6b_probs", sm, {kRows, S}, {.bufs = 2});
      auto p_kd = b.sbuf("p6b_probs_cast", kd, {kRows, S}, {.bufs = 2});
      b.dma_copy(top_rows(p, r), probs({rows(i), all()}));
      b.tensor_copy(top_rows(p_kd, r), top_rows(p, r));
      b.dma_copy(probs_kd({rows(i), all()}), top_rows(p_kd, r), 2);
    });
  }

  // Pass 7 — `out = p @ v` (torch.matmul): per q tile of r rows, one PSUM accumulation group over
  // the key tiles of c <= 128 keys (the last one partial). Each probs tile [r q, c k] is loaded
  // (cast to the pe dtype), transposed on the Tensor engine to [c k, r q] (at most 128x128,
  // ISA-OLD nc_transpose) and copied back to SBUF as the stationary operand; the v tile [c k, d] is
  // the moving one (K = c, M = r, N = d, all <= 128); the fp32 result is evicted in the output
  // dtype and stored. When S <= 128 the peeled first step is the whole group.
  b.affine_range("i7", q_tiles, [&](Expr i) {
    Expr r = rows_of(i);
    auto acc = b.psum("p7_out_psum", DType::fp32, {kRows, d});
    auto pv_step = [&](Expr t, bool accumulate) {
      Expr c = keys_of(t);
      const BufferOptions rot{.bufs = accumulate ? 2 : 1};  // rotate inside the key loop
      auto p_sb = b.sbuf(accumulate ? "p7_probs" : "p7_probs0", pe, {kRows, kKeyTile}, rot);
      auto p_tp = b.psum(accumulate ? "p7_probs_t_psum" : "p7_probs_t_psum0", DType::fp32,
                         {kKeyTile, kRows}, rot);
      auto p_t = b.sbuf(accumulate ? "p7_probs_t" : "p7_probs_t0", pe, {kKeyTile, kRows}, rot);
      auto v_sb = b.sbuf(accumulate ? "p7_v" : "p7_v0", pe, {kKeyTile, d}, rot);
      b.dma_copy(corner(p_sb, r, c), probs_kd({rows(i), ds(t * kKeyTile, c)}));
      b.dma_copy(top_rows(v_sb, c), v({ds(t * kKeyTile, c), all()}), 1);
      b.transpose(corner(p_tp, c, r), corner(p_sb, r, c));
      b.tensor_copy(corner(p_t, c, r), corner(p_tp, c, r));
      b.matmul(top_rows(acc, r), corner(p_t, c, r), top_rows(v_sb, c), accumulate);
    };
    pv_step(Expr(0), false);
    b.affine_range("t7", 1, key_tiles, 1, [&](Expr t) { pv_step(t, true); });
    auto o_sb = b.sbuf("p7_out", kd, {kRows, d});
    b.tensor_copy(top_rows(o_sb, r), top_rows(acc, r));
    b.dma_copy(out({rows(i), all()}), top_rows(o_sb, r), 2);
  });

  return b.finish();
}

oracle::PrecisionContract naive_attention_contract(const Options& o) {
  const DType kd = option_dtype(o);
  const DType pe = pe_dtype(o);
  oracle::PrecisionContract c;
  c.name = "naive_attention";
  c.q_dtype = c.k_dtype = c.v_dtype = pe;  // cast at the load (exact when pe is fp32)
  c.scale_folded_into_q = true;            // (q in pe) * 0.125, exact: a power of two
  c.qk_accum = DType::fp32;                // PSUM
  c.score_dtype = kd;                      // the stored `scores`
  c.max_dtype = DType::fp32;               // the fp32 softmax (the max of kd values is exact)
  c.exp_dtype = DType::fp32;               // the stored `exp`
  // The fp32 probs, cast to kd (the `.to` pass) and to pe at the PV load: P = e / l rounded to
  // the coarser of the two (fp32 -> coarser is one rounding of the fp32 quotient).
  c.p_dtype = coarser(kd, pe);
  c.sum_dtype = DType::fp32;   // sequential fp32 reduction, stored fp32
  c.sum_of_rounded_p = false;  // l sums the stored fp32 exp, not the rounded P
  c.pv_accum = DType::fp32;    // one PSUM accumulation group over the key tiles
  c.norm = oracle::Normalisation::before_pv;
  c.out_dtype = kd;
  c.kv_tile = kKeyTile;
  return c;
}

}  // namespace

Variant naive_attention_variant() {
  Variant v;
  v.name = "naive_attention";
  v.family = "naive_attention";
  v.models =
      "eager (unfused) PyTorch attention as lowered op by op by a compiler: softmax((q * 0.125) "
      "@ k.T) @ v with every stage in HBM (the slow baseline of the re:Invent NKI talk; stage "
      "layout after attn_fwd_v3, aws-neuron/nki-samples "
      "tutorials/attention_fwd_performance/attention_kernels.py @8370e11)";
  v.summary =
      "Separate passes over 128-row tiles (the last one partial when 128 does not divide "
      "seqlen), each from HBM to HBM: QK^T matmul (scale on q), "
      "causal mask, row max, exp(s - max), row sum, division by the sum, cast of the probs to "
      "the input dtype, and PV with the probs transposed on the Tensor engine; the [S, S] "
      "scores, masked scores, exp and probs are HBM scratch tensors.";
  v.options = sd_attention_options();
  v.notes = {
      "softmax scale fixed at 0.125 (as the sd_attention kernels), whatever d_head is",
      "scores are stored in the dtype option, the softmax stages in fp32 and the probs cast back "
      "to the dtype option (softmax(..., dtype=torch.float32).to(q.dtype), as Hugging Face's "
      "eager attention); mixed_precision casts the matmul operands to bf16",
      "causal masking writes -9984.0 (the NKI kernels' -inf stand-in): a row whose visible "
      "scores all lie below -9984 is not softmax-normalised correctly",
      "no tile skipping under the causal mask: the whole [S, S] matrix is computed",
  };
  v.build = build_naive_attention;
  v.contract = naive_attention_contract;
  v.spec = sd_attention_spec;
  const std::vector<Axis> sd = {Axis::seq, Axis::dim};
  v.layout = Layout{{"q", sd}, {"k", sd}, {"v", sd}, {"out", sd}};
  return v;
}

}  // namespace ncv::kernels
