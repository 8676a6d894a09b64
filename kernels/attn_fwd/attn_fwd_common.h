// What the FlashAttention performance tutorial's kernels share (nki-samples
// tutorials/attention_fwd_performance/attention_kernels.py, attn_fwd_v1 ... attn_fwd_v11): the
// versions, the build option (the input dtype), the attention problem they solve, their layout,
// and the precision contract each version's dtypes imply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// In source order; v8a sits between v8 and v9.
enum class AttnFwdVersion : uint8_t { v1, v2, v3, v4, v5, v6, v7, v8, v8a, v9, v10, v11 };

inline constexpr int64_t kAttnFwdDHead = 128;      // `assert d_head == PMAX`
inline constexpr int64_t kAttnFwdQTile = 128;      // PMAX / gemm_stationary_fmax: q rows per tile
inline constexpr int64_t kAttnFwdKvTile = 512;     // gemm_moving_fmax: keys per QK^T matmul
inline constexpr int64_t kAttnFwdMinSeqlen = 512;  // `assert seqlen_q >= 512` (v3 on)

std::string attn_fwd_name(AttnFwdVersion v);  // "attn_fwd_v8a"

// Whether version v comes at or after `from` in the chain.
inline bool at_least(AttnFwdVersion v, AttnFwdVersion from) {
  return static_cast<int>(v) >= static_cast<int>(from);
}

// dtype (fp32|bf16): the dtype of q, k and v (and of out up to v8; v8a on store bf16).
std::vector<OptionSpec> attn_fwd_options();

// One head, batch 1, seqlen_q = seqlen_kv = param "seqlen", d_head 128, no scale (1.0), no mask.
oracle::AttentionSpec attn_fwd_spec(AttnFwdVersion v, const Options& o, const ParamValues& params);

// q, k and v are [d_head, seqlen] (pre-transposed, v too), out [seqlen, d_head].
Layout attn_fwd_layout();

// The rounding stages of version v (all softmax arithmetic in fp32, Tensor-engine operands as
// the version feeds them):
//   q, k: the input dtype; v: the input dtype up to v6, bf16 from v7 (V^T copied to bf16);
//   QK^T, row max, exp and row sums in fp32;
//   P fed to PV: fp32 (v1: exp / sum), the input dtype (v2: exp * (1 / sum) rounded to q.dtype),
//   fp32 (v3 to v6), bf16 (v7 on: the exp activation writes bf16, its row sums are the fp32
//   accumulator's);
//   normalised before PV up to v4, deferred (PV * (1 / sum) in fp32) from v5;
//   out: the input dtype up to v8, bf16 from v8a.
oracle::PrecisionContract attn_fwd_contract(AttnFwdVersion v, const Options& o);

// The builders (attn_fwd_tiled.cpp: v1 to v8; attn_fwd_staged.cpp: v8a to v11).
Program build_attn_fwd_tiled(AttnFwdVersion v, const Options& o);
Program build_attn_fwd_staged(AttnFwdVersion v, const Options& o);

}  // namespace ncv::kernels
