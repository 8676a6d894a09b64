// The software-pipelined flash attention kernel contributed to nki-samples
// (contributed/pipelined_attention.py, last changed in 794d337): non-causal attention at
// Sq = Sk = 16384, d = 128, bf16, one batch per SPMD program. The keys come in two sections of
// 8192; per section every 128-row Q group runs the stages load_q, qk_and_max (QK in 512-key PSUM
// tiles, scaled by 0.125 and row-maxed on the Vector engine), update_max (the running max, kept
// negated, and the scaling factor exp(m_old - m_new)), exp (bf16 P with an fp32 row sum), tp (P^T
// by identity matmuls), pv and write_back, software-pipelined two groups deep: group g + 2's QK
// matmuls interleave with group g's PV (fused_qkmax_and_pv). The online softmax merges the two
// sections through HBM: section 0 stores its unnormalised PV partial into o (bf16), section 1
// loads it back, rescales it by the scaling factor, adds its own PV and multiplies by
// 1 / running_sum. Line numbers below are the source's.
//
// Direct allocation: every SBUF tensor sits at the source's `sca` byte offset (sb_mod, one
// region per tensor: each has its partition dim first, so num_free_tiles only picks the slot);
// PSUM tiles are declared per block, in the loop that writes and reads them, at the bank the
// source's psum.alloc callbacks return (lines 25-37).
#include <map>
#include <stdexcept>
#include <string>

#include "kernels/flash_attention/pipelined_attention_common.h"
#include "kernels/nki_lowering.h"
#include "model/ir/builder.h"

namespace ncv::kernels {

PipeSbufOffsets pipe_sbuf_offsets(const PipeShape& shape) {
  // The increments are the source's own expressions (some reserve two slots where one is used,
  // or fp32 bytes for bf16 tensors: prev_output, mm2_sbuf_res, mm2_div_sbuf).
  const int64_t grps = shape.groups(), blks = shape.k_tiles(), tiles2k = shape.tiles_2k();
  PipeSbufOffsets o;
  int64_t sca = 0;
  auto take = [&](int64_t& field, int64_t bytes) {
    field = sca;
    sca += bytes;
  };
  take(o.identity_load, 128 * 2);                 // line 100
  take(o.zero_bias, 4);                           // line 104
  take(o.running_max, grps * 4);                  // line 107
  take(o.running_sum, grps * 4);                  // line 109
  take(o.div_25, grps * 4);                       // line 111
  take(o.k_loaded, blks * 512 * 2);               // line 120
  take(o.v_loaded, shape.v_tiles() * 128 * 2);    // line 127
  take(o.q_loaded, 2 * 128 * 2);                  // line 133
  take(o.scaling_factor, 2 * 1 * 4);              // line 136
  take(o.temp_reduce14, 2 * blks * 4);            // line 139
  take(o.mhlo_mul_2, tiles2k * 2048 * 4 * 2);     // line 146
  take(o.final_reduce_max, 2 * 4);                // line 150
  take(o.prev_running_max, 2 * 4);                // line 153
  take(o.final_reduce_sum_b, 2 * tiles2k * 4);    // line 159
  take(o.final_reduce_sum_b_collect, 2 * 1 * 4);  // line 162
  take(o.prev_running_sum, 2 * 1 * 4);            // line 165
  take(o.prev_output, 2 * 128 * 4);               // line 168
  take(o.mm2_sbuf_res, 2 * 128 * 4);              // line 170
  take(o.mm2_div_sbuf, 2 * 128 * 4);              // line 172
  take(o.exp6_sbuf, 2 * tiles2k * 2048);          // line 182
  take(o.tp_sbuf, tiles2k * 4 * 2 * 512);         // line 186
  take(o.mm2_sbuf, 2 * 128 * 4);                  // line 190
  o.end = sca;
  return o;
}

namespace {

class PipelinedBuilder {
 public:
  explicit PipelinedBuilder(const PipeShape& shape)
      : b_("pipelined_attention"),
        off_(pipe_sbuf_offsets(shape)),
        seqlen_(shape.seqlen()),
        section_len_(shape.section_len),
        groups_(shape.groups()),
        tiles_2k_(shape.tiles_2k()),
        v_tiles_(shape.v_tiles()),
        k_tiles_(shape.k_tiles()) {}

