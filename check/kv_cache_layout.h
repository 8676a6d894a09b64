// Checking an outside decode kernel against a KV cache (nki-library's attention_tkg through
// ncverify's entry, or any kernel of that interface): `check FILE --layout "q=d,b*h*s
// k_active=d,b*s v_active=b,h,s,d k_prior=b,h,d,c v_prior=b,h,c,d mask=c,b,h,s out=b,h,d,s"
// --contract attention_tkg`. The roles name the tensors of the decode problem the oracle states
// as a kv_cache mask (oracle/attention_spec.h): the cache, the active tokens, the mask the kernel
// takes (built from the case's positions as nki-library's test builds it), optionally the
// positions and the sinks. Each case draws the positions (and sinks) with the contract kernel's
// own generator (Variant::draw_case), so masks and positions are valid for the problem.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

// One role of a KV-cache layout: the tensor it names and, per tensor dimension (outermost
// first), the axes it holds (outermost first; several for a flattened dimension: "b*h*s").
// Axes: 'b' batch, 'h' head (the query head; the KV head in k_*/v_*), 's' query / active token,
// 'd' head dim, 'c' cache slot, 'a' active key (the active mask), 'n' a physical cache block and
// 'l' a slot in it (a block cache's k_prior / v_prior), 't' a batch's logical block (the table),
// '1' a dimension of extent 1.
struct KvRole {
  std::string tensor;
  std::vector<std::vector<char>> dims;
};

// Roles: q, k_active, v_active, k_prior, v_prior, mask, out (required), sink, positions, starts,
// table (optional), `slots` (an integer: the cache slots the kernel reads, S; needed only when the
// mask has no slot axis, i.e. an active mask with positions), `window` (a sliding window of
// W keys over a circular cache, with positions and starts: nki-library's build_swa_positions) and
// `block_mask` (R: a whole mask's slots in a block kernel's fold order, see below).
// A block cache: `table` [b, t] holds the physical block of batch b's logical block t (slots
// t·L .. t·L + L - 1), k_prior / v_prior list n and l (and h, d) instead of b and c
// (nki-library's k_prior [num_blocks, block_len, d] with active_blocks_table [B, S / block_len]).
struct KvCacheLayout {
  std::map<std::string, KvRole> roles;
  int64_t slots = 0;   // 0: the mask's slot extent
  int64_t window = 0;  // 0: no sliding window
  // 0: the mask's slot axis c in slot order; R > 0: in a block cache's fold order (below)
  int64_t block_mask = 0;
};

// Whether a --layout text names the KV-cache role k_active (required in one), so check takes this
// adapter (k_prior/v_prior alone are the prefix-caching roles of check/explicit_layout.h).
bool is_kv_cache_layout(const std::string& text);

// "ROLE[:TENSOR]=DIM,DIM,..." entries separated by spaces or ';' (TENSOR defaults to ROLE), each
// DIM one axis or several joined by '*', plus optional "slots=N" and "window=W". Throws
// std::invalid_argument naming the offending entry.
KvCacheLayout parse_kv_cache_layout(const std::string& text);

// A Variant for `program` under `layout`: the contract, options and per-case draws
// (Variant::draw_case, required) of `contract_from`; the spec read off the program's shapes at the
// given params: batch B, heads H, kv_heads (k_prior's h), seqlen_q = the active tokens A,
// seqlen_kv = the slots S the kernel reads (the mask's c extent, or `slots`), of which the last A
// hold the active tokens, d_head; a kv_cache mask (cache_begin 0, cache_end the position P_b of
// batch b: the nki-library test's (3b + 3 (S // 4)) mod (S - A) until a case draws others);
// scale `scale`; sinks when the layout has a sink role; with a window W, each query's cached keys
// are its window [start, end) over the circular cache (start = (end - W + 1) mod S, end = P_b + i;
// the contract kernel's generator draws W per case when its spec records one); input dtype
// k_prior's, output dtype out's.
// Packing (Layout::pack_extra): q, k_active / v_active (the spec's last A keys), the cache (slot j
// < S - A the spec's key j; the active slots and the slots past S hold large values a kernel must
// never use), the mask (c: slot j of query i visible iff the spec says so, as nki-library's
// build_full_attention_mask builds it from the positions; a: the causal active mask), positions
// (P_b for every active token, as the test broadcasts pos_id; with a window each query's window
// end, and starts its window start, as build_swa_positions) and the sinks.
// A block cache (table role): the spec's block_kv over the N physical blocks of k_prior, a table
// drawn by attention_tkg_draws.h draw_block_table (each case draws another); the packing writes
// the physical blocks (the active slots' rows stale) and the table. block_mask=R: mask row
// fold·128·R + r·128 + p holds slot fold·128·R + p·R + r (nki-library's build_full_attention_mask
// with block_len, R its resized block length).
// Throws std::invalid_argument when the program's shapes do not fit the layout.
Variant kv_cache_layout_variant(const Variant& contract_from, const Program& program,
                                const KvCacheLayout& layout, double scale);

}  // namespace ncv::kernels
