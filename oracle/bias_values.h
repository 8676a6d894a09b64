// The logits bias a check draws for a kernel that takes one (flash_fwd's logit_bias), when the
// spec does not carry it (oracle/README.md "Logits bias").
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/attention_spec.h"

namespace ncv::oracle {

// A bias [seqlen_q][seqlen_kv] for `spec`, deterministic for (shapes, seed), every value an fp32
// value (the contract rounds it to its bias_dtype): N(0, 1), except one element in 32 lifted by
// U[10, 20) (a key that dominates its row whatever q.k says) and one in 32 lowered by U[20, 40)
// (a soft mask). A bias that is not symmetric, so a bias read as [Sk, Sq] shows.
std::vector<double> generate_bias(const AttentionSpec& spec, uint64_t seed);

}  // namespace ncv::oracle
