#include "oracle/contract_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/numerics/fp32_exp.h"

namespace ncv::oracle {

std::string_view perturbation_name(Perturbation p) {
  switch (p) {
    case Perturbation::none:
      return "none";
    case Perturbation::drop_key:
      return "drop_key";
    case Perturbation::scale_ulp:
      return "scale_ulp";
    case Perturbation::causal_off_by_one:
      return "causal_off_by_one";
    case Perturbation::skip_last_tile:
      return "skip_last_tile";
    case Perturbation::no_renormalise:
      return "no_renormalise";
    case Perturbation::bf16_pv_accum:
      return "bf16_pv_accum";
    case Perturbation::zero_output:
      return "zero_output";
    case Perturbation::drop_bias:
      return "drop_bias";
  }
  return "?";
}

namespace {

// fp32 rotate-half RoPE (cos/sin in double rounded to fp32: within every RopeAngle's
// allowance; rotate_half(x) * sin stored in the contract's rope_product_dtype), or a plain fp32
// copy.
void load_vec(const PrecisionContract& ct, const double* src, int64_t d,
              const std::vector<double>* inv_freq, int64_t pos, float* dst) {
  for (int64_t c = 0; c < d; ++c) dst[c] = static_cast<float>(src[c]);
  if (inv_freq == nullptr) return;
  const int64_t half = d / 2;
  for (int64_t t = 0; t < half; ++t) {
    const double ang = static_cast<double>(pos) * (*inv_freq)[static_cast<size_t>(t)];
    const float cs = static_cast<float>(std::cos(ang)), sn = static_cast<float>(std::sin(ang));
    const float a = dst[t], b = dst[t + half];
    const DType pd = ct.rope_product_dtype;
    dst[t] = a * cs + quantize(pd, -b * sn);
    dst[t + half] = b * cs + quantize(pd, a * sn);
  }
}

}  // namespace

std::vector<double> contract_reference(const PrecisionContract& ct, const AttentionSpec& spec,
                                       const AttentionInputs& in, Perturbation pert) {
  spec.validate();
  ct.validate();
  const int64_t B = spec.batch, H = spec.heads, Sq = spec.seqlen_q, Skv = spec.seqlen_kv,
                d = spec.d_head;
  std::vector<double> out(static_cast<size_t>(spec.q_elements()), 0.0);
  if (pert == Perturbation::zero_output) return out;

  const std::vector<double> inv_freq = rope_inverse_frequencies(spec);
  const std::vector<double>* rf = spec.rope ? &inv_freq : nullptr;
  double scale_d = spec.scale;
  if (pert == Perturbation::scale_ulp) scale_d += ulp_at(DType::bf16, scale_d);
  const float scale = static_cast<float>(scale_d);
  const DType pv_acc = pert == Perturbation::bf16_pv_accum ? DType::bf16 : ct.pv_accum;
  const int64_t last_tile_start = ((Skv - 1) / ct.kv_tile) * ct.kv_tile;

  std::vector<float> q(static_cast<size_t>(d)), k(static_cast<size_t>(d));
  std::vector<int64_t> keys;
  std::vector<float> sc, ph, pt, pb, acc(static_cast<size_t>(d));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kvh = spec.kv_head_of(h);
      for (int64_t i = 0; i < Sq; ++i) {
        const int64_t base = spec.q_index(b, h, i, 0);
        keys.clear();
        const int64_t diag = i + Skv - Sq;
        for (int64_t j = 0; j < Skv; ++j) {
          bool vis = spec.visible(b, i, j);
          if (pert == Perturbation::causal_off_by_one && spec.mask.kind == MaskKind::causal) {
            vis = j <= diag + 1;
          }
          if (pert == Perturbation::skip_last_tile && j >= last_tile_start) vis = false;
          if (vis) keys.push_back(j);
        }
        if (pert == Perturbation::drop_key && !keys.empty()) keys.pop_back();
        if (keys.empty()) continue;  // fully masked: 0

        load_vec(ct, in.q.data() + base, d, rf,
                 spec.rope ? spec.rope->pos_q[static_cast<size_t>(b * Sq + i)] : 0, q.data());
        for (int64_t c = 0; c < d; ++c) {
          const float qc = ct.scale_folded_into_q && ct.q_rounded_before_scale
                               ? quantize(ct.q_dtype, static_cast<float>(q[c]))
                               : static_cast<float>(q[c]);
          q[c] = quantize(ct.q_dtype, ct.scale_folded_into_q ? scale * qc : qc);
        }
        const size_t n = keys.size();
        sc.assign(n, 0);
        for (size_t t = 0; t < n; ++t) {
          const int64_t j = keys[t];
          const bool rotated = rope_rotates_key(spec, j);
          load_vec(ct, in.k.data() + spec.kv_index(b, kvh, j, 0), d, rotated ? rf : nullptr,
                   rotated ? spec.rope->pos_k[static_cast<size_t>(b * Skv + j)] : 0, k.data());
          float a = 0;
          for (int64_t c = 0; c < d; ++c) {
            a = quantize(ct.qk_accum, a + q[c] * quantize(ct.k_dtype, k[c]));
          }
          float st = ct.scale_folded_into_q ? a : a * scale;
          // The bias, loaded in bias_dtype, is added in fp32 to the scaled score (not scaled).
          if (!spec.bias.empty() && pert != Perturbation::drop_bias) {
            st += contract_bias(ct.bias_dtype, spec.bias[static_cast<size_t>(i * Skv + j)]);
          }
          sc[t] = quantize(ct.score_dtype, st);
        }
        const bool has_sink = !spec.sink.empty();
        const float sink =
            has_sink
                ? quantize(ct.score_dtype, static_cast<float>(spec.sink[static_cast<size_t>(h)]))
                : 0.0f;
        float m = has_sink ? sink : -std::numeric_limits<float>::infinity();
        for (float x : sc) m = std::max(m, x);
        m = quantize(ct.max_dtype, m);
        ph.assign(n, 0);
        pt.assign(n, 0);
        float l = 0;
        for (size_t t = 0; t < n; ++t) {
          ph[t] = quantize(ct.exp_dtype, exp_f32(sc[t] - m));
          pt[t] = quantize(ct.p_dtype, ph[t]);
          l = quantize(ct.sum_dtype, l + (ct.sum_of_rounded_p ? pt[t] : ph[t]));
        }
        if (has_sink) {
          if (ct.sink_term_fp32) {
            l = quantize(ct.sum_dtype, l + exp_f32(sink - m));
          } else {
            const float ps = quantize(ct.exp_dtype, exp_f32(sink - m));
            l = quantize(ct.sum_dtype, l + (ct.sum_of_rounded_p ? quantize(ct.p_dtype, ps) : ps));
          }
        }
        const bool deferred = ct.norm == Normalisation::deferred;
        const bool renorm = pert != Perturbation::no_renormalise;
        pb.assign(n, 0);
        for (size_t t = 0; t < n; ++t) {
          pb[t] = deferred ? pt[t] : (renorm ? quantize(ct.p_dtype, ph[t] / l) : pt[t]);
        }
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t c = 0; c < d; ++c) {
          float a = 0, partial = 0;
          int64_t tile = n > 0 ? keys[0] / ct.kv_tile : 0;
          for (size_t t = 0; t < n; ++t) {
            const float v = quantize(
                ct.v_dtype,
                static_cast<float>(in.v[static_cast<size_t>(spec.kv_index(b, kvh, keys[t], c))]));
            if (pert == Perturbation::bf16_pv_accum) {
              a = quantize(DType::bf16, a + pb[t] * v);
              continue;
            }
            if (keys[t] / ct.kv_tile != tile) {
              a = quantize(pv_acc, a + partial);
              partial = 0;
              tile = keys[t] / ct.kv_tile;
            }
            partial += pb[t] * v;
          }
          if (pert != Perturbation::bf16_pv_accum) a = quantize(pv_acc, a + partial);
          acc[c] = a;
        }
        const DType nd = ct.norm_dtype;
        const float recip = quantize(nd, 1.0f / quantize(nd, l));
        for (int64_t c = 0; c < d; ++c) {
          float o = acc[c];
          if (deferred && renorm) {
            o = nd == DType::fp32 ? acc[c] / l : quantize(nd, quantize(nd, acc[c]) * recip);
          }
          out[static_cast<size_t>(base + c)] = quantize(ct.out_dtype, o);
        }
      }
    }
  }
  return out;
}

}  // namespace ncv::oracle
