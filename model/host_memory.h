// A byte array for the model's on-chip memories, backed by huge pages where the host allows.
//
// Why: SBUF and PSUM are laid out partition-major, so a [128, F] tile touches 128 rows one
// partition stride apart, each on its own 4 KiB page. With 4 KiB pages every tile access misses
// the TLB row after row; 2 MiB pages make the whole array a few TLB entries. Measured on this
// project's machine kind (2026-11-22, bench/strided_rows_bench): reading 512-byte rows at a 68 KiB
// stride ran at 3.7-4.4 GB/s on 4 KiB pages and 4.6-8.0 GB/s on huge pages, depending on the
// shared host's state. The hint is advisory: without transparent huge pages the memory behaves
// as before.
//
// Freed arrays are kept per thread (a few, by size) and handed to the next array of the same
// size: a run allocates SBUF and PSUM afresh (2 MiB of PSUM, 24 MiB of SBUF with explicit
// placements), and faulting those pages in again dominated short runs (~70% of a 1-instruction
// program's time, 2026-11-22, fuzz_program). The fill is applied on reuse too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ncv::interp {

class HostMemory {
 public:
  HostMemory() = default;
  // n bytes, every one set to `fill`.
  HostMemory(size_t n, uint8_t fill);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    size_t bytes;  // the allocation's size (whole huge pages); no initializer, so that the
                   // nested type counts as default-constructible inside HostMemory
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

}  // namespace ncv::interp
