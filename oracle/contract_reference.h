// A plain C++ attention that rounds exactly where a precision contract says
// (oracle/ERROR_BOUNDS.md), and perturbed versions of it that model common kernel bugs. Used to
// prove the error bound sound (the unperturbed reference stays within it) and tight (the perturbed
// ones do not).
//
// Structure (eager): per row, fp32 q'/k' (RoPE in fp32), rounded to q/k dtype (q' = q * scale
// first when the scale is folded); scores accumulated in qk_accum, scaled in fp32, plus the bias
// (rounded to bias_dtype, added in fp32), stored in score_dtype; max rounded to max_dtype; p =
// exp_f32(s - m) (the model's fp32 exp, < 1 ulp) rounded to exp_dtype, then to p_dtype; l summed
// sequentially in sum_dtype; PV over kv_tile-key tiles of the key index (fp32 partial per tile,
// partials accumulated in pv_accum); out = acc / l (deferred) or P = p / l before PV; output
// rounded to out_dtype. Fully masked rows give 0.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "oracle/attention_spec.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle {

enum class Perturbation : uint8_t {
  none,
  drop_key,           // the last visible key of every row is skipped
  scale_ulp,          // scale one bf16 ulp too large
  causal_off_by_one,  // causal mask lets each query see one future key
  skip_last_tile,     // keys of the last kv_tile tile of the key range are skipped
  no_renormalise,     // P never divided by l
  bf16_pv_accum,      // PV accumulated key by key in bf16 instead of fp32
  zero_output,        // all zeros (KernelBench's allclose blind spot)
  drop_bias,          // the spec's logits bias is ignored (not in kAllPerturbations: a no-op
                      // without a bias)
};

inline constexpr Perturbation kAllPerturbations[] = {
    Perturbation::drop_key,       Perturbation::scale_ulp,      Perturbation::causal_off_by_one,
    Perturbation::skip_last_tile, Perturbation::no_renormalise, Perturbation::bf16_pv_accum,
    Perturbation::zero_output};

std::string_view perturbation_name(Perturbation p);

// Output [B][H][Sq][d] as doubles holding values of contract.out_dtype.
std::vector<double> contract_reference(const PrecisionContract& contract, const AttentionSpec& spec,
                                       const AttentionInputs& in,
                                       Perturbation perturbation = Perturbation::none);

}  // namespace ncv::oracle
