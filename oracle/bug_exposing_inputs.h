// The structured input builders behind the bug-exposing distributions of input_distributions.h
// (oracle/README.md "Inputs that expose bugs"). Each one fills q, k and v (already sized for the
// spec) from `rng`, rounding every value to spec.input_dtype; generate_inputs() dispatches here.
#pragma once

#include <random>

#include "oracle/attention_spec.h"

namespace ncv::oracle::detail {

void make_peaked(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);
void make_overflow_logits(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);
void make_rowmax_across_tiles(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);
void make_masked_dominant(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);
// rowmax_target_tile() (input_distributions.h).
int64_t rowmax_target(const AttentionSpec& s, int64_t b, int64_t i);

// Stale entries dominate: keys no query of their batch sees (a decode kernel's cache slots past
// its position) get logits far above the visible ones and large distinct values.
void make_stale_cache(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);

void make_signed(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in);

}  // namespace ncv::oracle::detail
