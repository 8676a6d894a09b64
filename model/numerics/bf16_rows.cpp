// bf16 runs (bf16_rows.h): the portable loops and the choice of the AVX2 build.
#include "model/numerics/bf16_rows.h"

#include "model/numerics/dtype_bf16.h"

namespace ncv {
inline namespace numerics {

namespace {
#include "model/numerics/bf16_rows_kernel.h"

bool decode_portable(const uint8_t* p, float* out, int64_t n) {
  bf16_decode_loop(p, out, static_cast<long>(n));
  return true;
}
bool encode_portable(const float* in, uint8_t* p, int64_t n) {
  bf16_encode_loop(in, p, static_cast<long>(n));
  return true;
}

const detail::Bf16Loops& fastest() {
  static const detail::Bf16Loops loops = detail::bf16_row_loops().front();
  return loops;
}
}  // namespace

namespace detail {
std::vector<Bf16Loops> bf16_row_loops() {
  std::vector<Bf16Loops> loops;
#if defined(__x86_64__) || defined(__i386__)
  // Listed only when the CPU has AVX2 and the file was built with it.
  uint8_t b[2] = {};
  float f = 0.0f;
  if (__builtin_cpu_supports("avx2") && bf16_decode_avx2(b, &f, 1)) {
    loops.push_back({"avx2", bf16_decode_avx2, bf16_encode_avx2});
  }
#endif
  loops.push_back({"portable", decode_portable, encode_portable});
  return loops;
}
}  // namespace detail

void bf16_decode_run(const uint8_t* p, float* out, int64_t n) {
  fastest().decode(p, out, n);
}
void bf16_encode_run(const float* in, uint8_t* p, int64_t n) {
  fastest().encode(in, p, n);
}

}  // namespace numerics
}  // namespace ncv
