// The attention_tkg registry entry: options, the attention problem it solves (a kv_cache mask
// with per-case positions and sinks), its precision contract, its HBM layout with the packing of
// the inputs that are not the spec's q, k, v, and the notes listing every modelling choice. The
// builder is attention_tkg.cpp.
#include <random>
#include <stdexcept>
#include <string>

#include "kernels/decode_attention/attention_tkg_common.h"
#include "kernels/decode_attention/attention_tkg_draws.h"
#include "kernels/families.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {

namespace {

const char* const kSource =
    "aws-neuron/nki-library src/nkilib_src/nkilib/core/attention/attention_tkg.py attention_tkg "
    "(+ gen_mask_tkg.py, test_attention_tkg.py attn_tkg_wrapper) @d2ad3a579498";

const std::string& option(const Options& o, const std::string& name) {
  const auto it = o.find(name);
  if (it == o.end()) {
    throw std::invalid_argument("attention_tkg: option '" + name + "' is not set");
  }
  return it->second;
}

// A dtype option (kv_dtype, q_dtype, out_dtype): one of the values attention_tkg_options lists or
// contract_only_values adds.
DType dtype_option(const Options& o, const std::string& name) {
  const std::string& value = option(o, name);
  const auto t = parse_dtype(value);
  if (!t) throw std::invalid_argument("attention_tkg: option " + name + "=" + value);
  return *t;
}

// The active slots of k_prior / v_prior (the kernel overwrites them with k_active / v_active in
// SBUF and must never use the HBM values): large values a kernel reading them cannot hide.
constexpr float kStaleActiveKey = 96.0f;      // exact in bf16 and fp8_e4m3
constexpr float kStaleActiveValue = -224.0f;  // exact in bf16 and fp8_e4m3 (max 240)

HostTensor& packed_tensor(std::map<std::string, HostTensor>& packed, const std::string& name) {
  const auto it = packed.find(name);
  if (it == packed.end()) {
    throw std::invalid_argument("attention_tkg: '" + name + "' was not packed");
  }
  return it->second;
}

HostTensor new_input(const Program& p, const ParamValues& params, const std::string& name) {
  const auto id = p.find_tensor(name);
  if (!id || p.tensor(*id).kind != TensorKind::Input) {
    throw std::invalid_argument("kernel " + p.name + " has no input tensor '" + name + "'");
  }
  return HostTensor(p.tensor(*id).dtype, concrete_shape(p, *id, params));
}

void expect_elements(const HostTensor& h, int64_t n, const std::string& name) {
  if (h.num_elements() != n) {
    throw std::invalid_argument("attention_tkg: input '" + name + "' has " +
                                std::to_string(h.num_elements()) + " elements, the spec needs " +
                                std::to_string(n));
  }
}

// Layout::pack_extra: k_active [d, B, s_a], v_active [B, 1, s_a, d] (the spec's last s_a keys),
// the mask (HBM: [S, B, H, s_a] of the spec's visibility; pos_id: the active mask
// [s_a, B, H, s_a]), rope_pos_ids [1, B, s_a] = P_b + i, the sink [H, 1]; the active slots of
// k_prior / v_prior get adversarial values.
// (Everything it packs is in the spec: draw_tkg_case returns no CaseDraws.)
void pack_tkg(const Program& p, const ParamValues& params, const oracle::AttentionSpec& s,
              const oracle::AttentionInputs& in, const CaseDraws&,
              std::map<std::string, HostTensor>& packed) {
  if (s.mask.kind != oracle::MaskKind::kv_cache) {
    throw std::invalid_argument("attention_tkg: the spec's mask must be kv_cache");
  }
  const int64_t B = s.batch, H = s.heads, A = s.seqlen_q, S = s.seqlen_kv, d = s.d_head;
  const int64_t C = S - A;
  auto key = [&](int64_t b, int64_t j, int64_t c) {
    return static_cast<float>(in.k[size_t(s.kv_index(b, 0, j, c))]);
  };
  auto val = [&](int64_t b, int64_t j, int64_t c) {
    return static_cast<float>(in.v[size_t(s.kv_index(b, 0, j, c))]);
  };
  HostTensor ka = new_input(p, params, "k_active"), va = new_input(p, params, "v_active");
  expect_elements(ka, d * B * A, "k_active");
  expect_elements(va, B * A * d, "v_active");
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t a = 0; a < A; ++a) {
      for (int64_t c = 0; c < d; ++c) {
        ka.set((c * B + b) * A + a, key(b, C + a, c));
        va.set((b * A + a) * d + c, val(b, C + a, c));
      }
    }
  }
  packed["k_active"] = std::move(ka);
  packed["v_active"] = std::move(va);
  const bool block = s.block_kv.has_value();
  if (block) {
    // the paged cache (the layout leaves it to pack_extra) with its active rows negated, and
    // the block table
    tkg::pack_block_cache(p, params, s, in, packed);
  } else {
    // k_prior [B, 1, d, S] and v_prior [B, 1, S, d] (as packed by the layout): active slots
    HostTensor& kp = packed_tensor(packed, "k_prior");
    HostTensor& vp = packed_tensor(packed, "v_prior");
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = C; j < S; ++j) {
        for (int64_t c = 0; c < d; ++c) {
          kp.set((b * d + c) * S + j, kStaleActiveKey);
          vp.set((b * S + j) * d + c, kStaleActiveValue);
        }
      }
    }
  }
  const bool pos_id = p.find_tensor("rope_pos_ids").has_value();
  HostTensor mask = new_input(p, params, "mask");
  if (!pos_id) {
    expect_elements(mask, S * B * H * A, "mask");
    // Row r holds slot r, except under block KV: the kernel loads tile-local row t * 128 + p
    // into (p, t), which holds the block layout's slot (lines 1449-1455; the torch reference
    // writes the mask in that shuffled order).
    int64_t tile_slots = 0, block_len = 0;
    if (block) {
      tile_slots = 128 * concrete_shape(p, *p.find_tensor("mask_sb"), params).at(1);
      block_len = concrete_shape(p, *p.find_tensor("k_prior"), params).at(1);
    }
    for (int64_t r = 0; r < S; ++r) {
      const int64_t j = block ? tkg::block_mask_row_slot(r, tile_slots, block_len) : r;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < A; ++i)
            mask.set(((r * B + b) * H + h) * A + i, s.visible(b, i, j) ? 1.0f : 0.0f);
    }
  } else {
    expect_elements(mask, A * B * H * A, "mask");
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < A; ++i)
            mask.set(((a * B + b) * H + h) * A + i, s.visible(b, i, C + a) ? 1.0f : 0.0f);
    if (p.find_tensor("start_pos_ids")) {
      // SWA: the window ends and starts of every query (attention_tkg_draws.h swa_inputs_of)
      tkg::pack_window_positions(p, params, s, packed);
    } else {
      HostTensor pos = new_input(p, params, "rope_pos_ids");
      expect_elements(pos, B * A, "rope_pos_ids");
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t i = 0; i < A; ++i) {
          pos.set(b * A + i, static_cast<float>(s.mask.cache_end[size_t(b * A)] + i));
        }
      }
      packed["rope_pos_ids"] = std::move(pos);
    }
  }
  packed["mask"] = std::move(mask);
  if (p.find_tensor("sink")) {
    if (s.sink.size() != size_t(H)) {
      throw std::invalid_argument("attention_tkg: the kernel takes a sink; the spec has none");
    }
    HostTensor sk = new_input(p, params, "sink");
    for (int64_t h = 0; h < H; ++h) sk.set(h, static_cast<float>(s.sink[size_t(h)]));
    packed["sink"] = std::move(sk);
  }
}

