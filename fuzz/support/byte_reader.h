// Structured values from fuzzer bytes (the idea of LLVM's FuzzedDataProvider, written for this
// project so the replay binaries build with g++ too). Every read is total: past the end of the
// input it returns the least value, so any byte string decodes to something.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ncv::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), n_(size) {}

  size_t remaining() const { return n_ - i_; }
  bool empty() const { return i_ >= n_; }

  uint8_t byte() { return i_ < n_ ? p_[i_++] : 0; }

  // A value in [lo, hi] (lo <= hi) from as few bytes as the range needs.
  int64_t in_range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    uint64_t v = 0;
    for (uint64_t covered = 0; covered < span && !empty(); covered = (covered << 8) | 0xff) {
      v = (v << 8) | byte();
    }
    return static_cast<int64_t>(static_cast<uint64_t>(lo) +
                                (span == UINT64_MAX ? v : v % (span + 1)));
  }

  bool flag() { return byte() & 1; }

  // One of n choices (n >= 1).
  size_t pick(size_t n) { return static_cast<size_t>(in_range(0, static_cast<int64_t>(n) - 1)); }

  uint32_t u32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | byte();
    return v;
  }

  float f32_bits() {
    const uint32_t b = u32();
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  }

  // Up to max_len bytes as a string.
  std::string text(size_t max_len) {
    const size_t len = pick(max_len + 1);
    std::string s;
    for (size_t k = 0; k < len && !empty(); ++k) s.push_back(static_cast<char>(byte()));
    return s;
  }

  // Everything left.
  std::vector<uint8_t> rest() {
    std::vector<uint8_t> v(p_ + i_, p_ + n_);
    i_ = n_;
    return v;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
};

}  // namespace ncv::fuzz
