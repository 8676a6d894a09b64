// A kernel's precision contract: which stages of attention round to which dtype
// (oracle/ERROR_BOUNDS.md). error_bound() turns a contract into a per-element bound and
// contract_reference() runs a plain C++ attention that rounds exactly where the contract says.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/numerics/dtype.h"

namespace ncv::oracle {

// Where the softmax denominator is applied.
enum class Normalisation : uint8_t {
  deferred,   // PV on unnormalised P, then out = acc / l (flash style)
  before_pv,  // P = p / l rounded to p_dtype, then PV (eager style)
};

// How a kernel with RoPE computes the cos and sin of the angle pos * f (ERROR_BOUNDS.md §4
// "RoPE").
enum class RopeAngle : uint8_t {
  // cos and sin of the exact angle, rounded to fp32 (within u32 each)
  exact,
  // nki-library attention_tkg.py _rope: the angle pos * f as an fp32 product, shifted by fp32(pi)
  // (sin) or fp32(1.5 pi) (cos), reduced by fp32(2 pi) in fp32 (_modulo: x - k * fp32(2 pi), k
  // an int32), shifted back by fp32(-pi) and fed to the Scalar engine's Sin, whose documented
  // input range is [-pi, pi] (ISA activation function table; outside it the value is undefined,
  // and a run whose output depends on it is unknown: model/interp/README.md "Undefined values")
  fp32_reduced,
};

struct PrecisionContract {
  std::string name = "custom";
  // Operands as fed to the QK^T matmul and the PV matmul (rounded from the spec's input dtype).
  DType q_dtype = DType::fp32, k_dtype = DType::fp32, v_dtype = DType::fp32;
  // true: q' = round_q(fp32(q * scale)) and the scores are q'.k (the NKI sd kernels: q * 0.125 cast
  // to bf16). false: s = fp32(acc * scale) after the QK^T accumulation.
  bool scale_folded_into_q = false;
  // With the scale folded: q is loaded into q_dtype first and q * scale rounded to q_dtype again
  // (q' = round_q(fp32(scale) * round_q(q)), NKI flash_fwd's q_tile = load(q, dtype) * scale).
  // The same as one rounding for a power-of-two scale (the sd kernels' 0.125).
  bool q_rounded_before_scale = false;
  DType qk_accum = DType::fp32;     // QK^T accumulation (PSUM: fp32)
  DType score_dtype = DType::fp32;  // storage of the scaled scores
  // The additive logits bias (AttentionSpec::bias): rounded from its fp32 value to bias_dtype (a
  // kernel loads it in its kernel_dtype), then added in fp32 to the fp32 scaled score before the
  // score is stored in score_dtype and before the masks.
  DType bias_dtype = DType::fp32;
  DType max_dtype = DType::fp32;  // the row max (a shift: only the exp argument sees it)
  DType exp_dtype = DType::fp32;  // exp(s - m) output (expf in fp32, then rounded here)
  DType p_dtype = DType::fp32;    // P as fed to the PV matmul
  DType sum_dtype = DType::fp32;  // accumulation of the softmax denominator l
  bool sum_of_rounded_p = false;  // l sums P as fed to PV (p_dtype) instead of the exp output
  // The sink's term exp(sink - m) of the denominator: false, rounded like the keys' terms
  // (exp_dtype, then p_dtype with sum_of_rounded_p); true, added in fp32 unrounded (a kernel
  // that computes it into its fp32 row-sum buffer, attention_tkg; ERROR_BOUNDS.md §4 "Sinks").
  bool sink_term_fp32 = false;
  DType pv_accum = DType::fp32;  // accumulation of the PV product across key tiles
  Normalisation norm = Normalisation::deferred;
  // Deferred normalisation in a narrower dtype (a kernel_dtype of bf16): the PV result, l, its
  // reciprocal and the product are each rounded to norm_dtype (out = fl(fl(acc) * fl(1 / fl(l))),
  // or with acc multiplied straight out of PSUM: fl(acc * fl(1 / fl(l))));
  // with fp32 the kernel divides or multiplies by the reciprocal in fp32.
  DType norm_dtype = DType::fp32;
  DType out_dtype = DType::fp32;  // the stored output
  int64_t kv_tile = 128;          // keys per PV matmul (partials are fp32 within a tile)
  double exp_ulps = 2.0;          // error of the fp32 exp (libm expf / ScalarE), in fp32 ulps
  // Online softmax with a log-sum-exp denominator (NKI flash_fwd): the keys are processed in
  // tiles of online_tile keys; a tile's p are exp(s - m_t) at the running max m_t after that
  // tile (rounded to p_dtype there), o is rescaled by exp(m_prev - m_t) per tile, and the
  // denominator is carried as lse = m + log(exp(lse_prev - m) + sum) and applied at the end as
  // out = o * exp(m - lse). Its rescaling factors differ between o and the denominator, so
  // neither cancels (ERROR_BOUNDS.md §4 "Online softmax"). 0: every p uses the final row max.
  int64_t online_tile = 0;
  // With online_tile: the running output is kept in this dtype between tiles. The partial of
  // every tile but the last is rounded to it before its rescale, and the merged numerator (the
  // rescaled partial plus the last tile's PV, added in fp32) is rounded to it before the fp32
  // normalisation (pipelined_attention: section 0's partial goes through its bf16 output in HBM,
  // the merge writes a bf16 tile). fp32: kept in fp32 (flash_fwd).
  DType online_partial_dtype = DType::fp32;
  // RoPE (AttentionSpec::rope): how cos and sin are computed, then the rotation
  // x * cos + rotate_half(x) * sin in fp32 with rotate_half(x) * sin stored in
  // rope_product_dtype before the add (nki-library's _apply_rope keeps it in x's dtype: fp32 when
  // it loads x from HBM, q's dtype when q is already in SBUF), rounded to the fed dtype.
  RopeAngle rope_angle = RopeAngle::exact;
  // fp32_reduced: |Sin(a) - sin(a)| on [-pi, pi] for the kernel's Sin. An assumption, like
  // exp_ulps: AWS publishes no accuracy for the Scalar engine's functions; 2^-22 is 4 fp32 ulps
  // at 1 (the model's libm sinf is within one).
  double rope_sin_abs = 0x1p-22;
  DType rope_product_dtype = DType::fp32;

