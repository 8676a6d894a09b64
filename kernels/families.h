// The variant factories of each kernel family; registry.cpp lists them in registry order.
#pragma once

#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// sd_attention (the tutorial, step 0), sd_attention_step1 .. sd_attention_step5 (the Autocomp
// rewrites, each naming its predecessor) and sd_attention_batched (the reference layout
// q [bs, d, S], SPMD over the batch).
std::vector<Variant> sd_attention_variants();
// sd_attention_allocated: explicit placements, rotating buffers, PSUM bank rotation.
Variant sd_attention_allocated_variant();
// naive_attention: eager attention, every stage materialised in HBM.
Variant naive_attention_variant();
// attn_fwd_v1 .. attn_fwd_v11 (with v8a): the FlashAttention performance tutorial's chain, each
// version naming the one before.
std::vector<Variant> attn_fwd_variants();
// flash_fwd: the reference flash-attention forward kernel (online softmax, GQA, masks).
Variant flash_fwd_variant();
// pipelined_attention: software-pipelined flash attention at seqlen 16384, two KV sections merged
// through HBM.
Variant pipelined_attention_variant();
// attention_tkg: nki-library's decode attention against a KV cache (LNC2 splits, masks from HBM
// or positions, sinks, fp8 KV, flash attention over s_prior tiles).
Variant attention_tkg_variant();
// attention_cte (family prefill_attention): nki-library's prefill attention, heads folded into
// the batch, software-pipelined q groups, KV sections merged through HBM above 10240 keys.
Variant attention_cte_variant();
// attention_cte_multi_section: the same kernel above 10240 keys (8192-key sections merged through
// HBM); heavy (one check case ~30 s).
Variant attention_cte_multi_section_variant();

}  // namespace ncv::kernels
