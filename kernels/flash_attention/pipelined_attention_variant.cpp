// The pipelined_attention registry entry: spec, precision contract, layout and the notes that
// list every modelling choice. The builder is pipelined_attention.cpp.
#include <stdexcept>
#include <string>

#include "kernels/families.h"
#include "kernels/flash_attention/pipelined_attention_common.h"

namespace ncv::kernels {
namespace {

const char* const kSource =
    "aws-neuron/nki-samples contributed/pipelined_attention.py flash_fwd "
    "@794d3370121890eab8545531d58ff22cee2a04fe";

oracle::AttentionSpec pipelined_spec(const Options& /*o*/, const ParamValues& params) {
  oracle::AttentionSpec s;
  s.batch = param_value(params, "bs");
  s.heads = s.kv_heads = 1;
  s.seqlen_q = s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = kPipeDHead;
  s.scale = kPipeSoftmaxScale;  // the source's test; a power of two
  s.input_dtype = s.output_dtype = DType::bf16;
  return s;  // non-causal: the source asserts use_causal_mask == False (line 71)
}

oracle::PrecisionContract pipelined_contract(const PipeShape& shape) {
  oracle::PrecisionContract ct;
  ct.name = "pipelined_attention";
  ct.q_dtype = ct.k_dtype = ct.v_dtype = DType::bf16;  // loads with dtype=bf16 (lines 123, 130)
  ct.scale_folded_into_q = false;  // tensor_scalar_reduce multiplies the fp32 scores (line 205)
  ct.qk_accum = DType::fp32;       // PSUM
  ct.score_dtype = ct.max_dtype = DType::fp32;  // mhlo_mul_2, running_max
  ct.exp_dtype = DType::fp32;  // activation_reduce's sum adds the fp32 exp results (line 227)
  ct.p_dtype = DType::bf16;    // exp6_sbuf and tp_sbuf
  ct.sum_dtype = DType::fp32;  // final_reduce_sum_b, running_sum
  ct.sum_of_rounded_p = false;
  ct.pv_accum = DType::fp32;  // mm2_psum, mm2_sbuf
  ct.kv_tile = 128;
  // Online softmax over the two 8192-key sections: section 1's p use the merged max, section
  // 0's partial is rescaled by exp(m0 - m1), and so is its row sum (the same factor: the
  // log-sum-exp terms of online_tile bound that more than enough).
  ct.online_tile = shape.section_len;
  // Section 0's partial goes through o (bf16) and the merge writes mm2_sbuf_res in q.dtype
  // (bf16, line 169): both roundings of the running output; then the fp32 multiply by the fp32
  // 1 / running_sum (activation scale, line 296).
  ct.online_partial_dtype = DType::bf16;
  ct.norm = oracle::Normalisation::deferred;
  ct.norm_dtype = DType::fp32;
  ct.out_dtype = DType::bf16;  // mm2_div_sbuf
  return ct;
}

}  // namespace

Variant pipelined_attention_variant() {
  Variant v;
  v.name = "pipelined_attention";
  v.family = "flash_attention";
  v.models = kSource;
  v.summary =
      "software-pipelined flash attention at seqlen 16384: two 8192-key sections, per 128-row Q "
      "group QK (scaled fp32 scores, row max), exp with fp32 row sums, P^T by identity matmuls "
      "and PV, the QK of group g + 2 interleaved with the PV of group g; section 0's "
      "unnormalised output goes through o in HBM and is rescaled and merged by section 1";
  v.notes = {
      "seqlen fixed at 16384 (Sq = Sk), as the source's header states ('can only run on 16k "
      "seqlen', line 40): num_grps = Sk / 128 counts Q groups and num_sections = Sq // 8192 KV "
      "sections; the merge is correct only for exactly two sections (with one, write_back reads "
      "a scaling_factor never written; with three or more, middle sections are neither stored "
      "nor merged)",
      "d = 128 fixed: the output views and prev_output / mm2 tiles are 128 wide (the source "
      "asserts d <= 128 only)",
      "the section loop (sequential_range(num_sections), line 113) is unrolled at build time into "
      "two bodies: the IR has no `if`, and the branches of update_max and write_back test the "
      "sequential loop variable section_i. The section-scope buffers sit at the same offsets in "
      "both sections (the source traces the body once), so they are declared once at kernel scope",
      "the steady-state loop affine_range(num_grps - 2, precise_schedule=True) carries "
      "dependencies (running max and sum, two-slot q_loaded / mhlo_mul_2 / scaling_factor / "
      "final_reduce_sum_b, single exp6 / tp / mm2 buffers) and precise_schedule keeps program "
      "order: modelled as a sequential_range",
      "scalar_tensor_tensor(prev_output, multiply, scaling_factor, add, mm2_sbuf) (line 294) is "
      "one Vector instruction computing in fp32; the IR has no such instruction, so it is a "
      "Vector tensor_scalar into an fp32 tile stt_product (placed right after the source's "
      "allocation end, 137676 B) and a Vector tensor_tensor add rounded once to mm2_sbuf_res: "
      "the same values, one more instruction in timing and traces",
      "nl.loop_reduce(mm2_psum, add) is a tensor_tensor add into mm2_sbuf (its documented "
      "equivalent), and the loops it reduces over (pv's mm2i, fused_qkmax_and_pv's si) are "
      "sequential: the IR's affine loops allow PSUM accumulation as their only carried "
      "dependency, and program order is one of the orders the source allows; the PV accumulation "
      "into the nl.ndarray mm2_psum (no zeros) opens its group "
      "with an overwriting first matmul, peeled; the 16 PV matmuls per 2048-key chunk are one "
      "loop over t = tp_grp_i * 4 + mm2_si",
      "identity from nl.shared_constant (line 96) generated on chip (memset 1.0 and an "
      "affine_select, kernels/nki_lowering.h): the same values without the 32 KiB load",
      "mixed_precision has no effect (every working tensor is hard-coded bf16 / fp32) and is "
      "not an option; inputs and output are bf16 (the source's test); causal masking is not "
      "supported (the source asserts use_causal_mask == False); softmax_scale fixed at 0.125 "
      "(the source's test)",
      "bs (the SPMD grid over the batch) capped at 2: a cap of the modelled domain, not of the "
      "source",
      "a check case at 16384 runs 3 x 16K x 16K x 128 multiply-adds on the interpreter (QK, the "
      "P transposes, PV) plus the fast oracle: the registry-wide tests skip this kernel by its "
      "per-case cost (kernels/flash_attention/tests/pipelined_attention_test.cpp runs it once)",
  };
  // `ncverify check pipelined_attention --param bs=1 --param seqlen=16384 --cases 1`: 54.5 s on
  // the 2-core build machine shared with another build (3 x 34 G multiply-adds interpreted).
  v.check_case_seconds = 55;
  v.build = build_pipelined_attention;
  v.contract = [](const Options&) { return pipelined_contract(PipeShape{}); };
  v.spec = pipelined_spec;
  v.layout = Layout{{"q", {Axis::batch, Axis::dim, Axis::seq}},
                    {"k", {Axis::batch, Axis::dim, Axis::seq}},
                    {"v", {Axis::batch, Axis::seq, Axis::dim}},
                    {"o", {Axis::batch, Axis::seq, Axis::dim}}};
  return v;
}

Variant pipelined_attention_scaled_variant(const PipeShape& shape) {
  Variant v = pipelined_attention_variant();
  // 3 x seqlen^2 x 128 multiply-adds interpreted: the cost scales with the square of seqlen.
  const double ratio = static_cast<double>(shape.seqlen()) / static_cast<double>(kPipeSeqlen);
  v.check_case_seconds *= ratio * ratio;
  v.build = [shape](const Options&) { return build_pipelined_attention_scaled(shape); };
  v.contract = [shape](const Options&) { return pipelined_contract(shape); };
  v.notes.push_back("scaled for tests: two sections of " + std::to_string(shape.section_len) +
                    " keys (seqlen " + std::to_string(shape.seqlen()) +
                    "), not a shape the source runs at");
  return v;
}

}  // namespace ncv::kernels
