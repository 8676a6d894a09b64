// The model's random values (nl.rand, nisa.dropout). The hardware's generator is not documented
// and cannot be reproduced, so the model draws from a generator of its own: counter-based (a
// splitmix64 hash of the run's seed, a stream and the element), so a value depends only on the
// seed, on which draw of the run it belongs to and on its position, never on evaluation order.
// A run's values are therefore reproducible, and nothing about the hardware's is claimed: no
// verification verdict rests on them (draws_random_values, model/ir/instruction.h).
#pragma once

#include <cstdint>

#include "model/semantics/semantics.h"
#include "model/semantics/view.h"

namespace ncv {
inline namespace semantics {

// 64 hashed bits of (seed, stream, element).
uint64_t random_bits(uint64_t seed, uint64_t stream, uint64_t element);
// A value uniform on the 2^24 fp32 values k * 2^-24 in [0, 1) (exact in fp32) from 64 bits.
float unit_uniform(uint64_t bits);

// The stream of one random instruction instance: its core and the count of random instances
// that core ran before it.
inline uint64_t random_stream(int core, uint64_t draw) {
  return (static_cast<uint64_t>(core) << 48) ^ draw;
}

// nl.rand: dst[r, f] = unit_uniform(random_bits(seed, stream, r * free + f)) converted to dst's
// dtype (round to nearest even, so a bf16 draw may round up to 1.0).
void exec_rand(const View& dst, uint64_t seed, uint64_t stream);

// nisa.dropout: element (r, f) is dropped (dst = 0) when its draw u (as exec_rand's) is below
// the row's drop probability prob (fp32), kept (dst = data, converted to dst's dtype) otherwise:
// prob 1 drops everything, prob 0 keeps everything, and kept values are not rescaled.
void exec_dropout(const View& dst, const View& data, const ScalarArg& prob, uint64_t seed,
                  uint64_t stream);

}  // namespace semantics
}  // namespace ncv
