#include "kernels/flash_attention/flash_fwd_common.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/families.h"
#include "oracle/bias_values.h"

namespace ncv::kernels {
namespace {

const char* const kSource =
    "aws-neuron/nki-samples src/nki_samples/reference/attention.py flash_fwd "
    "(with _flash_attention_core) @8370e11ba8d8";

const std::string& option(const Options& o, const std::string& name) {
  const auto it = o.find(name);
  if (it == o.end()) throw std::invalid_argument("flash_fwd: option '" + name + "' is not set");
  return it->second;
}

}  // namespace

std::vector<OptionSpec> flash_fwd_options() {
  return {
      {"use_causal_mask", {"false", "true"}, "false", "causal mask (tiles above it skipped)"},
      {"sliding_window",
       {"off", "on"},
       "off",
       "sliding window of the symbolic param `window` keys (forces the causal mask)"},
      {"mixed_precision", {"true", "false"}, "true", "bf16 kernel_dtype, fp32 statistics"},
      {"seq_tile_size",
       {"512", "1024"},
       "512",
       "L: keys per large KV tile (source default 2048; 1024 has two 512-key score tiles)"},
      {"training",
       {"false", "true"},
       "false",
       "FlashConfig.training: also store the log-sum-exp of every row to lse [bs, h, 128, S/128]"},
      {"logit_bias",
       {"false", "true"},
       "false",
       "logit_bias [1, 1, S, S] in the HBM dtype, loaded in kernel_dtype and added to the scores "
       "(not scaled) before the masks; not with sliding_window=on (a source defect, see the "
       "notes)"},
      {"attn_core_tile_size",
       {"256", "2"},
       "256",
       "FlashConfig.attn_core_tile_size: q tiles per re-materialisation pass (2: several passes "
       "at the modelled lengths; only with dtype, mixed_precision and seq_tile_size at their "
       "defaults)"},
      {"softmax_scale",
       {"1/sqrt(128)", "0.125"},
       "1/sqrt(128)",
       "the scale folded into q: fp32(1/sqrt(128)), the source's default 1/sqrt(d) at d = 128, "
       "or 0.125 (a power of two: q * scale rounds once); 0.125 with the other options at their "
       "defaults but the masks"},
      {"dtype",
       {"fp32", "bf16"},
       "fp32",
       "q, k, v and o in HBM (bf16 only with mixed_precision=true: without it the source's "
       "statistics would be bf16)"},
  };
}

FlashFwdConfig flash_fwd_config(const Options& o) {
  FlashFwdConfig c;
  c.sliding_window = option(o, "sliding_window") == "on";
  c.causal = c.sliding_window || option(o, "use_causal_mask") == "true";
  c.seq_tile_size = std::stoll(option(o, "seq_tile_size"));
  c.training = option(o, "training") == "true";
  c.logit_bias = option(o, "logit_bias") == "true";
  c.attn_core_tile_size = std::stoll(option(o, "attn_core_tile_size"));
  // attention.py:390: softmax_scale = softmax_scale or 1.0 / (d ** 0.5), multiplied into q
  // (line 476) as an fp32 immediate.
  c.softmax_scale = option(o, "softmax_scale") == "0.125" ? 0.125f : kFlashDefaultScale;
  c.io_dtype = option_dtype(o);  // q.dtype (o = nl.ndarray(..., dtype=q.dtype))
  const bool mixed = option(o, "mixed_precision") == "true";
  // attention.py: kernel_dtype = nl.bfloat16 if mixed_precision else q.dtype.
  c.kernel_dtype = mixed ? DType::bf16 : c.io_dtype;
  // acc_type = np.dtype(np.float32) if mixed_precision else kernel_dtype: fp32 on every offered
  // combination (bf16 without mixed precision is excluded, flash_fwd_excluded).
  c.acc_dtype = DType::fp32;
  return c;
}

namespace {

const std::string& flash_fwd_default(const std::string& option) {
  static const std::vector<OptionSpec> specs = flash_fwd_options();
  for (const OptionSpec& spec : specs) {
    if (spec.name == option) return spec.default_value;
  }
  throw std::logic_error("flash_fwd has no option " + option);
}

}  // namespace

std::string flash_fwd_excluded(const Options& o) {
  const auto dt = o.find("dtype"), mp = o.find("mixed_precision");
  if (dt != o.end() && mp != o.end() && dt->second == "bf16" && mp->second == "false") {
    return "dtype=bf16 needs mixed_precision=true: without it the source's acc_type is bf16, "
           "where nl.fp32.min rounds to -inf and a row the window masks out of a whole large "
           "tile gives exp(-inf + inf) = NaN (see the notes)";
  }
  const auto lb = o.find("logit_bias"), sw = o.find("sliding_window");
  if (lb != o.end() && sw != o.end() && lb->second == "true" && sw->second == "on") {
    return "logit_bias=true with sliding_window=on is a source defect: with the bias the window "
           "select of left tiles reads `intermediate`, written only on the diagonal tile "
           "(attention.py:155-172), and the diagonal tile never gets the window (see the notes)";
  }
  // Each option value doubles the programs prove and the registry tests cover, so the values
  // that exercise one mechanism are offered with the options it does not interact with fixed:
  // the passes interact with the masks' tile guards, the lse store and the bias tile index, not
  // with the dtypes or L; the scale with the masks only (q * scale rounds once or twice).
  using Fixed = std::vector<std::pair<std::string, std::string>>;
  const Fixed dtypes = {{"dtype", "fp32"}, {"mixed_precision", "true"}, {"seq_tile_size", "512"}};
  Fixed scale_fixed = dtypes;
  scale_fixed.insert(
      scale_fixed.end(),
      {{"attn_core_tile_size", "256"}, {"training", "false"}, {"logit_bias", "false"}});
  for (const auto& [option, fixed] : {std::pair<std::string, Fixed>{"attn_core_tile_size", dtypes},
                                      {"softmax_scale", scale_fixed}}) {
    const auto set = o.find(option);
    if (set == o.end() || set->second == flash_fwd_default(option)) continue;
    for (const auto& [name, value] : fixed) {
      const auto it = o.find(name);
      if (it != o.end() && it->second != value) {
        return option + "=" + set->second + " is modelled with " + name + "=" + value +
               " only (each further combination would double the programs prove and the "
               "registry tests cover; see the notes)";
      }
    }
  }
  return "";
}

oracle::AttentionSpec flash_fwd_spec(const Options& o, const ParamValues& params) {
  const FlashFwdConfig c = flash_fwd_config(o);
  oracle::AttentionSpec s;
  s.batch = param_value(params, "bs");
  s.kv_heads = param_value(params, "kv_heads");
  s.heads = s.kv_heads * param_value(params, "group");
  s.seqlen_q = s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = param_value(params, "d_head");
  s.scale = static_cast<double>(c.softmax_scale);  // the fp32 value the kernel multiplies by
  if (c.sliding_window) {
    // The source keeps k_pos > q_pos - w and k_pos <= q_pos; the oracle's sliding window of
    // `window` keeps j > i - window and j <= i (Sq = Sk): the same w.
    s.mask.kind = oracle::MaskKind::sliding_window;
    s.mask.window = param_value(params, "window");
  } else if (c.causal) {
    s.mask.kind = oracle::MaskKind::causal;
  }
  s.input_dtype = s.output_dtype = c.io_dtype;
  // A spec carries the bias values; check draws them per case (oracle::generate_bias from the
  // case's seed), this one (seed 0) serves every other consumer (equiv, properties, report).
  if (c.logit_bias) s.bias = oracle::generate_bias(s, 0);
  return s;
}

oracle::PrecisionContract flash_fwd_contract(const Options& o) {
  const FlashFwdConfig c = flash_fwd_config(o);
  oracle::PrecisionContract ct;
  ct.name = "flash_fwd";
  ct.q_dtype = ct.k_dtype = ct.v_dtype = c.kernel_dtype;  // nl.load(..., dtype=kernel_dtype)
  // q_tile = q * softmax_scale in kernel_dtype: exact only for a power-of-two scale.
  ct.scale_folded_into_q = true;
  ct.q_rounded_before_scale = true;  // nl.load(q, dtype=kernel_dtype), then * scale
  ct.qk_accum = DType::fp32;         // PSUM
  ct.score_dtype = ct.max_dtype = c.acc_dtype;
  // logit_bias_tile is kernel_dtype (attention.py:480), added in acc_type (attention.py:156).
  ct.bias_dtype = c.kernel_dtype;
  ct.exp_dtype = DType::fp32;  // the row sum adds the activation's fp32 results
  ct.p_dtype = c.kernel_dtype;
  ct.sum_dtype = c.acc_dtype;
  ct.sum_of_rounded_p = false;
  ct.pv_accum = c.acc_dtype;  // PSUM per large tile, o_buffer across them
  ct.kv_tile = 128;
  // Online softmax over the large tiles, the denominator as a log-sum-exp.
  ct.online_tile = c.seq_tile_size;
  ct.norm = oracle::Normalisation::deferred;  // o * exp(m - l) at the end
  ct.norm_dtype = c.acc_dtype;
  ct.out_dtype = c.kernel_dtype;  // out rounded to kernel_dtype, then stored in q.dtype
  return ct;
}

Variant flash_fwd_variant() {
  Variant v;
  v.name = "flash_fwd";
  v.family = "flash_attention";
  v.models = kSource;
  v.summary =
      "NKI reference flash attention forward: SPMD over batch (kv heads as a loop), per q head "
      "of the GQA group and 128-row q tile an online softmax over L-key tiles (scores in 512-key "
      "PSUM tiles, causal/sliding-window masks with tiles outside them skipped, running max, "
      "rescaled output, log-sum-exp), out = o * exp(m - lse)";
  v.options = flash_fwd_options();
  v.notes = {
      "SPMD grid [bs, kv_heads] in the source: the IR grid is 1-D and its exprs divide by "
      "constants only, so program_id is the batch and the kv heads are an affine loop inside "
      "each program instance (iterations independent, as the instances are)",
      "q heads: heads = group * kv_heads with group (q_h_per_k_h) its own param; q head "
      "head_id * group + i_q_h reads kv head head_id, as in the source",
      "the source's `if` guards on loop indices are loop bounds: the q-tile loop starts at the "
      "first tile the causal mask reaches in large tile j and stops at the last tile the window "
      "reaches; the 512-key tiles are split into those that need the matmul (left and diagonal) "
      "and those right of the diagonal (qk_psum = 0, masked)",
      "seq_tile_size (L) is an option, 512 by default (the source's default is 2048) so that "
      "seqlen 512, 1024 and 1536 are legal; seqlen must be a multiple of L (asserted by the "
      "source); Sq = Sk (the source allows Sq != Sk with top-left aligned masks)",
      "softmax_scale (attention.py:390, folded into q at line 476) is an option, not a param: "
      "fp32(1/sqrt(128)) = 0.0883883461 (the source's default 1/sqrt(d) at d = 128, the head "
      "size of its tests; d_head is symbolic here, so the default is not recomputed per d) or "
      "0.125, a power of two. The spec uses the same fp32 value. With 1/sqrt(128), q_tile = "
      "load(q, kernel_dtype) * scale rounds twice; the contract's folded scale allows both "
      "roundings. 0.125 is offered with the masks only, the other options at their defaults",
      "sliding_window=on stands for the source's sliding_window = w > 0 with w the symbolic "
      "param `window` (>= 1); it forces the causal mask as the source does. The oracle's window "
      "has the same meaning (k_pos > q_pos - w, k_pos <= q_pos)",
      "no row is fully masked: the diagonal key is always visible under causal and sliding "
      "window masks. Within a large tile a row can be fully masked by the window (the guard "
      "tests the tile's first row); its running max is then nl.fp32.min, exp(0) = 1 terms enter "
      "o and l and are annihilated by alpha = exp(fp32.min - m) = 0 once a visible key comes",
      "dtype (fp32|bf16) is q.dtype: q, k, v and o in HBM. With mixed_precision=true bf16 "
      "inputs change only the HBM dtypes (kernel_dtype is bf16 anyway, out is rounded to bf16 "
      "before the store). dtype=bf16 with mixed_precision=false is excluded (resolve rejects it, "
      "option sets leave it out): the source's acc_type would then be bf16 (attention.py: acc_type "
      "= kernel_dtype), nl.fp32.min rounds to -inf in it, and a row the sliding window masks out "
      "of a whole large tile gives exp(-inf - (-inf)) = NaN; modelling it faithfully would make "
      "check fail on those rows and give an all-bf16 contract no registry-wide test could pass",
      "seq_tile_size offers 512 and 1024, not the source's default 2048: 2048 runs the same "
      "loops with four 512-key score tiles per large tile (1024 already splits them into left, "
      "diagonal and right) and needs seqlen >= 4096 two tiles deep, too slow for the "
      "registry-wide tests",
      "training=true stores l_buffer (the running log-sum-exp, acc_type fp32) to lse "
      "[bs, h, 128, S/128] once per q head (attention.py:510-511, lse[b, h, p, t] is row "
      "t*128 + p); check compares it with the oracle's lse (natural log of the softmax "
      "denominator of the scaled scores). lse_dtype is not an option (acc_type, the source's "
      "default). Dropout is not modelled (its hardware RNG stream is undocumented: dropout_p = 0, "
      "seed None, also in training mode); should_transpose_v is not modelled",
      "logit_bias=true: the input logit_bias [1, 1, S, S] in the HBM dtype (q.dtype here; the "
      "source takes any), loaded per (q tile i, large tile j) as [128, L] in kernel_dtype "
      "(attention.py:478-483, so rounded to bf16 under mixed precision) and added by nl.add in "
      "acc_type to the scores read from PSUM, before the masks and not scaled (the scale is "
      "folded into q). Causal: left 512-key tiles get the add only, the diagonal tile the add "
      "and the causal select, right tiles the select of zeros only (attention.py:145-172), three "
      "loop ranges of k_i here. The spec carries the bias; check draws it per case "
      "(oracle::generate_bias). Not with sliding_window=on (Variant::excluded): the source's "
      "bias path then applies the window on left tiles to `intermediate`, which only the "
      "diagonal tile writes (a stale tile, the bias-added scores lost), and never applies the "
      "window on the diagonal tile; modelled faithfully check would fail it",
      "PV accumulation group peeled (the first matmul overwrites pv_psum, as nl.zeros + += "
      "does); affine_select cannot read PSUM (GpSimd): the scores are copied to SBUF first and "
      "masked in place (a compiler copy in the source); the -1 * m bias is an explicit "
      "tensor_scalar; nc_transpose of a 128x128 tile runs on the Tensor engine",
      "seqlen <= 4096, group <= 8, kv_heads <= 2, bs <= 2: caps of the modelled domain, not of "
      "the source",
      "re-materialisation (attention.py:435-436, 442-511): ceil(n_tile_q / T) sequential passes "
      "of T = min(n_tile_q, attn_core_tile_size) q tiles, each with its own o/m accumulators "
      "and its own loads of every K and V tile; l_buffer (the lse) spans all passes. At the "
      "source's default T = 256 the modelled lengths (<= 32 q tiles) run one pass; the option "
      "value 2 runs ceil(n_tile_q / 2) passes (a shorter last pass when n_tile_q is odd), with "
      "the other options' dtypes and L at their defaults (flash_fwd_excluded)",
  };
  v.build = build_flash_fwd;
  v.excluded = flash_fwd_excluded;
  v.contract = flash_fwd_contract;
  v.spec = flash_fwd_spec;
  v.layout = Layout{{"q", {Axis::batch, Axis::head, Axis::dim, Axis::seq}},
                    {"k", {Axis::batch, Axis::head, Axis::dim, Axis::seq}},
                    {"v", {Axis::batch, Axis::head, Axis::seq, Axis::dim}},
                    {"o", {Axis::batch, Axis::head, Axis::seq, Axis::dim}},
                    TensorLayout{"lse", {Axis::batch, Axis::head, Axis::seq_part, Axis::seq_tile}},
                    TensorLayout{"logit_bias", {Axis::batch, Axis::head, Axis::seq, Axis::kv_seq}}};
  return v;
}

}  // namespace ncv::kernels
