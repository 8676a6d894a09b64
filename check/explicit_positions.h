// The mask of a `check --layout` problem stated in positions, as nki-library's attention_cte
// reference states it (attention_cte_torch.py): every query and key has a position, and the mask
// compares them. Beyond the oracle's built-in masks (bottom-right causal and sliding window) it
// states a top-left aligned mask (Sq != Skv), a prefix of prior keys of which a length read at
// run time is used (prefix caching), a query offset read at run time (context parallelism) and
// per-query key bounds (sequence packing). The run-time values are drawn per check case.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "oracle/attention_spec.h"

namespace ncv::kernels {

// Where the queries sit among the keys when no offset is read at run time: bottom-right (the
// last query at the last key's position, the oracle's causal) or top-left (query i at position
// i, as attention_cte's source and reference mask).
enum class Align : uint8_t { bottom_right, top_left };

// What a --layout check says about the problem beyond the shapes.
struct ExplicitProblem {
  double scale = 1.0;
  bool causal = false;  // keys at positions after the query's are masked
  Align align = Align::bottom_right;
  // > 0: a query at position p sees keys at positions in (p - window, p] when causal, in
  // (p - window, inf) otherwise (the reference masks `kv_pos - q_pos <= -window`).
  int64_t window = 0;
  // > 0: context parallelism over this many ranks: the kernel reads the position of its first
  // query at run time (the q_offset role); query i sits at offset + i, or offset + i * cp_degree
  // when cp_strided (the ranks' queries interleaved). The offset is rank * Sq (contiguous) or the
  // rank (strided), the rank drawn per case in [0, cp_degree).
  int64_t cp_degree = 0;
  bool cp_strided = false;
};

// The sizes and run-time inputs of one problem.
struct PositionsGeometry {
  int64_t seqlen_q = 1;
  int64_t seqlen_active = 1;  // keys of k and v
  int64_t prior = 0;          // slots of k_prior and v_prior (0: no prefix caching)
  bool q_offset = false;      // the kernel reads the first query's position (context parallelism)
  bool key_bounds = false;    // the kernel reads per-query key bounds (sequence packing)
};

// The values a case draws for the run-time inputs.
struct PositionsDraw {
  int64_t prior_len = 0;                  // used prior slots, in [0, prior)
  int64_t q_offset = 0;                   // position of query 0
  std::vector<int64_t> key_min, key_max;  // [seqlen_q]: active keys [min, max) per query
};

// Throws std::invalid_argument when the problem and geometry do not go together (a q offset
// without --cp-degree or with bottom-right alignment, key bounds with a prior, ...).
void validate_positions(const ExplicitProblem& problem, const PositionsGeometry& g);

// Run-time values for one case, from `rng`: the prior length uniform in [0, prior) (the range the
// library's test draws), the rank uniform in [0, cp_degree), and 1..4 packed sequences cut at
// distinct uniform points of [0, seqlen_q) (each query's bounds its sequence's, clipped to the
// active keys), as the library's test packs them.
PositionsDraw draw_positions(const ExplicitProblem& problem, const PositionsGeometry& g,
                             std::mt19937_64& rng);

// The spec's mask and key count for the problem: seqlen_kv = prior + seqlen_active, the prior
// slots first (slot j < prior_len at position j - prior_len, the unused ones masked: the kernel
// must not read them), then the active keys (key a at position a). The oracle's causal or
// sliding_window kind when it states the mask (no prior, offset or bounds, and bottom-right or
// Sq = Skv), else an explicit mask.
void set_positions_mask(const ExplicitProblem& problem, const PositionsGeometry& g,
                        const PositionsDraw& draw, oracle::AttentionSpec& spec);

}  // namespace ncv::kernels
