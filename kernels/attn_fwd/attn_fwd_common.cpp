#include "kernels/attn_fwd/attn_fwd_common.h"

#include <stdexcept>

namespace ncv::kernels {

std::string attn_fwd_name(AttnFwdVersion v) {
  static const char* const names[] = {"v1", "v2", "v3",  "v4", "v5",  "v6",
                                      "v7", "v8", "v8a", "v9", "v10", "v11"};
  return std::string("attn_fwd_") + names[static_cast<int>(v)];
}

std::vector<OptionSpec> attn_fwd_options() {
  return {{"dtype",
           {"fp32", "bf16"},
           "fp32",
           "dtype of q, k and v (and of out up to v8; from v8a out is bf16)"}};
}

oracle::AttentionSpec attn_fwd_spec(AttnFwdVersion v, const Options& o, const ParamValues& params) {
  oracle::AttentionSpec s;
  s.batch = s.heads = s.kv_heads = 1;
  s.seqlen_q = s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = kAttnFwdDHead;
  s.scale = 1.0;  // the tutorial applies no softmax scale
  s.input_dtype = option_dtype(o);
  s.output_dtype = at_least(v, AttnFwdVersion::v8a) ? DType::bf16 : s.input_dtype;
  return s;
}

Layout attn_fwd_layout() {
  return Layout{{"q", {Axis::dim, Axis::seq}},
                {"k", {Axis::dim, Axis::seq}},
                {"v", {Axis::dim, Axis::seq}},
                {"out", {Axis::seq, Axis::dim}}};
}

oracle::PrecisionContract attn_fwd_contract(AttnFwdVersion v, const Options& o) {
  const DType x = option_dtype(o);
  const bool bf16_p = at_least(v, AttnFwdVersion::v7);
  oracle::PrecisionContract c;
  c.name = attn_fwd_name(v);
  c.q_dtype = c.k_dtype = x;
  c.v_dtype = bf16_p ? DType::bf16 : x;  // v_sbuf_t = tensor_copy(v_psum_t, dtype=bf16) from v7
  c.scale_folded_into_q = false;         // no scale at all
  c.qk_accum = DType::fp32;
  c.score_dtype = DType::fp32;  // read from PSUM (or an fp32 copy of it)
  c.max_dtype = DType::fp32;
  c.exp_dtype = DType::fp32;  // v7 on: the row sums come from the activation's fp32 accumulator
  c.p_dtype = v == AttnFwdVersion::v2 ? x : bf16_p ? DType::bf16 : DType::fp32;
  c.sum_dtype = DType::fp32;
  c.sum_of_rounded_p = false;
  c.pv_accum = DType::fp32;
  c.kv_tile = 128;  // PV matmuls contract 128 keys
  c.norm = at_least(v, AttnFwdVersion::v5) ? oracle::Normalisation::deferred
                                           : oracle::Normalisation::before_pv;
  c.norm_dtype = DType::fp32;
  c.out_dtype = at_least(v, AttnFwdVersion::v8a) ? DType::bf16 : x;
  return c;
}

}  // namespace ncv::kernels
