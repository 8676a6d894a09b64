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
}

HostMemory::HostMemory(size_t n, uint8_t fill) : size_(n) {
  if (n == 0) return;
  // Whole huge pages, aligned to one, so that the kernel can back all of it with them.
  const size_t bytes = (n + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Before the first touch, so that the pages are faulted in as huge pages.
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  data_.reset(static_cast<uint8_t*>(p));
  std::memset(p, fill, n);
}

void HostMemory::Free::operator()(uint8_t* p) const {
  std::free(p);
}

}  // namespace ncv::interp