  Program build() {
    Expr bs = b_.param("bs", 1, kPipeMaxBatch);
    Expr S = b_.param("seqlen", seqlen_, seqlen_, section_len_);
    b_.grid(bs);
    batch_ = Builder::program_id();  // batch_id = nl.program_id(0) (line 81)
    q_ = b_.input("q", DType::bf16, {bs, kPipeDHead, S});
    k_ = b_.input("k", DType::bf16, {bs, kPipeDHead, S});
    v_ = b_.input("v", DType::bf16, {bs, S, kPipeDHead});
    o_ = b_.output("o", DType::bf16, {bs, S, kPipeDHead});  // o.dtype = q.dtype (line 79)

    // identity_load = nl.load(nl.shared_constant(identity, bf16)) (lines 96-99): on chip here
    identity_ = sbuf("identity_load", DType::bf16, {128, 128}, off_.identity_load);
    identity_on_chip(b_, identity_());
    zero_bias_ = sbuf("zero_bias_tensor", DType::fp32, {128, 1}, off_.zero_bias);
    b_.memset(zero_bias_(), 0.0f);  // line 103
    running_max_ = sbuf("running_max", DType::fp32, {128, groups_}, off_.running_max);
    running_sum_ = sbuf("running_sum", DType::fp32, {128, groups_}, off_.running_sum);
    div_25_ = sbuf("div_25_sbuf", DType::fp32, {128, groups_}, off_.div_25);
    declare_section_buffers();
    // for section_i in sequential_range(num_sections) (line 113), unrolled: the IR has no `if`
    // and the section branches (lines 213, 215, 281, 283, 286, 289, 292) test section_i.
    for (int64_t s = 0; s < kPipeSections; ++s) section(s);
    return b_.finish();
  }

 private:
  TensorRef sbuf(const std::string& name, DType dt, std::vector<Expr> shape, int64_t offset) {
    return b_.sbuf(name, dt, std::move(shape), {.placement = Placement{Expr(0), Expr(offset)}});
  }
  // A PSUM block declared again by each call of its stage ("mm1_psum_dot", "mm1_psum_dot_1",
  // ...: IR tensor names are unique; the source has one block-indexed tensor).
  TensorRef psum(const std::string& name, std::vector<Expr> shape, Expr bank) {
    const int n = declared_[name]++;
    return b_.psum(n == 0 ? name : name + "_" + std::to_string(n), DType::fp32, std::move(shape),
                   {.placement = Placement{Expr(0), bank * psum_bank_bytes()}});
  }

  // The buffers the source declares in the section loop's body (lines 119-193). They sit at the
  // same offsets in both sections (the body is traced once), so they are declared once here, at
  // kernel scope, for both unrolled sections. Block dims follow the partition dim.
  void declare_section_buffers() {
    k_loaded_ = sbuf("k_loaded", DType::bf16, {kPipeDHead, k_tiles_, 512}, off_.k_loaded);
    v_loaded_ = sbuf("v_loaded", DType::bf16, {128, v_tiles_, kPipeDHead}, off_.v_loaded);
    q_loaded_ = sbuf("q_loaded", DType::bf16, {kPipeDHead, 2, 128}, off_.q_loaded);
    scaling_factor_ = sbuf("scaling_factor", DType::fp32, {128, 2, 1}, off_.scaling_factor);
    // [128, 16] in the source, indexed si * 4 + pi: declared [128, 4, 4] (the same bytes in the
    // same order) so that each write indexes one dim per loop variable, as `prove`'s
    // initialization class models writes.
    temp_reduce14_ =
        sbuf("temp_reduce14_sbuf", DType::fp32, {128, tiles_2k_, 4}, off_.temp_reduce14);
    mhlo_mul_2_ = sbuf("mhlo_mul_2", DType::fp32, {128, 2, tiles_2k_, 2048}, off_.mhlo_mul_2);
    final_reduce_max_ = sbuf("final_reduce_max", DType::fp32, {128, 1}, off_.final_reduce_max);
    prev_running_max_ = sbuf("prev_runnning_max", DType::fp32, {128, 1}, off_.prev_running_max);
    final_reduce_sum_b_ =
        sbuf("final_reduce_sum_b", DType::fp32, {128, 2, tiles_2k_}, off_.final_reduce_sum_b);
    collect_ =
        sbuf("final_reduce_sum_b_collect", DType::fp32, {128, 1}, off_.final_reduce_sum_b_collect);
    prev_running_sum_ = sbuf("prev_running_sum", DType::fp32, {128, 1}, off_.prev_running_sum);
    prev_output_ = sbuf("prev_output", DType::bf16, {128, kPipeDHead}, off_.prev_output);
    mm2_sbuf_res_ = sbuf("mm2_sbuf_res", DType::bf16, {128, kPipeDHead}, off_.mm2_sbuf_res);
    mm2_div_sbuf_ = sbuf("mm2_div_sbuf", DType::bf16, {128, kPipeDHead}, off_.mm2_div_sbuf);
    exp6_sbuf_ = sbuf("exp6_sbuf", DType::bf16, {128, tiles_2k_, 2048}, off_.exp6_sbuf);
    tp_sbuf_ = sbuf("tp_sbuf", DType::bf16, {128, tiles_2k_, 4, 512}, off_.tp_sbuf);
    mm2_sbuf_ = sbuf("mm2_sbuf", DType::fp32, {128, kPipeDHead}, off_.mm2_sbuf);
    // scalar_tensor_tensor's fp32 product (notes): not in the source's allocation, so placed
    // right after its end.
    stt_product_ = sbuf("stt_product", DType::fp32, {128, kPipeDHead}, off_.end);
  }

