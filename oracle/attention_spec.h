// The attention problem, independent of any kernel layout (oracle/README.md): shapes, GQA,
// scale, mask, sinks, RoPE, paged KV, dtypes. Generators, kernels' layout adapters and the
// oracles all speak it.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/numerics/dtype.h"

namespace ncv::oracle {

enum class MaskKind : uint8_t {
  none,
  causal,
  sliding_window,
  explicit_mask,
  position_ids,
  kv_cache
};

struct Mask {
  MaskKind kind = MaskKind::none;
  int64_t window = 0;            // sliding_window
  std::vector<uint8_t> allowed;  // explicit_mask: [seqlen_q][seqlen_kv], shared by batch/heads
  std::vector<int64_t> pos;      // position_ids: [batch][seqlen_q]
  // kv_cache, decoding against a KV cache (nki-library attention_tkg): the last seqlen_q keys are
  // the active tokens, causal among themselves (active key seqlen_kv - seqlen_q + a is visible to
  // query i iff a <= i); the C = seqlen_kv - seqlen_q cached keys before them are visible to query
  // i of batch b iff they lie in [cache_begin, cache_end) of (b, i), or, when cache_begin >
  // cache_end (a sliding window wrapping around a circular cache), in [cache_begin, C) or
  // [0, cache_end). Both are [batch][seqlen_q] with values in [0, C]. Cached keys outside the
  // range are stale entries the kernel must not read into the result.
  std::vector<int64_t> cache_begin, cache_end;
};

// Rotary position embedding applied to q and k before the scores (rotate-half convention:
// pair t of a head vector is (x[t], x[t + d/2]), rotated by pos * theta^(-2t/d)).
struct Rope {
  double theta = 10000.0;
  std::vector<int64_t> pos_q;  // [batch][seqlen_q]
  std::vector<int64_t> pos_k;  // [batch][seqlen_kv]
  // Empty: pair t turns by theta^(-2t/d) per position. Else d/2 values, the angle per position of
  // each pair as the kernel is given them (nki-library's attention_tkg takes inv_freqs [d/2, 1]
  // fp32 as an input; theta is then unused).
  std::vector<double> inv_freq;
  // Keys j < rotated_from (of every batch) are not rotated: a KV cache holds its keys rotated
  // when they were written, and a decode kernel rotates only the active tokens' keys
  // (nki-library attention_tkg_torch.py _attention_tkg_fwd_ref: k_active only). 0: every key.
  int64_t rotated_from = 0;
};

// The angle per position of each RoPE pair t < d/2: Rope::inv_freq when given, else
// theta^(-2t/d) (empty without RoPE).
struct AttentionSpec;
std::vector<double> rope_inverse_frequencies(const AttentionSpec& spec);
// Whether key j is rotated (RoPE on and j >= rope->rotated_from).
bool rope_rotates_key(const AttentionSpec& spec, int64_t j);

// Paged KV cache: logical key j of batch b lives in physical block table[b][j / block_size] at
// row j % block_size. With a block table, k and v are the physical cache
// [num_blocks][kv_heads][block_size][d_head].
struct BlockKv {
  int64_t block_size = 0;
  int64_t num_blocks = 0;
  std::vector<int64_t> table;  // [batch][seqlen_kv / block_size]
};

struct AttentionSpec {
  int64_t batch = 1, heads = 1, kv_heads = 1, seqlen_q = 1, seqlen_kv = 1, d_head = 1;
  double scale = 1.0;  // multiplies q.k; sinks are not scaled
  Mask mask;
  std::vector<double> sink;  // empty, or one logit per head: enters only the denominator
  // Empty, or an additive logits bias [seqlen_q][seqlen_kv] shared by batch and heads (flash_fwd's
  // logit_bias [1, 1, Sq, Sk]): s_ij = scale * q_i.k_j + bias_ij, not scaled; a masked key stays
  // masked whatever its bias.
  std::vector<double> bias;
  std::optional<Rope> rope;
  std::optional<BlockKv> block_kv;
  DType input_dtype = DType::fp32;  // q, k, v are exactly representable in it
  DType output_dtype = DType::fp32;

  // Throws SpecError naming the JSON path of the offending field ("mask.window", "heads", ...).
  void validate() const;
  // The kv_cache mask's ranges (part of validate()).
  void validate_cache_ranges() const;
  // Key j visible to query i of batch b (the mask only; sinks are always present).
  bool visible(int64_t b, int64_t i, int64_t j) const;
  // The visible keys of query i of batch b, ascending, into `out` (cleared first).
  void visible_keys(int64_t b, int64_t i, std::vector<int64_t>& out) const;
  // The visible keys as a range [first, second) when the mask makes them contiguous (every kind
  // but explicit); nullopt for an explicit mask.
  std::optional<std::pair<int64_t, int64_t>> visible_range(int64_t b, int64_t i) const;
  int64_t group_size() const { return heads / kv_heads; }
  int64_t kv_head_of(int64_t h) const { return h / group_size(); }
  // Flat indices: q/out [b][h][i][c]; k/v logical [b][kvh][j][c] (physical with block_kv).
  int64_t q_index(int64_t b, int64_t h, int64_t i, int64_t c) const;
  int64_t kv_index(int64_t b, int64_t kvh, int64_t j, int64_t c) const;
  int64_t q_elements() const { return batch * heads * seqlen_q * d_head; }
  int64_t kv_elements() const;                               // logical or physical cache size
  int64_t rows() const { return batch * heads * seqlen_q; }  // one output row per (b, h, i)
};

// The values the kernel receives: q [B][H][Sq][d], k and v [B][KVH][Skv][d] (or the physical
// paged cache), each exactly representable in spec.input_dtype.
struct AttentionInputs {
  std::vector<double> q, k, v;
};

struct SpecError;

// spec.validate() plus the sizes of q, k and v; throws SpecError ("q", "k", "v").
void validate_inputs(const AttentionSpec& spec, const AttentionInputs& in);

struct SpecError : std::exception {
  std::string path;     // JSON path of the offending field, e.g. "mask.pos[1][3]"
  std::string message;  // "path: what is wrong"
  SpecError(std::string p, const std::string& what)
      : path(std::move(p)), message(path + ": " + what) {}
  const char* what() const noexcept override { return message.c_str(); }
};

// Output of an oracle, one row per (b, h, i) and d_head values per row.
//
// A fully masked row (no visible key) has a defined result: out = 0 and lse = -inf; with a sink
// the sink is the only term of the denominator, so out = 0 and lse = sink (oracle/README.md).
struct OracleOutput {
  std::vector<double> out;      // [B][H][Sq][d], each the exact value rounded to double
  std::vector<double> lse;      // [B][H][Sq]: log of the softmax denominator (natural log)
  std::vector<double> row_max;  // [B][H][Sq]: max visible scaled score (sink included), or -inf
  std::vector<double> row_sum;  // [B][H][Sq]: sum of exp(s - row_max) (sink included), or 0
  // Exact oracle only: every out value as a decimal string of >= 30 significant digits.
  std::vector<std::string> out_decimal;
};

}  // namespace ncv::oracle
