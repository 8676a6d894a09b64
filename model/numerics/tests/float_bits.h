// Float <-> bit pattern, shared by the numerics and semantics tests.
#pragma once

#include <bit>
#include <cstdint>

namespace ncv::numtest {

inline float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
inline uint32_t to_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

}  // namespace ncv::numtest
