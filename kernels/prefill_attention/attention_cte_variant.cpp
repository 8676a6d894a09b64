// The attention_cte registry entry: options, the combinations offered, spec, precision contract,
// layout and the notes that list every modelling choice and refusal. The builder is
// attention_cte.cpp.
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/families.h"
#include "kernels/prefill_attention/attention_cte_common.h"

namespace ncv::kernels {
namespace {

const char* const kSource =
    "aws-neuron/nki-library src/nkilib_src/nkilib/core/attention/attention_cte.py attention_cte "
    "@d2ad3a579498d1888aa8740af97fd325dd5f2740";

const std::string& option(const Options& o, const std::string& name) {
  const auto it = o.find(name);
  if (it == o.end()) throw std::invalid_argument("attention_cte: option '" + name + "' is not set");
  return it->second;
}

// The options that each double the programs: offered one at a time away from their defaults.
const std::array<std::pair<const char*, const char*>, 4> kSolo = {
    {{"sink", "off"}, {"dtype", "bf16"}, {"lnc", "1"}, {"scale", "1.0"}}};

}  // namespace

std::vector<OptionSpec> attention_cte_options() {
  return {
      {"causal_mask", {"true", "false"}, "true", "causal mask, top-left aligned (Sq = Sk here)"},
      {"sliding_window",
       {"off", "on"},
       "off",
       "sliding window of the symbolic param `window` > 128 keys (the static affine_select path; "
       "needs causal_mask=true, as the source asserts)"},
      {"sink", {"off", "on"}, "off", "sink [bs, 1] fp32: one logit per folded row"},
      {"dtype", {"bf16", "fp32"}, "bf16", "q, k, v and out in HBM (loaded as bf16 either way)"},
      {"lnc",
       {"1", "2"},
       "1",
       "SPMD programs: 2 splits the rows between two cores (bs_kv even: whole GQA groups)"},
      {"scale",
       {"1.0", "0.125"},
       "1.0",
       "the fp32 scale multiplied into the masked scores (the source's default 1.0; 0.125 not "
       "with sliding_window=on, which the source asserts scale == 1.0 for)"},
  };
}

CteConfig attention_cte_config(const Options& o, bool multi_section) {
  CteConfig c;
  c.multi_section = multi_section;
  c.sliding_window = option(o, "sliding_window") == "on";
  c.causal = option(o, "causal_mask") == "true";
  c.sink = option(o, "sink") == "on";
  c.lnc = option(o, "lnc") == "2" ? 2 : 1;
  c.scale = option(o, "scale") == "0.125" ? 0.125f : 1.0f;
  c.io_dtype = option_dtype(o);
  return c;
}

std::string attention_cte_excluded(const Options& o) {
  const auto get = [&](const char* name) -> std::string {
    const auto it = o.find(name);
    return it == o.end() ? std::string() : it->second;
  };
  if (get("sliding_window") == "on" && get("causal_mask") == "false") {
    return "sliding_window=on needs causal_mask=true: the source asserts 'SWA currently only "
           "supports causal attn' (attention_cte.py line 958)";
  }
  if (get("sliding_window") == "on" && get("scale") == "0.125") {
    return "sliding_window=on needs scale=1.0: the source asserts scale == 1.0 with SWA "
           "(attention_cte.py lines 946-951)";
  }
  std::string away;
  for (const auto& [name, def] : kSolo) {
    const std::string v = get(name);
    if (v.empty() || v == def) continue;
    if (!away.empty()) {
      return name + std::string("=") + v + " is offered with " + away.substr(0, away.find('=')) +
             " at its default only: sink, dtype, lnc and scale are modelled one at a time away "
             "from their defaults (each further combination would double the programs prove and "
             "the registry tests cover)";
    }
    away = std::string(name) + "=" + v;
  }
  if (!away.empty() && (get("causal_mask") == "false" || get("sliding_window") == "on")) {
    return away +
           " is offered with the default mask (causal_mask=true, sliding_window=off) "
           "only: each program costs `prove` about a minute, so the options that do not "
           "touch the masks are proved with one of them";
  }
  return "";
}

double attention_cte_sink_value(int64_t h) {
  // fp32 values, several above the row maxima of the check distributions' scores
  static constexpr std::array<double, 6> kSinks = {18.5, 1.25, 9.75, -3.0, 25.0, 4.5};
  return kSinks[static_cast<size_t>(h) % kSinks.size()];
}

namespace {

oracle::AttentionSpec cte_spec(const Options& o, const ParamValues& params) {
  const CteConfig c = attention_cte_config(o, false);  // the same problem in both variants
  oracle::AttentionSpec s;
  // Heads folded into the batch: one spec batch, heads = bs q rows, kv_heads = bs_kv; row h reads
  // kv row h / group = h // (bs / bs_kv) (_q_to_kv_batch_id, line 1551).
  s.batch = 1;
  s.kv_heads = param_value(params, "bs_kv");
  s.heads = s.kv_heads * param_value(params, "group");
  s.seqlen_q = s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = param_value(params, "d_head");
  s.scale = static_cast<double>(c.scale);
  if (c.sliding_window) {
    // The source masks kv - q <= -W (keys q-W+1 .. q, lines 2704-2713 and the torch reference):
    // the oracle's window of W.
    s.mask.kind = oracle::MaskKind::sliding_window;
    s.mask.window = param_value(params, "window");
  } else if (c.causal) {
    s.mask.kind = oracle::MaskKind::causal;  // top-left = bottom-right at Sq = Sk
  }
  if (c.sink) {
    for (int64_t h = 0; h < s.heads; ++h) s.sink.push_back(attention_cte_sink_value(h));
  }
  s.input_dtype = s.output_dtype = c.io_dtype;
  return s;
}

oracle::PrecisionContract cte_contract(const Options& o, bool multi_section) {
  const CteConfig c = attention_cte_config(o, multi_section);
  oracle::PrecisionContract ct;
  ct.name = "attention_cte";
  // Q, K, V are DMA-cast to bf16 on load whatever the input dtype (load_dtype bf16, lines
  // 672-694; an fp32 q through a tensor_copy, line 1677).
  ct.q_dtype = ct.k_dtype = ct.v_dtype = DType::bf16;
  ct.scale_folded_into_q = false;  // tensor_scalar_reduce multiplies the fp32 scores (line 2717)
  ct.qk_accum = DType::fp32;       // PSUM
  ct.score_dtype = ct.max_dtype = DType::fp32;  // mm1_masked, partial / running max
  ct.exp_dtype = DType::fp32;  // activation_reduce sums the fp32 exps before rounding (line 2225)
  ct.p_dtype = DType::bf16;    // exp_sb, exp_tp_sb
  ct.sum_dtype = DType::fp32;  // exp_partial_sum, running sum
  ct.sum_of_rounded_p = false;
  ct.pv_accum = DType::fp32;  // mm2_psum per large tile, mm2_sb across them
  ct.kv_tile = 128;
  if (c.multi_section) {
    // Sections of 8192 keys: each earlier section's partial output goes through out in HBM
    // (q.dtype) and is rescaled by exp(m_old - m_new) in fp32 (lines 2436-2520).
    ct.online_tile = kCteSectionLen;
    ct.online_partial_dtype = c.io_dtype;
  }
  ct.norm = oracle::Normalisation::deferred;
  ct.norm_dtype = DType::fp32;  // activation(copy, scale = 1 / sum) on fp32 tiles
  ct.out_dtype = c.io_dtype;    // the DMA store into out (q.dtype)
  return ct;
}

// The notes both variants share; each adds the ones about its section path.
std::vector<std::string> common_notes() {
  return {
      "heads folded into the batch as in the source (bs = B*H): the spec has batch 1, heads = "
      "bs = bs_kv * group q rows and kv_heads = bs_kv; q row b reads kv row b // group "
      "(_q_to_kv_batch_id, line 1551; AttentionSpec::kv_head_of). Params bs_kv (<= 2) and group "
      "(<= 2) instead of bs: the IR divides by constants only, so the rows are two nested loops "
      "(kv row, row in group) in the source's row order",
      "Sq = Sk (`seqlen`): the source's causal mask is top-left aligned (query i sees keys j <= "
      "i, torch reference), the oracle's bottom-right; they agree only at Sq = Sk",
      "seqlen is a multiple of 512 from 512 (the source allows partial 128-row groups and "
      "512-key tiles through min() bounds): full tiles keep every view's size exact, and "
      "num_grps >= 4 so the pipelined path runs (the one-group path, lines 700-707, needs "
      "Sq <= 128). d_head is any of 1..128 (asserted d <= 128, line 421)",
      "the trace-time `if`s on group and tile indices (_has_any_compute_causal / _swa, lines "
      "2884-2920; matmul_selection, exp_sel_mask, mm2_sel_mask) are loop bounds; whole-stage "
      "guards and the Q-load `grp_i % num_q_grps_per_load == 0` are loops of 0 or 1 trips. "
      "loop_reduce_sel (line 2858) holds exactly when some V tile of the large tile is computed, "
      "so the copy / add into mm2_sb sits inside that guard",
      "every loop runs in program order (sequential_range) but the K / V tile loads: the source "
      "is unrolled at trace time and its rotating buffers (num_free_tiles) are reused across "
      "iterations",
      "SBUF at the ModularAllocator's offsets (bump pointer from 0 per row, align_to 32 for k_sb, "
      "q_sb and exp_tp_sb, 4 for mm1_partial_max); exp_sb with num_free_tiles [1, nL] (the "
      "SWA-optimised [4, 2] goes with W <= 128, refused); PSUM at the source's banks: mm1 at "
      "k_tile % 4, mm2 at 4 + large_tile % 4",
      "P^T: the source transposes each [128 q, 512 keys] exp tile SBUF-to-SBUF with dma_transpose "
      "(lines 2258-2300, bit-exact); here four Tensor-engine transposes into an fp32 PSUM tile at "
      "the mm1 bank of that k tile and one copy into exp_tp_sb: bit-exact on NeuronCore-v3 "
      "(HwConfig::tensor_transpose_bit_exact) and for the finite non-negative bf16 values of P "
      "anywhere. The IR's on-chip DMA keeps the partition dim first, so a DMA with a permuted "
      "view cannot express it",
      "Q load (tp_q=True): the source issues one DMA transpose of min(Sq - g*128, 128*qpl) rows "
      "into q_sb[g // qpl] every qpl = 8 (bf16) or 4 (fp32) groups (lines 1647-1677, 2058-2088); "
      "here every group's 128 rows are one DMA transpose (a DmaCopy with a permuted HBM view) "
      "into the same q_sb columns: the same bytes at the same addresses, qpl times as many DMAs "
      "(timing differs), and a write pattern `prove`'s initialization class can follow (slot g "
      "% 2qpl of q_sb declared [d, 2qpl, 128]; the source's [d, 128 qpl] x 2). Groups without "
      "compute in a later causal section are not loaded (the source loads whole blocks whose "
      "last row reaches the section; the groups it loads beyond are never read). An fp32 q "
      "lands in the source's fp32 buffer and a tensor_copy rounds it to bf16. K (tp_k=False, "
      "[bs_kv, d, Sk]) and V ([bs_kv, Sk, d]) by plain DMAs casting to bf16",
      "sink (sink=on): the source's dma_copy of sink[b, 0] into partition 0 and "
      "stream_shuffle_broadcast to every partition (lines 632-635) are one DMA reading the HBM "
      "element with partition step 0 (the IR has no stream shuffle): the same values. The sink "
      "enters the max and the sum at section 0 only, unscaled (lines 2133, 2302). The spec's "
      "sinks are fixed per row (attention_cte_sink_value: 18.5, 1.25, 9.75, -3, 25, 4.5 cycled)",
      "sliding_window=on: W is the symbolic param `window` >= 129: the static path, a second "
      "affine_select on every computed tile (lines 2686-2713). W <= 128 "
      "(_SWA_ALLOCATION_STRATEGY_THRESHOLD) takes range_select and the SWA-optimised allocation "
      "(line 976): not modelled, the param's lower bound is 129. SWA implies causal and scale "
      "1.0 (asserted by the source; Variant::excluded)",
      "lnc=2: the grid of 2 splits the rows, core c taking rows [c*bs/2, (c+1)*bs/2) (lines "
      "468-493), here kv rows [c*bs_kv/2, (c+1)*bs_kv/2) with their groups: bs_kv even. An odd "
      "bs (the last row split on q groups with the 0.65 causal factor, lines 496-540) is not "
      "modelled",
      "scale: 1.0 (the source's default) or 0.125, multiplied into the masked fp32 scores by "
      "tensor_scalar_reduce; masked scores are fp32.min (not -inf) and stay finite after the "
      "scale",
      "sink, dtype=fp32, lnc=2 and scale=0.125 are offered one at a time away from their "
      "defaults and with the default mask (causal, no window) only (Variant::excluded): each "
      "program costs `prove` about a minute and the registry-wide solver tests prove every "
      "program, so the options that do not touch the masks are proved with one of them",
      "refused (not options): context parallelism (cp_offset, global_cp_deg: a runtime offset "
      "and range_select), sequence packing (bound_min / bound_max: range_select with per-query "
      "bounds), prefix caching (k_prior, v_prior, prior_used_len: a runtime length), "
      "cache_softmax (a second and third output), mm_out_dtype bf16 (gen4 only, line 425), "
      "softmax_dtype other than fp32, tp_q=False, tp_k=True and tp_out=True (other layouts)",
      "NeuronCore-v3 only in the source (dma_transpose, range_select): check with --gen trn2 or "
      "trn3",
  };
}

Variant make_variant(bool multi_section) {
  Variant v;
  v.name = multi_section ? "attention_cte_multi_section" : "attention_cte";
  v.family = "prefill_attention";
  v.models = kSource;
  v.summary =
      "nki-library's prefill attention: heads folded into the batch (GQA by kv row), per row K "
      "and V loaded whole per section (one, or 8192-key sections above 10240 keys merged through "
      "the output in HBM), software-pipelined 128-row q groups (QK in 512-key PSUM tiles with "
      "static causal / sliding-window masks, scaled fp32 scores, bf16 P with fp32 row sums, P^T, "
      "PV per 2048-key tile), optional sink logits, LNC2 batch split";
  v.options = attention_cte_options();
  // dma_transpose (every P transpose) and range_select exist on NeuronCore-v3+ only; the source's
  // tests run on trn2 and trn3 (research28 §0).
  v.generations = {"trn2", "trn3"};
  v.generations_reason =
      "the source transposes P with an SBUF-to-SBUF dma_transpose and masks with range_select, "
      "both NeuronCore-v3+ (its tests target trn2 and trn3)";
  v.notes = common_notes();
  if (multi_section) {
    v.notes.insert(
        v.notes.end(),
        {
            "seqlen 10752..16896 (multiples of 512 above _FLASH_ATTENTION_THRESHOLD = 10240, "
            "line 1041): ceil(Sk / 8192) sections of 8192 keys, the last shorter (line 1045), two "
            "or three here. The Python loop over sections is a peeled section 0, a loop over the "
            "middle sections (0 or 1 trips) and a peeled last section: the source's branches test "
            "section_idx == 0 and section_idx == num_sections - 1. Section-scope buffers sit at "
            "the same offsets in every section (allocator reset to sbuf_addr_outer, line 679), so "
            "they are declared once",
            "multi-section merge: section 0 stores its unnormalised fp32 PV into out (rounded to "
            "q.dtype by the DMA, line 2445); later sections load it back into the fp32 "
            "mm2_prev_output and compute scalar_tensor_tensor(prev * correction + mm2_sb) (line "
            "2484), one fp32 Vector instruction, here a tensor_scalar into an fp32 tile "
            "stt_product (placed after the source's allocation end) and a tensor_tensor add: the "
            "same values. With the causal mask a group's last section with compute (the one "
            "holding its diagonal) writes the normalised result and later sections skip it "
            "(is_last_section_with_compute, line 2385). "
            "The contract's online_partial_dtype = q.dtype also rounds the merged numerator before "
            "the normalisation, which the kernel keeps in fp32: the contract is looser there",
        });
    v.summary += " (this variant: the multi-section path, seqlen above 10240)";
    // `ncverify check attention_cte_multi_section --param bs_kv=1 --param group=1 --param
    // seqlen=10752 --param d_head=32 --cases 1 --gen trn2`: 31 s on the 2-core build machine
    // shared with two builds (the P^T transposes and PV of 10752^2 keys interpreted).
    v.check_case_seconds = 31;
  } else {
    v.notes.push_back(
        "seqlen <= 10240: one section (_FLASH_ATTENTION_THRESHOLD, line 1041). The buffers need "
        "195744 B per partition from 8704 keys at d = 128 (five 2048-key large tiles), which "
        "trn2 (212984) and trn3 (245752) fit and trn1 (180224) would not. Above 10240 keys see "
        "attention_cte_multi_section");
  }
  v.build = [multi_section](const Options& o) { return build_attention_cte(o, multi_section); };
  if (multi_section) {
    v.excluded = [](const Options& o) {
      if (std::string why = attention_cte_excluded(o); !why.empty()) return why;
      for (const auto& [name, def] : kSolo) {
        const auto it = o.find(name);
        if (it != o.end() && it->second != def) {
          return std::string(name) + "=" + it->second +
                 " is not offered by the multi-section variant: one check case costs ~30 s "
                 "and each program about a minute of `prove`, so it offers the causal and the "
                 "unmasked kernel (the other options take the same code in every section; "
                 "attention_cte covers them)";
        }
      }
      const auto sw = o.find("sliding_window");
      if (sw != o.end() && sw->second == "on") {
        return std::string(
            "sliding_window=on is not offered by the multi-section variant (see sink, dtype, "
            "lnc and scale): attention_cte covers the window at up to 8192 keys");
      }
      return std::string();
    };
  } else {
    v.excluded = attention_cte_excluded;
  }
  // fp16 q, k, v (the source's docstring: "Input dtypes can be bfloat16, float16 or float32"):
  // loaded as bf16 like fp32 inputs (the non-bf16 branches of _load_q_tile / _load_k_tile copy
  // q.dtype tiles into the bf16 load_dtype ones, lines 1653-1677; v by a casting dma_copy), the
  // output stored from the fp32 mm2_final (mm_out_dtype, line 1434) into q.dtype by the DMA (line
  // 2597), and above 10240 keys the partial output through out in q.dtype: the bf16 contract
  // with io_dtype fp16 (cte_contract). For an outside kernel only: the registered kernel is not
  // built in fp16.
  v.contract_only_values["dtype"] = {"fp16"};
  v.contract = [multi_section](const Options& o) { return cte_contract(o, multi_section); };
  v.spec = cte_spec;
  // q [bs, Sq, d], k [bs_kv, d, Sk], v [bs_kv, Sk, d], out [bs, Sq, d]; the rows are the spec's
  // heads (batch 1). sink [bs, 1]: one value per head, the trailing 1 is the spec's batch.
  v.layout = Layout{{"q", {Axis::head, Axis::seq, Axis::dim}},
                    {"k", {Axis::head, Axis::dim, Axis::seq}},
                    {"v", {Axis::head, Axis::seq, Axis::dim}},
                    {"out", {Axis::head, Axis::seq, Axis::dim}}};
  v.layout.sink = TensorLayout{"sink", {Axis::head, Axis::batch}};
  return v;
}

}  // namespace

Variant attention_cte_variant() {
  return make_variant(false);
}

Variant attention_cte_multi_section_variant() {
  return make_variant(true);
}

Variant attention_cte_multi_section_scaled_variant(int64_t section_len) {
  Variant v = make_variant(true);
  const CteSeqlenRange range = cte_multi_section_seqlens(section_len);
  // The interpreted P^T transposes and PV grow with the square of seqlen (the recorded cost is
  // at the source's smallest multi-section seqlen).
  const double ratio = static_cast<double>(range.max) / static_cast<double>(kCteMinMultiSeqlen);
  v.check_case_seconds *= ratio * ratio;
  v.build = [section_len](const Options& o) {
    return build_attention_cte_multi_section_scaled(o, section_len);
  };
  v.contract = [section_len](const Options& o) {
    oracle::PrecisionContract ct = cte_contract(o, true);
    ct.online_tile = section_len;
    return ct;
  };
  v.notes.push_back("scaled for tests: sections of " + std::to_string(section_len) +
                    " keys (seqlen " + std::to_string(range.min) + ".." +
                    std::to_string(range.max) + "), not the source's section length");
  return v;
}

}  // namespace ncv::kernels
