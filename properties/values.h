// Attention input values for the property suite (properties/README.md "Generators"), drawn from a
// small recipe so that a failing case shrinks to the simplest values and prints as one token
// (`normal:s=-3:seed=17`) that `ncverify check --values` replays exactly.
//
// The floating-point sampling is written here on purpose: RapidCheck's gen::inRange<double> is
// integer-based and its real generator never yields NaN, Inf, subnormals or -0. Every value is
// rounded to the spec's input dtype, so it is exactly what the kernel receives.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oracle/attention_spec.h"

namespace ncv::props {

// Ordered from simplest to hardest: RapidCheck shrinks an element choice toward the first.
enum class ValueKind : uint8_t {
  uniform,        // U[-1, 1) * 2^s
  normal,         // N(0, 1) * 2^s
  large_logits,   // q, k scaled so that |scale * q.k| reaches ~100: breaks a missing max shift
  constant_rows,  // every key row identical (a flat softmax row) and every V row identical
  spike,          // key i aligned with query i: near one-hot softmax rows
  bf16_bits,      // random sign/exponent/mantissa bits of bf16 (exponents kept in a sane range)
  fp16_bits,      // ... of fp16
  fp8_e4m3_bits,  // ... of fp8 e4m3fn
  fp8_e5m2_bits,  // ... of fp8 e5m2
  subnormal_and_negzero,  // subnormals of the input dtype and -0.0 mixed into N(0, 1)
  zero_q,                 // q = 0 (scores all 0: out = mean of the visible V rows), V normal
};

const std::vector<ValueKind>& all_value_kinds();
const char* value_kind_name(ValueKind k);

struct ValueRecipe {
  ValueKind kind = ValueKind::uniform;
  int scale_log2 = 0;  // uniform / normal only: values times 2^scale_log2
  uint64_t seed = 0;

  std::string str() const;  // "normal:s=-3:seed=17"
};

// Parses ValueRecipe::str() output; nullopt with `error` set on bad text.
std::optional<ValueRecipe> parse_value_recipe(const std::string& text, std::string& error);

// The inputs of `spec` for `r`: deterministic, each value exact in spec.input_dtype.
oracle::AttentionInputs make_values(const oracle::AttentionSpec& spec, const ValueRecipe& r);

// Recipes of the given kinds (all kinds when empty); shrinks toward uniform, scale 0, seed 0.
rc::Gen<ValueRecipe> gen_value_recipe(std::vector<ValueKind> kinds = {});

}  // namespace ncv::props