// The source's test position (test_attention_tkg.py line 274): (3b + 3 (S // 4)) mod (S - s_a),
// the same for every active token.
int64_t test_position(int64_t b, int64_t S, int64_t A) {
  return (3 * b + S / 4 * 3) % (S - A);
}

void set_positions(oracle::AttentionSpec& s, const std::vector<int64_t>& pos) {
  const size_t n = size_t(s.batch * s.seqlen_q);
  s.mask.cache_begin.assign(n, 0);
  s.mask.cache_end.assign(n, 0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.seqlen_q; ++i) s.mask.cache_end[size_t(b * s.seqlen_q + i)] = pos[b];
  }
}

// Variant::draw_case: per batch a position P_b in [0, C] (C = S - s_a cached slots): the edge
// cases 0 and C, a short prefix (a long stale region), or uniform; per head a sink around the
// typical row maxima of the check distributions (-4 .. 24) or dominating them (60).
// Everything drawn goes into the spec (the mask's positions, the sinks, the block table): it
// returns no CaseDraws.
CaseDraws draw_tkg_case(oracle::AttentionSpec& s, const ParamValues&, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x7C4Bull);
  const int64_t C = s.seqlen_kv - s.seqlen_q;
  std::vector<int64_t> pos(size_t(s.batch));
  for (int64_t b = 0; b < s.batch; ++b) {
    // batch 0 cycles through the edge cases with the seed (seed 1, check's first case: 0);
    // the others draw
    const uint64_t kind = b == 0 ? (seed + 3) % 4 : rng() % 4;
    switch (kind) {
      case 0:
        pos[size_t(b)] = 0;
        break;
      case 1:
        pos[size_t(b)] = C;
        break;
      case 2:
        pos[size_t(b)] = int64_t(rng() % uint64_t(C / 4 + 1));
        break;
      default:
        pos[size_t(b)] = int64_t(rng() % uint64_t(C + 1));
    }
  }
  set_positions(s, pos);
  if (!s.sink.empty()) {
    std::uniform_real_distribution<double> U(-4.0, 24.0);
    for (double& x : s.sink) x = static_cast<double>(static_cast<float>(U(rng)));
    s.sink[size_t(rng() % s.sink.size())] = 60.0;
  }
  // SWA windows around these positions, then a block table for the mask (attention_tkg_draws.h)
  tkg::draw_window_and_table(s, seed);
  return {};
}

