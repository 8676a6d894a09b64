// Boost.Multiprecision attention oracle: every operation in >= 113 significant bits on the
// inputs exactly as the kernel receives them.
#pragma once

#include "oracle/attention_spec.h"

namespace ncv::oracle {

// Throws SpecError for an invalid spec or inputs of the wrong size; NaN/Inf inputs give a
// defined result (oracle/README.md), never a crash.
OracleOutput exact_attention(const AttentionSpec& spec, const AttentionInputs& in,
                             bool with_decimal = false);

}  // namespace ncv::oracle
