#include "oracle/precision_contract.h"

#include <cmath>
#include <stdexcept>

namespace ncv::oracle {

namespace {

struct FloatFormat {
  int p;     // significand bits including the implicit one
  int emin;  // exponent of the smallest normal
};

FloatFormat format_of(DType t) {
  switch (t) {
    case DType::fp32:
      return {24, -126};
    case DType::bf16:
      return {8, -126};
    case DType::fp16:
      return {11, -14};
    case DType::fp8_e4m3:
    case DType::fp8_e4m3fn:
      return {4, -6};
    case DType::fp8_e5m2:
      return {3, -14};
    default:
      break;
  }
  throw std::invalid_argument("precision contract: " + std::string(dtype_name(t)) +
                              " is not a float dtype");
}

void check_float(DType t, const char* field) {
  if (!is_float(t)) {
    throw std::invalid_argument(std::string(field) + ": " + std::string(dtype_name(t)) +
                                " is not a float dtype");
  }
}

}  // namespace

double unit_roundoff(DType t) {
  return std::ldexp(1.0, -format_of(t).p);
}

double subnormal_half_spacing(DType t) {
  FloatFormat f = format_of(t);
  return std::ldexp(1.0, f.emin - f.p);
}

double ulp_at(DType t, double x) {
  FloatFormat f = format_of(t);
  double a = std::fabs(x);
  int e = f.emin;
  if (a > 0 && std::isfinite(a)) e = std::max(f.emin, std::ilogb(a));
  return std::ldexp(1.0, e - (f.p - 1));
}

bool represents(DType to, DType from) {
  if (to == from || to == DType::fp32) return true;
  FloatFormat a = format_of(to), b = format_of(from);
  // Enough significand bits, and the range (normal and subnormal) of `from` fits in `to`.
  bool range = dtype_max_finite(to) >= dtype_max_finite(from) && (a.emin - a.p) <= (b.emin - b.p);
  return a.p >= b.p && range;
}

double conversion_roundoff(DType from, DType to) {
  return represents(to, from) ? 0.0 : unit_roundoff(to);
}

PrecisionContract PrecisionContract::all_fp32() {
  PrecisionContract c;
  c.name = "all_fp32";
  return c;
}

PrecisionContract PrecisionContract::bf16_matmul_fp32_accum() {
  PrecisionContract c;
  c.name = "bf16_matmul_fp32_accum";
  c.q_dtype = c.k_dtype = c.v_dtype = c.p_dtype = DType::bf16;
  c.out_dtype = DType::bf16;
  return c;
}

PrecisionContract PrecisionContract::bf16_matmul_bf16_scores() {
  PrecisionContract c = bf16_matmul_fp32_accum();
  c.name = "bf16_matmul_bf16_scores";
  c.score_dtype = DType::bf16;
  return c;
}

PrecisionContract PrecisionContract::bf16_eager_scale_folded() {
  PrecisionContract c;
  c.name = "bf16_eager_scale_folded";
  c.q_dtype = c.k_dtype = c.v_dtype = c.p_dtype = DType::bf16;
  c.scale_folded_into_q = true;
  c.score_dtype = c.exp_dtype = DType::bf16;
  c.norm = Normalisation::before_pv;
  c.out_dtype = DType::bf16;
  return c;
}

PrecisionContract PrecisionContract::fp16_matmul_fp32_accum() {
  PrecisionContract c;
  c.name = "fp16_matmul_fp32_accum";
  c.q_dtype = c.k_dtype = c.v_dtype = c.p_dtype = DType::fp16;
  c.out_dtype = DType::fp16;
  return c;
}

std::vector<PrecisionContract> PrecisionContract::named() {
  return {all_fp32(), bf16_matmul_fp32_accum(), bf16_matmul_bf16_scores(),
          bf16_eager_scale_folded(), fp16_matmul_fp32_accum()};
}

nlohmann::json PrecisionContract::to_json() const {
  auto n = [](DType t) { return std::string(dtype_name(t)); };
  return {{"name", name},
          {"q_dtype", n(q_dtype)},
          {"k_dtype", n(k_dtype)},
          {"v_dtype", n(v_dtype)},
          {"scale_folded_into_q", scale_folded_into_q},
          {"q_rounded_before_scale", q_rounded_before_scale},
          {"qk_accum", n(qk_accum)},
          {"score_dtype", n(score_dtype)},
          {"bias_dtype", n(bias_dtype)},
          {"max_dtype", n(max_dtype)},
          {"exp_dtype", n(exp_dtype)},
          {"p_dtype", n(p_dtype)},
          {"sum_dtype", n(sum_dtype)},
          {"sum_of_rounded_p", sum_of_rounded_p},
          {"sink_term_fp32", sink_term_fp32},
          {"pv_accum", n(pv_accum)},
          {"norm", norm == Normalisation::deferred ? "deferred" : "before_pv"},
          {"norm_dtype", n(norm_dtype)},
          {"out_dtype", n(out_dtype)},
          {"kv_tile", kv_tile},
          {"exp_ulps", exp_ulps},
          {"online_tile", online_tile},
          {"online_partial_dtype", n(online_partial_dtype)}};
}

void PrecisionContract::validate() const {
  check_float(q_dtype, "q_dtype");
  check_float(k_dtype, "k_dtype");
  check_float(v_dtype, "v_dtype");
  check_float(qk_accum, "qk_accum");
  check_float(score_dtype, "score_dtype");
  check_float(bias_dtype, "bias_dtype");
  check_float(max_dtype, "max_dtype");
  check_float(exp_dtype, "exp_dtype");
  check_float(p_dtype, "p_dtype");
  check_float(sum_dtype, "sum_dtype");
  check_float(pv_accum, "pv_accum");
  check_float(out_dtype, "out_dtype");
  check_float(norm_dtype, "norm_dtype");
  check_float(online_partial_dtype, "online_partial_dtype");
  if (kv_tile < 1) throw std::invalid_argument("kv_tile: must be >= 1");
  if (!(exp_ulps >= 0)) throw std::invalid_argument("exp_ulps: must be >= 0");
  if (online_tile < 0) throw std::invalid_argument("online_tile: must be >= 0 (0: two-pass)");
  // The online terms (error_bound.h online_softmax_terms) are derived for the flash structure
  // only: deferred normalisation and an fp32 accumulator.
  if (online_tile > 0 &&
      (norm != Normalisation::deferred || pv_accum != DType::fp32 || norm_dtype != DType::fp32)) {
    throw std::invalid_argument(
        "online_tile: needs norm deferred, pv_accum fp32 and norm_dtype fp32");
  }
  if (online_tile == 0 && online_partial_dtype != DType::fp32) {
    throw std::invalid_argument("online_partial_dtype: needs online_tile > 0");
  }
}

float contract_bias(DType bias_dtype, double b) {
  return quantize(bias_dtype, static_cast<float>(b));
}

double bias_rounding_error(DType bias_dtype, double b) {
  if (static_cast<double>(contract_bias(bias_dtype, b)) == b) return 0.0;
  return (unit_roundoff(bias_dtype) + 2 * unit_roundoff(DType::fp32)) * std::fabs(b) +
         subnormal_half_spacing(bias_dtype) + subnormal_half_spacing(DType::fp32);
}

}  // namespace ncv::oracle