oracle::AttentionSpec tkg_spec(const Options& o, const ParamValues& params) {
  const TkgConfig c = attention_tkg_config(o);
  oracle::AttentionSpec s;
  s.batch = param_value(params, "bs");
  s.heads = param_value(params, "q_head");
  s.kv_heads = 1;  // one KV head per call, shared by every query head
  s.seqlen_q = param_value(params, "s_active");
  s.seqlen_kv = param_value(params, "seqlen");
  s.d_head = param_value(params, "d_head");
  s.scale = 1.0;  // no softmax scale without fuse_rope (line 1567)
  s.mask.kind = oracle::MaskKind::kv_cache;
  std::vector<int64_t> pos(size_t(s.batch));
  for (int64_t b = 0; b < s.batch; ++b) {
    pos[size_t(b)] = test_position(b, s.seqlen_kv, s.seqlen_q);
  }
  set_positions(s, pos);
  if (c.sink) {
    s.sink.assign(size_t(s.heads), 0.0);
    for (int64_t h = 0; h < s.heads; ++h) s.sink[size_t(h)] = 0.25 * double(h % 8);
  }
  if (c.swa) {
    // build_swa_positions (test utils 127-156) at the test positions with the tests' first
    // window, 128; mask.window records it (check draws another per case).
    tkg::set_swa_mask(s, pos, 128, c.block());
    s.mask.window = 128;
  }
  if (c.block()) tkg::set_block_kv(s, c.block_len, 0);
  // the narrower of q's and the KV dtype (bf16 q with fp8 KV holds fp8 values)
  s.input_dtype = oracle::represents(c.io_dtype, c.kv_dtype) ? c.kv_dtype : c.io_dtype;
  s.output_dtype = c.out_dtype;
  return s;
}

// The source's dtype flow (attention_tkg.py at d2ad3a5), for every q / KV / output dtype:
// io_type = q.dtype and inter_type = fp32 (lines 822-823); q enters MM1 in io_type (q_sb, or the
// caller's SBUF q with qk_in_sb), K and V in the KV dtype (k_sb / v_sb; fp8 K is loaded as bf16,
// PE-transposed and copied back to fp8: exact, lines 1757-1781); both matmuls accumulate in fp32
// PSUM; the scores, the max and the sums are inter_type; exp writes qk_io_type (io_type, line
// 1042) directly (activation, line 2359), and the row sum (ones-vector matmul, lines 2563-2601,
// one_vec in io_type: 1 is exact) and PV (lines 2937-2957) both take that buffer; PV is scaled by
// the fp32 reciprocal (line 2973 / FA 1348) into the fp32 exp_v / fa_running_output, and the DMA
// or tensor_copy into the caller's `out` rounds to its dtype (lines 3017-3050). So with fp8 q
// (nki-library's fp8_kv test casts q to fp8 too, test_attention_tkg.py line 286) the exp, the
// row sum's terms and P are fp8_e4m3, and with fp32 q every stage is fp32.
oracle::PrecisionContract tkg_contract(const Options& o) {
  const TkgConfig c = attention_tkg_config(o);
  oracle::PrecisionContract ct;
  ct.name = "attention_tkg";
  ct.q_dtype = c.io_dtype;                      // q_input in q.dtype (io_type)
  ct.k_dtype = ct.v_dtype = c.kv_dtype;         // k_sb, v_sb in the KV dtype
  ct.scale_folded_into_q = false;               // scale 1: nothing to fold
  ct.qk_accum = DType::fp32;                    // PSUM
  ct.score_dtype = ct.max_dtype = DType::fp32;  // qk, qk_max (inter_type fp32)
  ct.exp_dtype = c.io_dtype;  // activation(exp) writes qk_io_type (io) directly (line 2359)
  ct.p_dtype = c.io_dtype;    // PV's moving operand is qk_io_type
  ct.sum_dtype = DType::fp32;
  ct.sum_of_rounded_p = true;  // the row sum multiplies qk_io_type by one_vec (lines 2563-2601)
  // exp(sink - max) goes into the fp32 exp_sum column (activation, lines 2462-2471; FA: 1214-1222)
  ct.sink_term_fp32 = true;
  ct.pv_accum = DType::fp32;
  ct.kv_tile = 128;
  ct.norm = oracle::Normalisation::deferred;  // PV, then x 1/sum in fp32 (line 2973 / 1348)
  ct.norm_dtype = DType::fp32;
  ct.online_tile = c.fa ? kTkgFaTile : 0;  // running max / sum / output per 8192-slot tile
  ct.online_partial_dtype = DType::fp32;   // fa_running_output fp32
  ct.out_dtype = c.out_dtype;              // DMA / tensor_copy into out
  return ct;
}

}  // namespace

