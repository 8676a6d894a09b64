// What the flash_fwd kernel's builder, spec and contract share: its build-time options, the
// configuration they imply (dtypes, masks, tile size, softmax scale) and the domain caps.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/variant.h"

namespace ncv::kernels {

// Domain caps: small enough that a trace-only run of every option set at the maximum stays
// fast in the registry tests; the source has no caps beyond d <= 128.
inline constexpr int64_t kFlashMaxBatch = 2;
inline constexpr int64_t kFlashMaxKvHeads = 2;
inline constexpr int64_t kFlashMaxGroup = 8;
inline constexpr int64_t kFlashMaxSeqlen = 4096;
// fp32(1/sqrt(128)): attention.py:390 `softmax_scale or 1.0 / (d ** 0.5)` at d = 128.
inline constexpr float kFlashDefaultScale = 0.08838834764831845f;
// nl.fp32.min, the source's mask fill and the initial running max / LSE.
inline constexpr float kFp32Min = std::numeric_limits<float>::lowest();

struct FlashFwdConfig {
  bool causal = false;          // use_causal_mask, forced on by a sliding window (as the source)
  bool sliding_window = false;  // the window is the symbolic param "window"
  int64_t seq_tile_size = 512;  // L, keys per large tile
  // FlashConfig.attn_core_tile_size: q tiles per re-materialisation pass (o and m accumulators
  // for that many tiles in SBUF; K and V re-loaded once per pass).
  int64_t attn_core_tile_size = 256;
  bool training = false;    // FlashConfig.training: also store the LSE (l_buffer) to `lse`
  bool logit_bias = false;  // logit_bias [1, 1, S, S] is given: added to the scores
  float softmax_scale = kFlashDefaultScale;
  DType io_dtype = DType::fp32;      // q, k, v and o in HBM
  DType kernel_dtype = DType::bf16;  // bf16 with mixed precision, else io_dtype
  DType acc_dtype = DType::fp32;     // running max, o, LSE, scores
};

std::vector<OptionSpec> flash_fwd_options();
FlashFwdConfig flash_fwd_config(const Options& o);
Program build_flash_fwd(const Options& o);
// Why a combination is not offered ("" if it is): dtype=bf16 without mixed precision, and
// logit_bias with a sliding window.
std::string flash_fwd_excluded(const Options& o);
oracle::AttentionSpec flash_fwd_spec(const Options& o, const ParamValues& params);
oracle::PrecisionContract flash_fwd_contract(const Options& o);

}  // namespace ncv::kernels