  static Expr slot(Expr g) { return Expr::mod(g, 2); }  // num_free_tiles=(2,): g % 2

  void section(int64_t s) {
    s_ = s;
    // K and V of the section (lines 121-130); loads cast to bf16 (already bf16 here)
    b_.affine_range("i", k_tiles_, [&](Expr i) {
      b_.dma_copy(k_loaded_({all(), one(i), all()}),
                  k_({one(batch_), all(), ds(section_len_ * s + 512 * i, 512)}));
    });
    b_.affine_range("i", v_tiles_, [&](Expr i) {
      b_.dma_copy(v_loaded_({all(), one(i), all()}),
                  v_({one(batch_), ds(section_len_ * s + 128 * i, 128), all()}));
    });
    // The schedule (lines 298-318): prologue, steady state, epilogue.
    load_q(Expr(0));
    qk_and_max(Expr(0));
    update_max(Expr(0));
    exp(Expr(0));
    tp(Expr(0));
    load_q(Expr(1));
    qk_and_max(Expr(1));
    update_max(Expr(1));
    // affine_range(num_grps - 2, precise_schedule=True): carried dependencies (running max and
    // sum, the two-slot buffers, the single exp6/tp/mm2 buffers) in program order: sequential.
    b_.sequential_range("grp_i", groups_ - 2, [&](Expr g) {
      load_q(g + 2);
      exp(g + 1);
      fused_qkmax_and_pv(g);
      tp(g + 1);
      write_back(g);
      update_max(g + 2);
    });
    const Expr last = Expr(groups_ - 1), second_last = Expr(groups_ - 2);
    pv(second_last);
    write_back(second_last);
    exp(last);
    tp(last);
    pv(last);
    write_back(last);
  }

  void load_q(Expr g) {  // line 196
    b_.dma_copy(q_loaded_({all(), one(slot(g)), all()}),
                q_({one(batch_), all(), ds(g * 128, 128)}));
  }

  // One 512-key tile: mm1_psum_dot[g, si, pi] = nc_matmul(q_loaded[g], k_loaded[si*4+pi]) at bank
  // pi; mhlo_mul_2[g, si][:, pi*512:+512] = tensor_scalar_reduce(*, multiply softmax_scale,
  // max -> temp_reduce14_sbuf[g][:, si*4+pi]) (lines 204-207, 261-264)
  void qk_tile(Expr g, Expr si, Expr pi) {
    auto mm1 = psum("mm1_psum_dot", {128, 512}, pi);
    b_.matmul(mm1(), q_loaded_({all(), one(slot(g)), all()}),
              k_loaded_({all(), one(si * 4 + pi), all()}));
    b_.tensor_scalar_reduce(mhlo_mul_2_({all(), one(slot(g)), one(si), ds(pi * 512, 512)}), mm1(),
                            AluOp::multiply, Imm{kPipeSoftmaxScale}, AluOp::max,
                            temp_reduce14_({all(), one(si), one(pi)}));
  }

  void qk_and_max(Expr g) {  // lines 198-207
    b_.affine_range("si", tiles_2k_, [&](Expr si) {
      b_.affine_range("pi", 4, [&](Expr pi) { qk_tile(g, si, pi); });
    });
  }

