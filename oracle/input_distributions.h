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
};

const std::vector<Distribution>& all_distributions();
const char* distribution_name(Distribution d);

// Inputs for `spec` drawn from `d` with `seed`, each value exactly representable in
// spec.input_dtype (rounded to nearest even). Deterministic for (spec, d, seed).
AttentionInputs generate_inputs(const AttentionSpec& spec, Distribution d, uint64_t seed);

}  // namespace ncv::oracle