std::vector<OptionSpec> attention_tkg_options() {
  return {
      {"lnc",
       {"1", "2-sprior", "2-batch"},
       "1",
       "logical NeuronCores: 1, or a grid of 2 splitting s_prior (the source's choice when "
       "bs * q_head * s_active <= 128 and s_prior >= 256) or the batch (its choice when bs is "
       "even and bs * q_head * s_active > 128)"},
      {"strided_mm1",
       {"true", "false"},
       "true",
       "AttnTKGConfig.strided_mm1: K tile t holds slots p * n + t (V read contiguously), else "
       "slots t * 128 + p"},
      {"mask",
       {"hbm", "pos_id"},
       "hbm",
       "hbm: the mask [S, B, H, s_a] uint8 is an input; pos_id (use_pos_id): gen_mask_tkg builds "
       "the prior mask from rope_pos_ids [B, s_a] in-kernel, the active mask [s_a, B, H, s_a] "
       "comes from HBM"},
      {"sink", {"off", "on"}, "off", "attention sink [H, 1] fp32: one extra logit per head"},
      {"kv_dtype",
       {"bf16", "fp8_e4m3"},
       "bf16",
       "k_prior, v_prior, k_active, v_active dtype (the registered kernel: q and out stay bf16; "
       "fp32 is a contract-only value)"},
      {"q_dtype",
       {"bf16"},
       "bf16",
       "q's dtype, the source's io_type (atp.io_type = q.dtype): q in SBUF and the exp output "
       "that the row sum and PV take (qk_io_type); the registered kernel: bf16 (fp32 and "
       "fp8_e4m3 are contract-only values)"},
      {"out_dtype",
       {"bf16"},
       "bf16",
       "the output tensor's dtype (the caller's: the test's dtype); the registered kernel: bf16 "
       "(fp32 is a contract-only value)"},
      {"s_prior_tiling",
       {"off", "on"},
       "off",
       "off: one tile of the whole per-core s_prior (enable_fa_s_prior_tiling=False, or per-core "
       "s_prior <= 8192); on: flash attention over two 8192-slot tiles per core (per-core "
       "s_prior = 16384)"},
      {"block_len",
       {"0", "16", "32"},
       "0",
       "AttnTKGConfig.block_len: 0 = flat cache; else a paged cache k_prior / v_prior "
       "[num_blocks, block_len, d] read through active_blocks_table [B, S / block_len] uint32 "
       "(requires strided_mm1=false)"},
      {"block_resize",
       {"1", "4"},
       "1",
       "block KV: the factor rf by which the source cuts every block when a core's s_prior / 128 "
       "is not a multiple of block_len (resize_cache_block_len_for_attention_tkg_kernel: "
       "block_len / rf = gcd(block_len, s_prior per core / 128)); the domain holds the seqlens "
       "that give this rf"},
      {"swa",
       {"off", "on"},
       "off",
       "sliding window: start_pos_ids [B, s_a] and per-query positions; gen_mask_tkg keeps slots "
       "[start, pos), wrapping around a flat (circular) cache (requires mask=pos_id)"},
      {"out_in_sb",
       {"false", "true"},
       "false",
       "AttnTKGConfig.out_in_sb: false = the kernel stores out [B, H, d, s_a] to HBM; true = it "
       "leaves out [d, B*H*s_a] in SBUF (under LNC2 on both cores) and the test wrapper DMAs it "
       "to an HBM tensor of that shape"},
  };
}

