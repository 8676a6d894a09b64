// What every kernel of the sd_attention family shares: the build-time options of the NKI kernels
// (use_causal_mask, mixed_precision, the input dtype), the attention problem they solve, and the
// precision contract each rewrite step implies. The tutorial and its rewrites, the batched
// reference layout, the manually allocated variant and the naive baseline all use these.
#pragma once

#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// The softmax scale the NKI kernels hard-code (softmax_scale = 0.125, i.e. 1/sqrt(64) whatever
// d_head is; nki-samples 7af4e4d sd_attention_nki_kernels.py). The spec uses it so that the
// oracle solves the problem the kernel solves; notes say so.
inline constexpr double kSdSoftmaxScale = 0.125;

// use_causal_mask (false|true), mixed_precision (true|false: bf16 or fp32 Tensor-engine
// operands), dtype (fp32|bf16: the inputs' and output's dtype, the kernel_dtype).
std::vector<OptionSpec> sd_attention_options();
DType pe_dtype(const Options& o);  // Tensor-engine operand dtype: bf16 if mixed_precision

// One head of self-attention per batch entry: seqlen_q = seqlen_kv = params "seqlen", d_head =
// params "d_head", batch = params "bs" when present (else 1), scale 0.125, causal mask when
// use_causal_mask, input and output dtype = the dtype option.
oracle::AttentionSpec sd_attention_spec(const Options& o, const ParamValues& params);

// The rounding stages of the tutorial kernel after Autocomp step `step` (0 = the tutorial,
// 1..5 the calibration file's rewrites):
//   q, k, v -> pe dtype at the load; q * 0.125 after the cast (exact: a power of two);
//   QK^T accumulated in fp32 PSUM; scores stored in kernel_dtype (pe dtype from step 4);
//   exp output kernel_dtype (step 0, 3) or the fp32 activation result summed before its
//   rounding to pe (steps 1, 2, 4, 5); P fed to PV in pe dtype; PV accumulated in fp32 PSUM over
//   128-key tiles; deferred normalisation by the reciprocal of l in kernel_dtype.
oracle::PrecisionContract sd_attention_contract(const Options& o, int step);

}  // namespace ncv::kernels
