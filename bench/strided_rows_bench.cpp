// Why the interpreter is memory-bound (bench/README.md): read bandwidth of [128, 512-byte] tiles
// whose rows lie one partition stride (68 KiB, sd_attention's SBUF footprint at S = 4096) apart,
// on 4 KiB pages and on the interpreter's huge-page-hinted arrays (model/interp/host_memory.h),
// next to a plain memcpy of 64 MiB. Best of 3 passes each.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/interp/host_memory.h"

namespace {

using clock_type = std::chrono::steady_clock;
constexpr size_t kStride = size_t{68} << 10, kRows = 128, kRun = 512;

// GB/s of reading every [128, 512 B] tile of a partition-major array, column block by block.
double strided_gbps(const uint8_t* base) {
  static std::vector<uint8_t> dst(kRows * kRun);
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = clock_type::now();
    for (size_t off = 0; off + kRun <= kStride; off += kRun) {
      for (size_t p = 0; p < kRows; ++p)
        std::memcpy(&dst[p * kRun], base + p * kStride + off, kRun);
    }
    best = std::min(best, std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  return static_cast<double>(kRows * kStride) / best * 1e-9;
}

}  // namespace

int main() {
  const size_t n = size_t{64} << 20;
  std::vector<uint8_t> a(n, 1), b(n, 2);
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = clock_type::now();
    std::memcpy(b.data(), a.data(), n);
    best = std::min(best, std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::printf("memcpy 64 MiB:                          %5.1f GB/s (read + write)\n",
              2.0 * n / best * 1e-9);
  std::vector<uint8_t> small_pages(kRows * kStride, 1);
  std::printf("512 B rows, 68 KiB apart, 4 KiB pages:  %5.1f GB/s read\n",
              strided_gbps(small_pages.data()));
  ncv::interp::HostMemory huge(kRows * kStride, 1);
  std::printf("512 B rows, 68 KiB apart, HostMemory:   %5.1f GB/s read\n",
              strided_gbps(huge.data()));
  return 0;
}