  // Named contracts.
  static PrecisionContract all_fp32();
  // bf16 q/k/v/P into the matmuls, fp32 PSUM accumulation, fp32 scores and softmax, bf16 output
  // (the flash-style NKI kernels).
  static PrecisionContract bf16_matmul_fp32_accum();
  // As above but the scores are stored as bf16 too.
  static PrecisionContract bf16_matmul_bf16_scores();
  // Eager bf16 attention with the scale folded into q: q * scale then bf16, bf16 k/v, fp32
  // PSUM, bf16 scores and exp, P normalised before PV. (The sd_attention kernels' own contracts
  // are kernels::sd_attention_contract.)
  static PrecisionContract bf16_eager_scale_folded();
  // fp16 everywhere except fp32 accumulation.
  static PrecisionContract fp16_matmul_fp32_accum();
  static std::vector<PrecisionContract> named();

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the field on a non-float dtype or a bad tile.
  void validate() const;
  bool operator==(const PrecisionContract&) const = default;
};

// Unit roundoff u = 2^-p of a float dtype (fp32 2^-24, bf16 2^-8, fp16 2^-11, e4m3 2^-4,
// e5m2 2^-3) and the absolute rounding error in the subnormal range (half the smallest
// subnormal). Throws std::invalid_argument for integer dtypes.
double unit_roundoff(DType t);
double subnormal_half_spacing(DType t);
// Distance between adjacent values of dtype t at the magnitude of x (one ulp at x; for |x| below
// the smallest normal, the subnormal spacing).
double ulp_at(DType t, double x);
// true if every value of `from` is a value of `to` (rounding from -> to is exact).
bool represents(DType to, DType from);
// Error of rounding a value of `from` to `to`: 0 if exact, else unit_roundoff(to).
double conversion_roundoff(DType from, DType to);
// A bound on |rotated component - exact rotation| before the rounding to the fed dtype, for a
// pair (a, b) rotated by angle pos * f: rope_rotation_rel(ct, pos * f) * (|a| + |b|) +
// rope_rotation_abs(ct) (ERROR_BOUNDS.md §4 "RoPE"). `angle` is the exact angle.
double rope_rotation_rel(const PrecisionContract& ct, double angle);
double rope_rotation_abs(const PrecisionContract& ct);
// fp32_reduced: a bound on |angle the kernel's Sin sees - (exact angle + shift)| mod 2 pi, for
// both the sin and the cos argument (the rel term above is this plus rope_sin_abs and the
// rotation's roundings).
double rope_angle_error(double angle);

// The bias as a kernel honouring the contract adds it: fp32(b) rounded to bias_dtype.
float contract_bias(DType bias_dtype, double b);
// A bound on |contract_bias(bias_dtype, b) - b|: 0 when b is a value of bias_dtype, else the two
// roundings (to fp32, then to bias_dtype): (u_bias + 2 u_32)|b| + eta_bias + eta_32
// (ERROR_BOUNDS.md §4 "Bias").
double bias_rounding_error(DType bias_dtype, double b);

}  // namespace ncv::oracle
