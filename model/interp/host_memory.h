// A byte array for the model's on-chip memories, backed by huge pages where the host allows, and
// filled lazily.
//
// Why huge pages: SBUF and PSUM are laid out partition-major, so a [128, F] tile touches 128 rows
// one partition stride apart, each on its own 4 KiB page. With 4 KiB pages every tile access
// misses the TLB row after row; 2 MiB pages make the whole array a few TLB entries, and strided
// rows read faster on them (bench/strided_rows_bench; bench/README.md has the figures). The hint
// is advisory: without transparent huge pages the memory behaves as before.
//
// Why lazily: an array is `rows` partitions of `row_bytes` each, and a run touches few of its
// bytes — a program with one explicit placement gets the whole 24 MiB SBUF, and filling it
// eagerly was a large share of fuzz_program's time (bench/README.md).
// So the fill is applied per partition in chunks (at most 64 per partition), the first time an
// access covers them: `prepare` must be called with an access's partitions and bytes before the
// access reads or writes them. Small arrays are filled at once.
//
// Freed arrays are kept per thread (a few) and handed to the next array that fits in one: a run
// allocates SBUF and PSUM afresh, and faulting those pages in again (a fresh huge page is zeroed
// whole on its first touch) dominated short runs (bench/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ncv {
inline namespace interp {

class HostMemory {
 public:
  HostMemory() = default;
  // `rows` rows of `row_bytes` bytes, every byte reading as `fill` once prepared.
  HostMemory(size_t rows, size_t row_bytes, uint8_t fill);
  // n bytes, every one set to `fill` now.
  HostMemory(size_t n, uint8_t fill);

  // Applies the fill to rows [row_begin, row_begin + rows) x bytes [byte_begin, byte_end) of each
  // row where it has not been applied yet. Ranges outside the array are clipped to it.
  void prepare(int64_t row_begin, int64_t rows, int64_t byte_begin, int64_t byte_end) {
    if (all_filled_) return;
    prepare_chunks(row_begin, rows, byte_begin, byte_end);
  }

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  void acquire();
  void prepare_chunks(int64_t row_begin, int64_t rows, int64_t byte_begin, int64_t byte_end);

  struct Free {
    size_t bytes;  // the allocation's size (whole huge pages); no initializer, so that the
                   // nested type counts as default-constructible inside HostMemory
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
  size_t rows_ = 0, row_bytes_ = 0, chunk_bytes_ = 0;
  uint8_t fill_ = 0;
  bool all_filled_ = true;
  std::vector<uint64_t> filled_;  // per row: bit c = chunk c holds the fill or written data
};

}  // namespace interp
}  // namespace ncv