TkgConfig attention_tkg_config(const Options& o) {
  TkgConfig c;
  const std::string& lnc = option(o, "lnc");
  c.lnc = lnc == "1" ? TkgLnc::one : lnc == "2-sprior" ? TkgLnc::sprior : TkgLnc::batch;
  c.strided_mm1 = option(o, "strided_mm1") == "true";
  c.mask = option(o, "mask") == "pos_id" ? TkgMask::pos_id : TkgMask::hbm;
  c.sink = option(o, "sink") == "on";
  c.kv_dtype = dtype_option(o, "kv_dtype");
  c.io_dtype = dtype_option(o, "q_dtype");
  c.out_dtype = dtype_option(o, "out_dtype");
  c.fa = option(o, "s_prior_tiling") == "on";
  c.block_len = std::stoll(option(o, "block_len"));
  c.block_resize = std::stoll(option(o, "block_resize"));
  c.swa = option(o, "swa") == "on";
  c.out_in_sb = option(o, "out_in_sb") == "true";
  return c;
}

std::string attention_tkg_excluded(const Options& o) {
  // Each option value doubles the programs prove and the registry-wide tests cover, so values
  // that exercise one mechanism are offered with the options they do not interact with fixed:
  // the LNC splits with the default strided layout; fp8 KV without LNC2, the generated mask or
  // FA tiles; FA tiles with bf16 KV, the strided layout and without the batch split.
  auto is = [&](const char* name, const char* value) {
    const auto it = o.find(name);
    return it != o.end() && it->second == value;
  };
  const TkgConfig c = attention_tkg_config(o);
  // What the source refuses or decides itself.
  if (c.block() && c.strided_mm1) {
    return "block KV requires strided_mm1=false (attention_tkg.py lines 867-972; the source's "
           "test filter marks it invalid)";
  }
  if (!c.block() && c.block_resize != 1) return "block_resize applies to block KV only";
  if (c.block_resize > 1 && c.fa) {
    return "with s_prior tiling the source's resize keeps the block length (gcd with the 64-tile "
           "FA tile, attention_tkg_utils.py 291-305): block_resize is 1";
  }
  if (c.swa && c.mask != TkgMask::pos_id) {
    return "a sliding window needs the in-kernel mask: swa=on requires mask=pos_id "
           "(test_attention_tkg.py line 832: SWA requires use_pos_id=True)";
  }
  // The test budget (see above).
  if (!is("lnc", "1") && is("strided_mm1", "false") && !c.block()) {
    return "lnc=" + o.at("lnc") +
           " is modelled with strided_mm1=true only for a flat cache (the split does not touch "
           "the slot layout; each further combination doubles the programs prove and the "
           "registry tests cover)";
  }
  if (is("kv_dtype", "fp8_e4m3") &&
      (!is("lnc", "1") || is("mask", "pos_id") || is("s_prior_tiling", "on"))) {
    return "kv_dtype=fp8_e4m3 is modelled with lnc=1, mask=hbm and s_prior_tiling=off only (the "
           "KV dtype touches the loads and matmuls, not the splits, masks or FA statistics)";
  }
  if (is("s_prior_tiling", "on") && is("lnc", "2-batch")) {
    return "s_prior_tiling=on is modelled with lnc=1 and lnc=2-sprior only (the batch split "
           "does not touch the FA statistics; the s_prior split defers their exchange)";
  }
  if ((c.block() || c.swa) && c.sink) {
    return "block KV and sliding windows are modelled with sink=off (the sink enters the "
           "softmax statistics, which neither touches)";
  }
  if (c.block_len == 32 && (c.block_resize != 1 || c.lnc != TkgLnc::one || c.mask != TkgMask::hbm ||
                            c.fa || c.kv_dtype != DType::bf16 || c.swa)) {
    return "block_len=32 (the same code as 16 with another constant) is modelled with the other "
           "options at their defaults";
  }
  if (c.out_in_sb && (!c.strided_mm1 || c.mask != TkgMask::hbm || c.sink ||
                      c.kv_dtype != DType::bf16 || c.fa || c.block() || c.swa)) {
    return "out_in_sb=true is modelled with lnc=1, 2-sprior and 2-batch and the other options at "
           "their defaults (it changes the store only: the copy into SBUF and the LNC2 exchange "
           "of _gather_and_store_output, lines 3012-3033)";
  }
  return "";
}

