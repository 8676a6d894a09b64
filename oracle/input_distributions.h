// Seeded value distributions for attention inputs, the "hard distributions" every check cycles
// through (oracle/README.md): each one breaks a different shortcut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/attention_spec.h"

namespace ncv::oracle {

enum class Distribution : uint8_t {
  uniform,           // U[-1, 1)
  uniform_positive,  // U[0, 1): what the NKI samples' own tests use (np.random.rand)
  normal,            // N(0, 1)
  large_logits,      // q, k scaled so that |scale * q.k| reaches ~100: needs the max subtraction
  constant_keys,     // every key identical: a uniform softmax row
  spike,             // one key per query row aligned with the query: a near one-hot row
  v_offset,          // v = 100 + N(0, 0.01): tests relative accuracy against a large mean
  bit_patterns,      // random sign/exponent/mantissa bits of the input dtype (exponents in range)
  tiny_and_zero,     // subnormals of the input dtype and -0.0 mixed into N(0, 1)
  // The bug-exposing distributions (oracle/README.md "Inputs that expose bugs"), built for the
  // spec's scale, mask and key tiling (oracle/bug_exposing_inputs.cpp):
  peaked,               // coherent logits with std ~8 per row: far from uniform, so a scale
                        // error of 2% moves the output well beyond the bound
  overflow_logits,      // every row's max logit >= ~110 (scaled): exp without the max
                        // subtraction overflows fp32 in every row
  rowmax_across_tiles,  // the row max lies in key tile rowmax_target_tile(): different tiles in
                        // different rows, >= 100 above every other tile, so a max over a subset
                        // of the key tiles overflows
  masked_dominant,      // causal: masked keys j > i have logits far above the visible ones, which
                        // all lie at or below -40: a leaked key or a mask fill above -40 dominates
                        // the row (no masked keys: every row is near one-hot on its last visible
                        // key with all logits <= -40, which breaks a row max initialised at 0)
  signed_values,        // N(mu_c, 0.5^2) with per-column means mu_c of both signs, |mu_c| in
                        // [0.5, 1.5): sign errors and cancellation show
  stale_cache,          // keys no query of their batch sees (kv_cache: cached slots outside
                        // every query's range) have logits >= 64 above the visible ones and
                        // large distinct values: reading one stale entry dominates the row
};

// The NeuronCore partition count: the key tile of every registered kernel, and the tile that
// rowmax_across_tiles spreads the row maxima over.
inline constexpr int64_t kKeyTile = 128;

// Every distribution (the order check cycled through before the gate order, kept for its users:
// the nine hard distributions first, then the bug-exposing ones).
const std::vector<Distribution>& all_distributions();
// The order the default check uses at every shape: the bug-exposing distributions first (peaked,
// overflow_logits, large_logits, rowmax_across_tiles, masked_dominant, signed_values), then the
// other hard ones, stale_cache (which matters for kv_cache masks only: check moves it first for
// those, kernels::check_distributions(spec)), uniform_positive (the samples' own near-uniform
// inputs) last.
const std::vector<Distribution>& gate_distributions();
const char* distribution_name(Distribution d);

// Inputs for `spec` drawn from `d` with `seed`, each value exactly representable in
// spec.input_dtype (rounded to nearest even). Deterministic for (spec, d, seed).
AttentionInputs generate_inputs(const AttentionSpec& spec, Distribution d, uint64_t seed);

// The key tile (index of kKeyTile keys) that holds the max logit of row i of batch b under
// rowmax_across_tiles, or -1 when the row sees no key. With d_head >= the number of key tiles:
// first visible tile + (i mod number of visible tiles) (i mod tiles without a mask); with fewer
// head dimensions (one-hot tile codes do not fit): the last visible tile for even rows, the first
// for odd rows.
int64_t rowmax_target_tile(const AttentionSpec& spec, int64_t b, int64_t i);

}  // namespace ncv::oracle
