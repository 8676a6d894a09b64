#include "kernels/sd_attention/sd_attention_common.h"

#include <stdexcept>

namespace ncv::kernels {

std::vector<OptionSpec> sd_attention_options() {
  return {
      {"use_causal_mask", {"false", "true"}, "false", "bottom-right causal mask (affine_select)"},
      {"mixed_precision", {"true", "false"}, "true", "bf16 Tensor-engine operands (else fp32)"},
      {"dtype", {"fp32", "bf16"}, "fp32", "dtype of q, k, v and out (the kernel_dtype)"},
  };
}

DType pe_dtype(const Options& o) {
  return option_flag(o, "mixed_precision") ? DType::bf16 : DType::fp32;
}

oracle::AttentionSpec sd_attention_spec(const Options& o, const ParamValues& params) {
  oracle::AttentionSpec s;
  const auto bs = params.find("bs");
  s.batch = bs == params.end() ? 1 : bs->second;
  s.heads = s.kv_heads = 1;
  s.seqlen_q = s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = param_value(params, "d_head");
  s.scale = kSdSoftmaxScale;
  if (option_flag(o, "use_causal_mask")) s.mask.kind = oracle::MaskKind::causal;
  s.input_dtype = s.output_dtype = option_dtype(o);
  return s;
}

oracle::PrecisionContract sd_attention_contract(const Options& o, int step) {
  const DType kd = option_dtype(o), pe = pe_dtype(o);
  oracle::PrecisionContract c;
  c.name = step == 0 ? "sd_attention" : "sd_attention_step" + std::to_string(step);
  c.q_dtype = c.k_dtype = c.v_dtype = pe;  // nl.load(..., dtype=pe_in_dt)
  c.scale_folded_into_q = true;            // q_local = load(q) * 0.125 (exact)
  c.qk_accum = DType::fp32;                // PSUM
  c.score_dtype = step >= 4 ? pe : kd;     // qk_res_buf (bf16 from step 4)
  // neg_max_res (and its final min) is kernel_dtype in every step: with fp32 scores (steps 4-5,
  // mixed_precision=false, dtype=bf16) the max is rounded to bf16 (found by the case bound).
  c.max_dtype = kd;
  // The tutorial stores exp in kernel_dtype and sums the stored values (a separate reduce). Every
  // step from 1 on sums in the activation's accumulator, i.e. the fp32 results before any store.
  c.exp_dtype = step == 0 ? kd : DType::fp32;
  // P as fed to PV: softmax_res / exp_res in pe; step 3 stores exp_res in kernel_dtype first and
  // copies it to pe, so P is rounded to the coarser of the two.
  c.p_dtype = step == 3 && (kd == DType::bf16 || pe == DType::bf16) ? DType::bf16 : pe;
  c.sum_dtype = DType::fp32;
  c.sum_of_rounded_p = false;
  c.pv_accum = DType::fp32;  // one PSUM accumulation group over all key tiles
  c.kv_tile = 128;
  c.norm = oracle::Normalisation::deferred;  // (PV) * broadcast(1 / sum)
  c.norm_dtype = kd;                         // sum, reciprocal, PV copy and product in kernel_dtype
  c.out_dtype = kd;
  return c;
}

}  // namespace ncv::kernels
