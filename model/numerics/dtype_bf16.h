// bf16 <-> fp32 bit conversions, inline and branch-free so that the interpreter's row loops
// vectorise. dtype.cpp's encode_from_float / decode_to_float use exactly these for bf16. They
// are `static` (internal linkage) so that the ISA-specific files (bf16_rows_avx2.cpp) can include
// them without sharing a copy compiled for their ISA with the rest of the program.
#pragma once

#include <cstdint>

namespace ncv {
inline namespace numerics {

// fp32 pattern -> bf16 pattern, round to nearest even. bf16 has fp32's exponent range, so rounding
// the top 16 bits handles normals, subnormals and overflow to Inf (0x7f7fffff rounds up to 0x7f80)
// uniformly; no carry reaches the sign bit for a finite input. NaN -> sign | 0x7fc0.
static inline uint32_t bf16_encode_bits(uint32_t f) {
  const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
  const uint32_t nan = ((f >> 16) & 0x8000u) | 0x7fc0u;
  return static_cast<int32_t>(f & 0x7fffffffu) > 0x7f800000 ? nan : rounded;
}

// bf16 pattern -> fp32 pattern: shifted up; NaN -> quiet NaN with the sign kept.
static inline uint32_t bf16_decode_bits(uint32_t h) {
  const uint32_t x = (h & 0xffffu) << 16;
  // |x| > Inf as a signed compare of non-negative values (SSE2 has no unsigned compare).
  return static_cast<int32_t>(x & 0x7fffffffu) > 0x7f800000 ? ((x & 0x80000000u) | 0x7fc00000u) : x;
}

}  // namespace numerics
}  // namespace ncv
