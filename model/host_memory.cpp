// Huge-page-backed byte arrays (host_memory.h).
#include "model/host_memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ncv::interp {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64 transparent huge page size

// Freed arrays kept for reuse (host_memory.h): one SBUF and one PSUM array per core of a small
// grid is what consecutive runs ask for.
struct Pool {
  static constexpr size_t kSlots = 4;
  uint8_t* block[kSlots] = {};
  size_t bytes[kSlots] = {};
  ~Pool() {
    for (uint8_t* p : block) std::free(p);
  }
  uint8_t* take(size_t n) {
    for (size_t k = 0; k < kSlots; ++k) {
      if (block[k] != nullptr && bytes[k] == n) {
        uint8_t* p = block[k];
        block[k] = nullptr;
        return p;
      }
    }
    return nullptr;
  }
  bool give(uint8_t* p, size_t n) {
    for (size_t k = 0; k < kSlots; ++k) {
      if (block[k] == nullptr) {
        block[k] = p;
        bytes[k] = n;
        return true;
      }
    }
    return false;
  }
};
thread_local Pool pool;
}  // namespace

HostMemory::HostMemory(size_t n, uint8_t fill) : size_(n) {
  if (n == 0) return;
  // Whole huge pages, aligned to one, so that the kernel can back all of it with them.
  const size_t bytes = (n + kHugePage - 1) / kHugePage * kHugePage;
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
  std::memset(p, fill, n);
}

void HostMemory::Free::operator()(uint8_t* p) const {
  if (!pool.give(p, bytes)) std::free(p);
}

}  // namespace ncv::interp
