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
  nlohmann::json j = {{"name", name},
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
  if (rope_angle != RopeAngle::exact || rope_product_dtype != DType::fp32) {
    j["rope_angle"] = rope_angle == RopeAngle::exact ? "exact" : "fp32_reduced";
    j["rope_sin_abs"] = rope_sin_abs;
    j["rope_product_dtype"] = n(rope_product_dtype);
  }
  return j;
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
  check_float(rope_product_dtype, "rope_product_dtype");
  if (!(rope_sin_abs >= 0 && rope_sin_abs < 1)) {
    throw std::invalid_argument("rope_sin_abs: must be in [0, 1)");
  }
}

double rope_angle_error(double angle) {
  // ERROR_BOUNDS.md §4 "RoPE", step by step; u = 2^-24, eta the fp32 subnormal half-spacing.
  const double u = std::ldexp(1.0, -24), eta = std::ldexp(1.0, -150);
  const double pi = 3.14159265358979323846;
  const double P = static_cast<float>(pi), Y = 2 * P;  // fp32(pi), fp32(2 pi) = 2 fp32(pi)
  const double C15 = static_cast<float>(1.5 * pi);     // fp32(1.5 pi)
  // The constants' own errors (double evaluation of them is within 1e-15).
  const double dY = std::fabs(Y - 2 * pi) + 1e-15;
  const double dshift = std::fabs(C15 - 1.5 * pi) + std::fabs(P - pi) + 1e-15;
  const double E = std::fabs(angle);
  const double e1 = u * E + eta;         // emb = fl(pos * f)
  const double emb = E * (1 + u) + eta;  // |emb|
  const double e2 = u * (emb + 5);       // x = fl(emb + c), c = fp32(pi) or fp32(1.5 pi)
  const double X = (emb + 5) * (1 + u);  // |x|
  // The Sin argument a = fl(res - fp32(pi)) lies in [-fp32(pi), fp32(pi)] (its valid range), so
  // |res| <= 2 fp32(pi) (1 + 2u) < 6.31: the subtract res = fl(x - fl(k Y)) errs by <= 6.31 u /
  // (1 - u), the shift back by <= u fp32(pi) / (1 - u).
  const double e4 = 6.31 * u / (1 - u), e5 = u * P / (1 - u);
  const double kY = (X + 6.31 / (1 - u)) / (1 - u);  // |k Y| <= |x| + |x - k Y|
  const double e3 = u * kY;                          // fl(k * Y), k an exact int32
  const double periods = kY / Y;  // |k|: k fp32(2 pi) differs from k 2 pi by |k| dY
  return (e1 + e2 + e3 + e4 + e5 + periods * dY + dshift) * 1.001;
}

double rope_rotation_rel(const PrecisionContract& ct, double angle) {
  const double u = unit_roundoff(DType::fp32);
  // the product rotate_half(x) * sin: fp32, then (narrower) rope_product_dtype
  const double up =
      u +
      (ct.rope_product_dtype == DType::fp32 ? 0.0 : unit_roundoff(ct.rope_product_dtype) * (1 + u));
  if (ct.rope_angle == RopeAngle::exact) {
    // cos/sin within u each, the products and the add: 4 u (with a narrower product store, its
    // extra rounding twice over, as the bound below)
    return up == u ? 4 * u : 4 * u + 2 * (up - u);
  }
  // |cos^ - cos(theta)|, |sin^ - sin(theta)| <= angle error + Sin's error (|sin'| <= 1); then
  // x cos^ (u), rotate_half(x) sin^ (up), the add (u), each of magnitude <= (|a| + |b|)(1 + e).
  const double e = ct.rope_sin_abs;
  return (rope_angle_error(angle) + e + (1 + e) * (u + up + u * (1 + up) * (1 + u))) * 1.001;
}

double rope_rotation_abs(const PrecisionContract& ct) {
  const double eta = subnormal_half_spacing(DType::fp32);
  const double etap =
      ct.rope_product_dtype == DType::fp32 ? 0.0 : subnormal_half_spacing(ct.rope_product_dtype);
  if (ct.rope_angle == RopeAngle::exact && etap == 0) return 2 * eta;
  return 3 * eta + 2 * etap;
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
