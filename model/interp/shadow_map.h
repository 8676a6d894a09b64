// Which lifetime last wrote each byte of one memory array (the interpreter's shadow memory behind
// uninitialized and clobbered reads), kept as intervals instead of one tag per byte.
//
// Why intervals: a kernel's accesses cover whole partition ranges with the same byte pattern in
// every partition, and big buffers are written in a few large tiles. A tag per byte made every
// read, write and lifetime start cost a pass over all its bytes (the interpreter's hottest code
// at S = 4096); here a lifetime start costs nothing and an access costs O(log n + runs).
//
// The array is partitions x bytes. Partitions are grouped in bands of consecutive partitions
// whose byte intervals are identical; each band holds sorted, disjoint, maximal segments
// [begin, end) -> stamp. Bytes outside every segment have stamp 0 (never written).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ncv {
inline namespace interp {

// A contiguous byte range [begin, end) within one partition.
struct ByteRun {
  int64_t begin = 0, end = 0;
};

class ShadowMap {
 public:
  explicit ShadowMap(int64_t partitions = 1);

  // Sets the stamp of every byte of `runs` in partitions [p0, p1). Runs must be sorted by begin,
  // non-empty and disjoint (adjacent is fine).
  void write(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs, uint32_t stamp);

  struct Mismatch {
    int64_t partition = 0, byte = 0;
    uint32_t found = 0;  // 0 = never written
  };
  // The first byte (lowest partition, then lowest byte) of `runs` in [p0, p1) whose stamp is not
  // `stamp`. Same requirements on runs as write().
  std::optional<Mismatch> find_other(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs,
                                     uint32_t stamp) const;

  // One Mismatch per distinct stamp other than `stamp` found in `runs` of [p0, p1) (its first
  // location), appended to `out` unless `out` already holds that stamp.
  void others(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs, uint32_t stamp,
              std::vector<Mismatch>& out) const;

  // Partitions [p0, p1) x bytes [begin, end), all last written by `stamp` (0: never).
  struct Piece {
    int64_t p0 = 0, p1 = 0, begin = 0, end = 0;
    uint32_t stamp = 0;
  };
  // Calls f for every piece of `runs` in [p0, p1), in order.
  void for_each_piece(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs,
                      const std::function<void(const Piece&)>& f) const;

  // Bytes of [0, n) in partition p that were never written: their count and the first one.
  struct Gaps {
    int64_t count = 0, first = -1;
  };
  Gaps unwritten(int64_t p, int64_t n) const;

  size_t num_bands() const { return bands_.size(); }

 private:
  struct Segment {
    int64_t begin, end;
    uint32_t stamp;
    bool operator==(const Segment&) const = default;
  };
  struct Band {
    int64_t p0;  // the band ends where the next one begins (or at partitions_)
    std::vector<Segment> segs;
  };
  template <class Visit>
  void scan(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs, Visit&& visit) const;
  // Index of the band that starts at p, splitting the band containing p if needed.
  size_t split_at(int64_t p);
  size_t band_of(int64_t p) const;
  static void assign(std::vector<Segment>& segs, const std::vector<ByteRun>& runs, uint32_t stamp);
  void merge_equal_bands(size_t first, size_t last);

  int64_t partitions_;
  std::vector<Band> bands_;
};

}  // namespace interp
}  // namespace ncv
