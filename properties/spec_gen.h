// Attention specs for the oracle-level properties: shapes with GQA ratios and seqlen_q !=
// seqlen_kv, every mask kind (none, causal, sliding window, explicit random with a fully masked
// row, position ids) and block-KV tables. The registered kernels support only no mask or causal (an
// option), so the kernel properties draw those through kernel_case.h; these generators serve
// the properties that hold for every spec (tests/spec_metamorphic_prop.cpp). Every choice
// shrinks toward the simplest spec (one batch, one head, no mask, no table).
#pragma once

#include <rapidcheck.h>

#include <optional>

#include "oracle/attention_spec.h"

namespace ncv::props {

// A mask for spec's shape (batch, seqlen_q, seqlen_kv must be set).
rc::Gen<oracle::Mask> gen_mask(const oracle::AttentionSpec& shape);
// A block table for spec's shape: a block size dividing seqlen_kv, up to two spare physical
// blocks, the logical blocks in a random physical order.
rc::Gen<oracle::BlockKv> gen_block_kv(const oracle::AttentionSpec& shape);
// A whole spec: batch 1-2, kv_heads 1-2 with GQA group 1-3, seqlen_q and seqlen_kv 1-40
// (independent), d_head 1-16, a mask, sometimes a block table, sometimes a logits bias
// (oracle::generate_bias), fp32/bf16/fp16 inputs.
rc::Gen<oracle::AttentionSpec> gen_attention_spec();

}  // namespace ncv::props