  Access running_max(Expr g) const { return running_max_({all(), one(g)}); }
  Access running_sum(Expr g) const { return running_sum_({all(), one(g)}); }
  Access scaling_factor(Expr g) const { return scaling_factor_({all(), one(slot(g)), all()}); }

  void update_max(Expr g) {  // lines 210-218
    // -m_local over all 16 partial maxima (both free dims)
    b_.tensor_reduce(final_reduce_max_(), temp_reduce14_(), AluOp::max, 2, true);
    if (s_ == 0) {
      b_.tensor_copy(running_max(g), final_reduce_max_());
      return;
    }
    // prev = -running_max (= +m_old); running_max = min(-m_old, -m_local) = -m_new;
    // scaling_factor = exp(m_old - m_new)
    b_.activation(prev_running_max_(), running_max(g),
                  {.func = ActFunc::copy, .scale = Imm{-1.0f}, .bias = zero_bias_()});
    b_.tensor_tensor(running_max(g), running_max(g), final_reduce_max_(), AluOp::min);
    b_.activation(scaling_factor(g), prev_running_max_(),
                  {.func = ActFunc::exp, .bias = running_max(g)});
  }

  // exp6_sbuf[g, si] = activation_reduce(exp, mhlo_mul_2[g, si], bias=running_max[:, g], reduce
  // add -> final_reduce_sum_b[g][:, si]) (lines 221-230; the inner pi loop has one iteration)
  void exp(Expr g) {
    b_.affine_range("si", tiles_2k_, [&](Expr si) {
      b_.activation(exp6_sbuf_({all(), one(si), all()}),
                    mhlo_mul_2_({all(), one(slot(g)), one(si), all()}),
                    {.func = ActFunc::exp,
                     .bias = running_max(g),
                     .reduce_cmd = ReduceCmd::reset_reduce,
                     .reduce_res = final_reduce_sum_b_({all(), one(slot(g)), one(si)})});
    });
  }

  // tp_psum[g, si, tp_grp][:, ti*128:+128] = nc_matmul(exp6_sbuf[g, si][:, tp_grp*512 +
  // ti*128:+128], identity_load) at bank tp_grp; tp_sbuf[g, si, tp_grp] = tensor_copy(bf16)
  // (lines 232-240)
  void tp(Expr /*g*/) {
    b_.affine_range("si", tiles_2k_, [&](Expr si) {
      b_.affine_range("tp_grp", 4, [&](Expr tg) {
        auto tp_psum = psum("tp_psum", {128, 512}, tg);
        b_.affine_range("ti", 4, [&](Expr ti) {
          b_.matmul(tp_psum({all(), ds(ti * 128, 128)}),
                    exp6_sbuf_({all(), one(si), ds(tg * 512 + ti * 128, 128)}), identity_());
        });
        b_.tensor_copy(tp_sbuf_({all(), one(si), one(tg), all()}), tp_psum());
      });
    });
  }

  // PV of one 2048-key chunk mm2i: mm2_psum[g, mm2i] += nc_matmul(tp_sbuf[g, mm2i, t/4][:,
  // (t%4)*128:+128], v_loaded[mm2i*16 + t]) over t = tp_grp_i*4 + mm2_si in 0..16 at bank
  // 4 + mm2i % 4; then mm2_sbuf = loop_reduce(mm2_psum, add) = tensor_tensor add (lines 243-251,
  // 266-274). mm2_psum is an nl.ndarray (no zeros): the first matmul opens the accumulation group
  // (peeled, overwriting).
  void pv_chunk(Expr mm2i) {
    auto mm2 = psum("mm2_psum", {128, kPipeDHead}, Expr::mod(mm2i, 4) + 4);
    auto step = [&](Expr t, bool accumulate) {
      b_.matmul(
          mm2(),
          tp_sbuf_({all(), one(mm2i), one(Expr::floordiv(t, 4)), ds(Expr::mod(t, 4) * 128, 128)}),
          v_loaded_({all(), one(mm2i * 16 + t), all()}), accumulate);
    };
    step(Expr(0), false);
    b_.affine_range("mm2_t", 1, 16, 1, [&](Expr t) { step(t, true); });
    b_.tensor_tensor(mm2_sbuf_(), mm2_sbuf_(), mm2(), AluOp::add);
  }

