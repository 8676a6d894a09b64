// The lazily filled on-chip arrays (model/interp/host_memory.h): a prepared byte reads as the fill
// unless it was written after being prepared, and preparing never touches written bytes — the
// interpreter relies on both, since it writes right after preparing an access's bytes.
#include "model/interp/host_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace ncv {
inline namespace interp {
namespace {

// Random prepare-then-write rounds against a model array that is filled eagerly.
void check_random_rounds(size_t rows, size_t row_bytes, uint32_t seed) {
  HostMemory mem(rows, row_bytes, 0xFF);
  std::vector<uint8_t> model(rows * row_bytes, 0xFF);
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  uint8_t value = 0;
  for (int round = 0; round < 300; ++round) {
    const int64_t r0 = pick(0, static_cast<int64_t>(rows) - 1);
    const int64_t nr = pick(1, static_cast<int64_t>(rows) - r0);
    const int64_t b0 = pick(0, static_cast<int64_t>(row_bytes) - 1);
    const int64_t b1 = pick(b0 + 1, static_cast<int64_t>(row_bytes));
    mem.prepare(r0, nr, b0, b1);
    for (int64_t r = r0; r < r0 + nr; ++r) {
      for (int64_t b = b0; b < b1; ++b) {
        const size_t at = static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b);
        ASSERT_EQ(mem.data()[at], model[at]) << "row " << r << " byte " << b << " round " << round;
      }
    }
    // Write a sub-range, as an instruction's output does.
    const int64_t w0 = pick(b0, b1 - 1), w1 = pick(w0 + 1, b1);
    ++value;
    for (int64_t r = r0; r < r0 + nr; ++r) {
      const size_t at = static_cast<size_t>(r) * row_bytes + static_cast<size_t>(w0);
      std::memset(mem.data() + at, value, static_cast<size_t>(w1 - w0));
      std::memset(model.data() + at, value, static_cast<size_t>(w1 - w0));
    }
  }
}

TEST(HostMemory, LazyFillMatchesEagerFillOnSbufSizedRows) {
  check_random_rounds(128, 192 * 1024, 1);  // trn1 SBUF: 64 chunks of 3 KiB per partition
}

TEST(HostMemory, LazyFillMatchesEagerFillOnRowsShorterThanAChunkRun) {
  check_random_rounds(128, 1000, 2);  // 4 chunks of 256 bytes, the last one short
}

TEST(HostMemory, SmallArraysAreFilledAtOnce) {
  HostMemory mem(4, 100, 0xAB);
  for (size_t k = 0; k < 400; ++k) ASSERT_EQ(mem.data()[k], 0xAB) << k;
}

TEST(HostMemory, PrepareClipsRangesOutsideTheArray) {
  HostMemory mem(128, 4096, 0x7F);
  mem.prepare(-3, 200, -10, 1 << 20);  // every row and byte, and beyond on every side
  for (size_t k = 0; k < size_t{128} * 4096; ++k) ASSERT_EQ(mem.data()[k], 0x7F) << k;
  mem.prepare(0, 0, 0, 10);   // no rows
  mem.prepare(0, 5, 10, 10);  // no bytes
}

TEST(HostMemory, ReusedArraysAreFilledAgain) {
  {
    HostMemory first(128, 8192, 0x00);
    first.prepare(0, 128, 0, 8192);
    std::memset(first.data(), 0x11, first.size());
  }
  // The freed array comes back from the per-thread pool; its old bytes must not show.
  HostMemory second(128, 8192, 0xFF);
  second.prepare(0, 128, 0, 8192);
  for (size_t k = 0; k < second.size(); ++k) ASSERT_EQ(second.data()[k], 0xFF) << k;
}

}  // namespace
}  // namespace interp
}  // namespace ncv
