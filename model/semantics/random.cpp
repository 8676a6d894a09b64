#include "model/semantics/random.h"

#include <vector>

#include "model/numerics/dtype.h"

namespace ncv {
inline namespace semantics {

namespace {

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit words whose outputs
// for consecutive inputs pass BigCrush.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float row_prob(const ScalarArg& prob, int64_t r) {
  if (const float* imm = std::get_if<float>(&prob)) return *imm;
  const View& col = std::get<View>(prob);
  return decode_to_float(col.dtype, load_bits(col.dtype, col.at(r, 0)));
}

}  // namespace

uint64_t random_bits(uint64_t seed, uint64_t stream, uint64_t element) {
  return mix(mix(mix(seed) ^ stream) ^ element);
}

float unit_uniform(uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1p-24f;  // 24 bits: exact in fp32
}

void exec_rand(const View& dst, uint64_t seed, uint64_t stream) {
  const int64_t n = dst.free_elems();
  for (int64_t r = 0; r < dst.rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      const float u = unit_uniform(random_bits(seed, stream, static_cast<uint64_t>(r * n + f)));
      store_bits(dst.dtype, dst.at(r, f), encode_from_float(dst.dtype, u));
    }
  }
}

void exec_dropout(const View& dst, const View& data, const ScalarArg& prob, uint64_t seed,
                  uint64_t stream) {
  const int64_t n = data.free_elems();
  const uint32_t zero = encode_from_float(dst.dtype, 0.0f);
  // Row by row, each row read whole before it is written (dst may be data; rows are disjoint
  // partitions, and prob is a column of its own).
  std::vector<uint32_t> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < data.rows; ++r) {
    const float p = row_prob(prob, r);
    for (int64_t f = 0; f < n; ++f) {
      const float u = unit_uniform(random_bits(seed, stream, static_cast<uint64_t>(r * n + f)));
      const uint32_t bits = load_bits(data.dtype, data.at(r, f));
      row[static_cast<size_t>(f)] =
          u < p ? zero
          : dst.dtype == data.dtype
              ? bits
              : encode_from_float(dst.dtype, decode_to_float(data.dtype, bits));
    }
    for (int64_t f = 0; f < n; ++f)
      store_bits(dst.dtype, dst.at(r, f), row[static_cast<size_t>(f)]);
  }
}

}  // namespace semantics
}  // namespace ncv