Variant attention_tkg_variant() {
  Variant v;
  v.name = "attention_tkg";
  v.family = "decode_attention";
  v.models = kSource;
  v.summary =
      "decode (token generation) attention against a KV cache: one KV head shared by every "
      "query head, key slots on partitions and (batch, head, query) columns on the free axis; "
      "per s_prior tile a mask (HBM or generated from positions), QK copied from PSUM under the "
      "mask, a cascaded max (tile reduce, PE transpose, LNC exchange, sink), exp rounded to bf16, "
      "a ones-vector row sum of the rounded exp, PV, normalised output; LNC2 splits s_prior or "
      "the batch over two cores";
  v.options = attention_tkg_options();
  v.generations = {"trn2", "trn3"};
  v.generations_reason =
      "the source uses dma_transpose and sendrecv (NeuronCore-v3+), and its PE transposes of "
      "-inf row maxima are exact only in v3's transpose mode";
  // nki-library checks this kernel for determinism over 10 runs (TKG_INFERENCE_ARGS,
  // test/utils/common_dataclasses.py line 398); here each run is another schedule of the cores.
  v.determinism_runs = 10;
  v.notes = {
      "block KV (block_len > 0, attention_tkg_block_kv.h): k_prior / v_prior are the physical "
      "cache [num_blocks, block_len, d] with num_blocks = 32768 / block_len whatever the shape "
      "(the IR's indirect offsets have a build-time declared range, which the solver proves "
      "inside the cache: a cache sized by the params could not be), declared as "
      "[num_blocks * rf, block_len / rf, d] (the same bytes); the domain requires bs * seqlen <= "
      "32768 (a physical block for every batch's block); active_blocks_table [B, S / block_len] "
      "uint32 with entries in [0, num_blocks)",
      "block KV, K: the source's PE transpose path (indirect DMA of a fold's 128 blocks, a "
      "Tensor-engine transpose per block row, copies alternating Vector/Scalar per group of 8, "
      "lines 1666-1729) for every d and dtype; the source takes an indirect dma_transpose instead "
      "when d = 128, the K dtype has 2 bytes and the kernel's block length is >= 8 (lines 821, "
      "943, 1639-1664), which moves the same values (the IR's indirect offsets select view rows, "
      "not the block axis a DMA transpose puts last); the [128, bl * d] load tile is one rotating "
      "buffer per fold (the source keeps one per fold of the batch: a little less SBUF here)",
      "block KV, table: with rf = 1 one DMA per fold of the table's columns (the source: one DMA "
      "of a [128, folds, bs] view; an IR view cannot split one tensor dim in two); with rf > 1 "
      "the source's path: the rows on partitions, e * rf + r in fp32 (its scalar_tensor_tensor "
      "as a tensor_scalar and a tensor_tensor, exact below 2^24), a PE transpose per fold into "
      "uint32 columns; block_resize is the source's rf = block_len / gcd(block_len, s_prior per "
      "core / 128) and the domain holds exactly the seqlens that give it (with s_prior_tiling rf "
      "is 1); rf = 2 (the same code path as 4) is not offered, to bound the per-combination "
      "tests; rf = 4 also covers active tokens spanning several sub-blocks. Also for that "
      "budget, block KV and sliding windows are offered with sink=off, block_len=32 with the "
      "other options at their defaults, and block KV with lnc=2-sprior / 2-batch (the flat "
      "non-strided layout is lnc=1 only)",
      "block KV, check: the table is drawn per case (attention_tkg_draws.h draw_block_table): "
      "every block holding a visible or active slot of its batch is its own physical block "
      "(shuffled), every other entry points at a block another batch uses (the source's test "
      "sets them to 0, a block of batch 0), the other physical blocks stay unused; the active "
      "rows of the physical cache hold the negated keys and values (the kernel must take them "
      "from k_active / v_active); the HBM mask's rows follow the block layout (row t * 128 + p "
      "of an s_prior tile is slot fold * 128 * bl + p * bl + j, t = fold * bl + j, lines "
      "1449-1455)",
      "sliding window (swa=on, requires mask=pos_id): start_pos_ids [B, s_a]; the spec's "
      "kv_cache range of each query is its window [start, pos) over the cached slots, wrapping "
      "around a flat (circular) cache (start = (pos - W + 1) mod S) and linear for block caches "
      "(max(0, pos - W + 1)), as build_swa_positions (test utils lines 127-156); check draws W "
      "per case (128, 256, 512, 1-16, beyond S, uniform in [1, S]) around the drawn base "
      "positions (pos = P_b + i); the kernel's positions are the ranges clamped into "
      "[0, S - s_a] (the same cached slots: the source's positions may pass the cached length, "
      "which only touches the active slots the active mask overwrites); the per-head copies of "
      "each query's mask run on the Scalar engine (the source alternates Scalar and Vector by "
      "the parity of b + h + i, trace-time loops)",
      "out_in_sb=true (AttnTKGConfig.out_in_sb): the wrapper allocates out [d, B*H*s_a] (io) in "
      "SBUF before the q / k_active copies (test_attention_tkg.py lines 130-135, shape lines "
      "266-270); the kernel rounds its result into its batches' columns there with a "
      "tensor_copy (attention_tkg.py lines 3017-3022); with lnc=2-sprior both cores add the "
      "exchanged partial output (lines 3012-3014: not only NC0), with lnc=2-batch one sendrecv "
      "swaps the batch halves (lines 3023-3033), so every core holds the whole output; the "
      "wrapper then DMAs it to HBM as it is (lines 204-208; the source names it attn_out_hbm, "
      "here 'out'), each core the same bytes; the layout's out follows the option "
      "(Variant::adapt_layout: axes d, batch, head, query). Offered with the other options at "
      "their defaults (every lnc), to bound the per-combination tests",
      "models the test wrapper attn_tkg_wrapper (test_attention_tkg.py lines 93-220) with "
      "qk_in_sb=True (required unless fuse_rope, attention_tkg.py lines 325-328): q [d, B*H*s_a] "
      "and k_active [d, B*s_a] are HBM inputs DMA-loaded into SBUF; declared with the flat "
      "column split into (batch, head, query) factors (the same bytes)",
      "the param seqlen is the source's curr_sprior S: the cache slots this call reads, the last "
      "s_active of them the active tokens (named seqlen like every registered kernel's key "
      "length, so the sweeps, the property suite and frontier vary it); full_sprior = S (the "
      "cache's HBM length equals the slots read); k_prior [B, 1, d, S] (tp_k_prior=False, the "
      "default) and v_prior [B, 1, S, d] are declared with the slot axis split into (S/128, 128) "
      "(the same bytes)",
      "the spec: scale 1 (no softmax scale without fuse_rope, line 1567), kv_heads 1, mask "
      "kv_cache with cache_begin 0 and cache_end P_b (gen_mask_tkg's standard rule, "
      "gen_mask_tkg.py lines 405-413: prior slot j visible iff j < pos[b, 0]) and the last s_a "
      "slots the causal active tokens; check draws P_b per batch and case (Variant::draw_case: "
      "0, S - s_a, a short prefix, uniform) and the sinks per head",
      "packing (Layout::pack_extra): k_active / v_active hold the spec's last s_a keys; the "
      "active slots of k_prior / v_prior hold adversarial values (96, -224) the kernel must "
      "never use; the HBM mask is the spec's visibility; rope_pos_ids[b, i] = P_b + i (the "
      "positions of the active tokens: only pos[b, 0] drives the mask); the stale slots "
      "[P_b, S - s_a) hold whatever the distribution drew (stale_cache makes them dominate)",
      "_get_lnc_sharding (lines 3061-3085) is a disjunction: lnc=2-batch requires bs even and "
      "129 <= bs * q_head * s_active <= 256 (the first cause; the cause s_prior < 256 is not "
      "offered); lnc=2-sprior and lnc=1 require bs * q_head * s_active <= 128; the split where "
      "neither applies (odd bs, S < 256: both cores compute everything) is not offered",
      "one bsq tile and one batch tile: bs_per_nc * q_head * s_active <= 128 (n_bsq_tiles = 1) "
      "and 8 * bs_per_nc * q_head * s_active * tile_s_prior <= 16 MiB (uses_batch_tiling); "
      "batch tiling is not modelled",
      "sendrecv (lines 2126, 2438, 3004, 1111, 1192) is a DMA into the peer core's buffer "
      "(on_core(dst, 1 - program_id)), a rendezvous in the interpreter (a core waits at a "
      "core-to-core transfer until its peer reaches the same statement, as sendrecv blocks). "
      "Statements the source guards by sprior_prg_id (NC0 adds and stores, NC1 inserts the "
      "active tokens) are loops with trip count 1 - program_id or program_id",
      "batch interleave degree 1 (the source raises it to min(tile_bs, 8) when SBUF has room, "
      "_get_safe_batch_interleave_degree, line 3576): the per-batch MM1 and PV loops are "
      "sequential with one k_sb / v_sb buffer and PSUM bank 0 for exp_v_psum",
      "MM1 PSUM groups of 4 key tiles [128, 4, H*s_a] fp32 at bank g % 8 (the source's groups "
      "hold min(32, 512 // (H*s_a)) tiles, line 1901; the IR divides by constants only): the "
      "same scores, more predicated copies",
      "strided_mm1=true requires 128 * s_active <= per-core s_prior (the active keys all in the "
      "last partition, so one DMA or copy per tensor; the source splits them over two "
      "partitions otherwise)",
      "the Vector 32x32 transposes + nc_stream_shuffle broadcast of the reciprocal and of the FA "
      "correction factor (_s_active_bqh_tile_transpose_broadcast, lines 2633-2647) are modelled "
      "as tp_broadcast's single PE transpose of the column repeated along the free axis "
      "(bit-exact on NeuronCore-v3+): the same values; likewise the broadcast of the position "
      "ids is an HBM-side step-0 DMA instead of nc_stream_shuffle",
      "gen_mask_tkg strided iota: the IR's channel multiplier is a build-time constant and n is a "
      "param, so base + p * n + t is computed exactly in fp32 from iota(base + t) + iota(p) * "
      "iota-column(n) (values < 2^24)",
      "exp in one tensor_tensor + one activation over the tile (the NeuronCore-v3 form); the "
      "source loops over the s_prior tiles on gen4 (lines 2331-2346): the same values",
      "s_prior_tiling=on models exactly two 8192-slot FA tiles per core (per-core s_prior = "
      "16384): with three or more, a row whose first two tiles are fully masked (no sink, e.g. "
      "P_b = 0) gets the correction exp(-inf - (-inf)) = NaN (_fa_update_correction_factor, "
      "lines 1074-1085; the running max is not clamped), which the source's tests never reach "
      "(P_b = 3S/4)",
      "the 16-partition padding of exchanged buffers (use_gpsimd_sb2sb) and the GpSimd DMA "
      "engine of sendrecv are not modelled (allocation and timing only)",
      "refused (not options): fuse_rope (sin arguments beyond +-pi after the fp32 range "
      "reduction, and an uninitialised read in _modulo, lines 3207-3229), k_out / k_out_in_sb "
      "(only with fuse_rope), fp8 e5m2 (the source refuses it), DBG tensors, trn1 (dma_transpose "
      "and sendrecv need "
      "NeuronCore-v3: run with --gen trn2 or trn3)",
      "inputs: q bf16; kv_dtype=fp8_e4m3 makes every K/V tensor fp8_e4m3 (the spec's input dtype "
      "is then fp8_e4m3 and q holds fp8-representable values packed exactly as bf16; the source's "
      "test casts q to fp8 too, line 286); K is read by a flat DMA (tp_k_prior=False: no PE "
      "transpose), the active keys are copied fp8 -> fp8 (exact)",
  };
  // nki-library's own fp32 and fp8_kv test rows (test_attention_tkg.py lines 279-292: q, K and V
  // all in the test's dtype, or all cast to float8_e4m3 with the output in the test's bf16) take
  // dtypes the registered kernel is not built with; its contract states them for an outside
  // kernel (`check --layout ... --contract attention_tkg --contract-option q_dtype=fp8_e4m3
  // kv_dtype=fp8_e4m3 out_dtype=bf16`, or fp32 for all three): tkg_contract's dtype flow.
  v.contract_only_values["kv_dtype"] = {"fp32"};
  v.contract_only_values["q_dtype"] = {"fp32", "fp8_e4m3"};
  v.contract_only_values["out_dtype"] = {"fp32"};
  v.build = build_attention_tkg;
  v.excluded = attention_tkg_excluded;
  v.contract = tkg_contract;
  v.spec = tkg_spec;
  v.draw_case = draw_tkg_case;
  v.layout =
      Layout{{"q", {Axis::dim, Axis::batch, Axis::head, Axis::seq}},
             {"k_prior", {Axis::batch, Axis::head, Axis::dim, Axis::seq_tile, Axis::seq_part}},
             {"v_prior", {Axis::batch, Axis::head, Axis::seq_tile, Axis::seq_part, Axis::dim}},
             {"out", {Axis::batch, Axis::head, Axis::dim, Axis::seq}}};
  v.layout.pack_extra = pack_tkg;
  // out_in_sb: the wrapper's HBM copy of the SBUF output is [d, B*H*s_a] (test line 266-270)
  v.adapt_layout = [](const Options& o, Layout& l) {
    if (attention_tkg_config(o).out_in_sb) {
      l.out = {"out", {Axis::dim, Axis::batch, Axis::head, Axis::seq}};
    }
  };
  return v;
}

}  // namespace ncv::kernels