  // The loops holding loop_reduce are sequential: it declares a reduction over the affine loop's
  // iterations (loop_indices=[mm2i]), and the IR's affine loops allow PSUM accumulation as their
  // only carried dependency. Program order is one of the orders the source allows; the fp32 adds
  // give the same values in it as on hardware that keeps that order.
  void pv(Expr /*g*/) {  // lines 241-252
    b_.memset(mm2_sbuf_(), 0.0f);
    b_.sequential_range("mm2i", tiles_2k_, [&](Expr mm2i) { pv_chunk(mm2i); });
  }

  // Per 2048-key chunk si: the QK and row max of group g + 2, then group g's PV over the same
  // chunk (lines 254-274).
  void fused_qkmax_and_pv(Expr g) {
    b_.memset(mm2_sbuf_(), 0.0f);
    b_.sequential_range("si", tiles_2k_, [&](Expr si) {  // loop_reduce over si: sequential (pv)
      b_.affine_range("pi", 4, [&](Expr pi) { qk_tile(g + 2, si, pi); });
      pv_chunk(si);
    });
  }

  void write_back(Expr g) {  // lines 276-297
    const Access rows = o_({one(batch_), ds(g * 128, 128), all()});
    b_.tensor_reduce(collect_(), final_reduce_sum_b_({all(), one(slot(g)), all()}), AluOp::add);
    if (s_ == 0) {
      b_.tensor_copy(running_sum(g), collect_());
      // the unnormalised fp32 partial, rounded to o's bf16 by the DMA (line 290)
      b_.dma_copy(rows, mm2_sbuf_());
      return;
    }
    b_.tensor_copy(prev_running_sum_(), running_sum(g));
    b_.tensor_scalar(running_sum(g), prev_running_sum_(), AluOp::multiply, scaling_factor(g), false,
                     AluOp::add, collect_());
    b_.reciprocal(div_25_({all(), one(g)}), running_sum(g));
    // prev_output = nl.load(o rows): reads back section 0's store (line 293)
    b_.dma_copy(prev_output_(), rows);
    // scalar_tensor_tensor(prev_output, multiply scaling_factor, add mm2_sbuf) (line 294): one
    // Vector instruction computing in fp32, here its fp32 product then the add, rounded once to
    // mm2_sbuf_res's bf16 (the same values).
    b_.tensor_scalar(stt_product_(), prev_output_(), AluOp::multiply, scaling_factor(g), false,
                     std::nullopt, Imm{0.0f}, false, Engine::Vector);
    b_.tensor_tensor(mm2_sbuf_res_(), stt_product_(), mm2_sbuf_(), AluOp::add, Engine::Vector);
    // activation(copy, mm2_sbuf_res, scale=div_25_sbuf[:, g], bias=zero_bias) (line 296)
    b_.activation(mm2_div_sbuf_(), mm2_sbuf_res_(),
                  {.func = ActFunc::copy, .scale = div_25_({all(), one(g)}), .bias = zero_bias_()});
    b_.dma_copy(rows, mm2_div_sbuf_());
  }

  Builder b_;
  PipeSbufOffsets off_;
  // The source's shape (16384 / 8192 unless scaled): seqlen, keys per section, num_grps and
  // the 2048-key chunks, 128-key V tiles and 512-key K tiles per section.
  const int64_t seqlen_, section_len_, groups_, tiles_2k_, v_tiles_, k_tiles_;
  std::map<std::string, int> declared_;
  int64_t s_ = 0;  // the section being built
  Expr batch_;
  TensorRef q_, k_, v_, o_;
  TensorRef identity_, zero_bias_, running_max_, running_sum_, div_25_;
  TensorRef k_loaded_, v_loaded_, q_loaded_, scaling_factor_, temp_reduce14_, mhlo_mul_2_,
      final_reduce_max_, prev_running_max_, final_reduce_sum_b_, collect_, prev_running_sum_,
      prev_output_, mm2_sbuf_res_, mm2_div_sbuf_, exp6_sbuf_, tp_sbuf_, mm2_sbuf_, stt_product_;
};

}  // namespace

Program build_pipelined_attention(const Options& /*o*/) {
  return PipelinedBuilder(PipeShape{}).build();
}

Program build_pipelined_attention_scaled(const PipeShape& shape) {
  if (shape.section_len <= 0 || shape.section_len % 2048 != 0) {
    throw std::invalid_argument("pipelined_attention: section length " +
                                std::to_string(shape.section_len) +
                                " is not a positive multiple of 2048 (the source's chunk)");
  }
  return PipelinedBuilder(shape).build();
}

}  // namespace ncv::kernels
