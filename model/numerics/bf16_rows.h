// Contiguous runs of bf16 values (little-endian, 2 bytes each) to fp32 and back, with the
// conversions of dtype_bf16.h; vectorised with AVX2 where the CPU has it (same bits).
#pragma once

#include <cstdint>
#include <vector>

namespace ncv {
inline namespace numerics {

void bf16_decode_run(const uint8_t* p, float* out, int64_t n);
void bf16_encode_run(const float* in, uint8_t* p, int64_t n);

namespace detail {
// The builds this CPU runs, fastest first (portable last); the tests compare them.
struct Bf16Loops {
  const char* name;
  bool (*decode)(const uint8_t* p, float* out, int64_t n);
  bool (*encode)(const float* in, uint8_t* p, int64_t n);
};
std::vector<Bf16Loops> bf16_row_loops();
// bf16_rows_avx2.cpp: false when built without AVX2.
bool bf16_decode_avx2(const uint8_t* p, float* out, int64_t n);
bool bf16_encode_avx2(const float* in, uint8_t* p, int64_t n);
}  // namespace detail

}  // namespace numerics
}  // namespace ncv
