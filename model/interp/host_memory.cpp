// Huge-page-backed, lazily filled byte arrays (host_memory.h).
#include "model/interp/host_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ncv {
inline namespace interp {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64 transparent huge page size
// Arrays up to this size are filled at once: tracking chunks would cost more than the memset.
constexpr size_t kEagerFillBytes = size_t{64} << 10;
// Chunks are at least this long, so a partition row has at most 64 of them (one mask word).
constexpr size_t kMinChunkBytes = 256;
constexpr size_t kMaxChunksPerRow = 64;

// Freed arrays kept for reuse (host_memory.h): one SBUF and one PSUM array per core of a small
// grid is what consecutive runs ask for.
struct Pool {
  static constexpr size_t kSlots = 4;
  uint8_t* block[kSlots] = {};
  size_t bytes[kSlots] = {};
  ~Pool() {
    for (uint8_t* p : block) std::free(p);
  }
  // The smallest kept block of at least n bytes (its size goes to n).
  uint8_t* take(size_t& n) {
    size_t best = kSlots;
    for (size_t k = 0; k < kSlots; ++k) {
      if (block[k] != nullptr && bytes[k] >= n && (best == kSlots || bytes[k] < bytes[best])) {
        best = k;
      }
    }
    if (best == kSlots) return nullptr;
    uint8_t* p = block[best];
    block[best] = nullptr;
    n = bytes[best];
    return p;
  }
  // Keeps p, or frees the smallest kept block if p is larger (large arrays are the costly ones
  // to fault in again). False when p itself is not kept.
  bool give(uint8_t* p, size_t n) {
    size_t smallest = 0;
    for (size_t k = 0; k < kSlots; ++k) {
      if (block[k] == nullptr) {
        block[k] = p;
        bytes[k] = n;
        return true;
      }
      if (bytes[k] < bytes[smallest]) smallest = k;
    }
    if (bytes[smallest] >= n) return false;
    std::free(block[smallest]);
    block[smallest] = p;
    bytes[smallest] = n;
    return true;
  }
};
thread_local Pool pool;
}  // namespace

void HostMemory::acquire() {
  // Whole huge pages, aligned to one, so that the kernel can back all of it with them.
  size_t bytes = (size_ + kHugePage - 1) / kHugePage * kHugePage;
  void* p = pool.take(bytes);
  if (p == nullptr) {
    p = std::aligned_alloc(kHugePage, bytes);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Before the first touch, so that the pages are faulted in as huge pages.
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  }
  data_.reset(static_cast<uint8_t*>(p));
  data_.get_deleter().bytes = bytes;
}

HostMemory::HostMemory(size_t n, uint8_t fill) : size_(n), rows_(1), row_bytes_(n), fill_(fill) {
  if (n == 0) return;
  acquire();
  std::memset(data_.get(), fill, n);
}

HostMemory::HostMemory(size_t rows, size_t row_bytes, uint8_t fill)
    : size_(rows * row_bytes), rows_(rows), row_bytes_(row_bytes), fill_(fill) {
  if (size_ == 0) return;
  acquire();
  if (size_ <= kEagerFillBytes) {
    std::memset(data_.get(), fill, size_);
    return;
  }
  all_filled_ = false;
  chunk_bytes_ = std::max(kMinChunkBytes, (row_bytes + kMaxChunksPerRow - 1) / kMaxChunksPerRow);
  filled_.assign(rows, 0);
}

void HostMemory::prepare_chunks(int64_t row_begin, int64_t rows, int64_t byte_begin,
                                int64_t byte_end) {
  const int64_t r0 = std::max<int64_t>(row_begin, 0);
  const int64_t r1 = std::min<int64_t>(row_begin + rows, static_cast<int64_t>(rows_));
  const int64_t b0 = std::max<int64_t>(byte_begin, 0);
  const int64_t b1 = std::min<int64_t>(byte_end, static_cast<int64_t>(row_bytes_));
  if (r0 >= r1 || b0 >= b1) return;
  const auto chunk = static_cast<int64_t>(chunk_bytes_);
  const int64_t c0 = b0 / chunk, c1 = (b1 - 1) / chunk;  // c1 < 64 by the choice of chunk_bytes_
  const uint64_t need =
      (c1 == 63 ? ~uint64_t{0} : (uint64_t{1} << (c1 + 1)) - 1) & ~((uint64_t{1} << c0) - 1);
  for (int64_t r = r0; r < r1; ++r) {
    uint64_t missing = need & ~filled_[static_cast<size_t>(r)];
    if (missing == 0) continue;
    filled_[static_cast<size_t>(r)] |= missing;
    uint8_t* row = data_.get() + static_cast<size_t>(r) * row_bytes_;
    while (missing != 0) {
      // One memset per run of consecutive missing chunks.
      const int first = __builtin_ctzll(missing);
      const uint64_t from_first = missing >> first;
      const int len = from_first == ~uint64_t{0} ? 64 - first : __builtin_ctzll(~from_first);
      const size_t begin = static_cast<size_t>(first) * chunk_bytes_;
      const size_t end = std::min(row_bytes_, static_cast<size_t>(first + len) * chunk_bytes_);
      std::memset(row + begin, fill_, end - begin);
      missing &= len == 64 ? 0 : ~(((uint64_t{1} << len) - 1) << first);
    }
  }
}

void HostMemory::Free::operator()(uint8_t* p) const {
  if (!pool.give(p, bytes)) std::free(p);
}

}  // namespace interp
}  // namespace ncv
