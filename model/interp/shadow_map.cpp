// Interval shadow memory (shadow_map.h).
#include "model/interp/shadow_map.h"

#include <algorithm>

namespace ncv {
inline namespace interp {

ShadowMap::ShadowMap(int64_t partitions) : partitions_(partitions) {
  bands_.push_back(Band{0, {}});
}

size_t ShadowMap::band_of(int64_t p) const {
  auto it = std::upper_bound(bands_.begin(), bands_.end(), p,
                             [](int64_t v, const Band& b) { return v < b.p0; });
  return static_cast<size_t>(it - bands_.begin()) - 1;
}

size_t ShadowMap::split_at(int64_t p) {
  if (p >= partitions_) return bands_.size();
  size_t i = band_of(p);
  if (bands_[i].p0 == p) return i;
  bands_.insert(bands_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Band{p, bands_[i].segs});
  return i + 1;
}

// Replaces the segments under `runs` by runs stamped `stamp`. Only the window of segments that
// overlap or touch [first run begin, last run end] is rebuilt, so a small write into a long list
// costs O(log n + window + runs).
void ShadowMap::assign(std::vector<Segment>& segs, const std::vector<ByteRun>& runs,
                       uint32_t stamp) {
  if (runs.empty()) return;
  const int64_t lo_b = runs.front().begin, hi_e = runs.back().end;
  auto lo = std::partition_point(segs.begin(), segs.end(),
                                 [&](const Segment& s) { return s.end < lo_b; });
  auto hi = std::partition_point(lo, segs.end(), [&](const Segment& s) { return s.begin <= hi_e; });
  // The window's segments minus the runs.
  std::vector<Segment> pieces;
  size_t r = 0;
  for (auto it = lo; it != hi; ++it) {
    int64_t cur = it->begin;
    while (r < runs.size() && runs[r].end <= cur) ++r;
    for (size_t k = r; cur < it->end; ++k) {
      if (k == runs.size() || runs[k].begin >= it->end) {
        pieces.push_back({cur, it->end, it->stamp});
        break;
      }
      if (runs[k].begin > cur) pieces.push_back({cur, runs[k].begin, it->stamp});
      cur = std::max(cur, runs[k].end);
    }
  }
  // Merge pieces and runs by begin (both sorted and disjoint), joining touching equal stamps.
  std::vector<Segment> merged;
  merged.reserve(pieces.size() + runs.size());
  auto push = [&](Segment s) {
    if (!merged.empty() && merged.back().end == s.begin && merged.back().stamp == s.stamp) {
      merged.back().end = s.end;
    } else {
      merged.push_back(s);
    }
  };
  size_t a = 0, b = 0;
  while (a < pieces.size() || b < runs.size()) {
    if (b == runs.size() || (a < pieces.size() && pieces[a].begin < runs[b].begin)) {
      push(pieces[a++]);
    } else {
      push(Segment{runs[b].begin, runs[b].end, stamp});
      ++b;
    }
  }
  const auto at = segs.erase(lo, hi);
  segs.insert(at, merged.begin(), merged.end());
}

void ShadowMap::merge_equal_bands(size_t first, size_t last) {
  size_t i = std::max<size_t>(first, 1);
  size_t end = std::min(last + 1, bands_.size());
  while (i < end && i < bands_.size()) {
    if (bands_[i].segs == bands_[i - 1].segs) {
      bands_.erase(bands_.begin() + static_cast<std::ptrdiff_t>(i));
      --end;
    } else {
      ++i;
    }
  }
}

void ShadowMap::write(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs, uint32_t stamp) {
  if (runs.empty() || p0 >= p1) return;
  const size_t a = split_at(p0);
  const size_t b = split_at(p1);
  for (size_t i = a; i < b; ++i) assign(bands_[i].segs, runs, stamp);
  merge_equal_bands(a, b);
}

// Calls visit(Piece) for each covered or uncovered piece of `runs` in [p0, p1), in order
// (uncovered pieces have stamp 0), until visit returns true. A piece is one band's partitions
// (clipped to [p0, p1)) times one segment's or gap's bytes (clipped to the run).
template <class Visit>
void ShadowMap::scan(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs,
                     Visit&& visit) const {
  if (runs.empty() || p0 >= p1) return;
  for (size_t i = band_of(p0); i < bands_.size() && bands_[i].p0 < p1; ++i) {
    const auto& segs = bands_[i].segs;
    const int64_t part = std::max(bands_[i].p0, p0);
    const int64_t part_end = std::min(i + 1 < bands_.size() ? bands_[i + 1].p0 : partitions_, p1);
    auto it = std::partition_point(segs.begin(), segs.end(),
                                   [&](const Segment& s) { return s.end <= runs.front().begin; });
    for (const ByteRun& run : runs) {
      int64_t cur = run.begin;
      while (it != segs.end() && it->end <= cur) ++it;
      while (cur < run.end) {
        const bool covered = it != segs.end() && it->begin <= cur;
        // an uncovered gap ends where the next segment (or the run) begins
        const int64_t end = covered            ? std::min(it->end, run.end)
                            : it != segs.end() ? std::min(it->begin, run.end)
                                               : run.end;
        if (visit(Piece{part, part_end, cur, end, covered ? it->stamp : 0u})) return;
        cur = end;
        if (covered && it->end <= run.end) ++it;
      }
      // The last segment may extend past this run into the next one.
      if (it != segs.begin() && std::prev(it)->end > run.end) --it;
    }
  }
}

std::optional<ShadowMap::Mismatch> ShadowMap::find_other(int64_t p0, int64_t p1,
                                                         const std::vector<ByteRun>& runs,
                                                         uint32_t stamp) const {
  std::optional<Mismatch> m;
  scan(p0, p1, runs, [&](const Piece& piece) {
    if (piece.stamp != stamp) m = Mismatch{piece.p0, piece.begin, piece.stamp};
    return m.has_value();
  });
  return m;
}

void ShadowMap::others(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs, uint32_t stamp,
                       std::vector<Mismatch>& out) const {
  scan(p0, p1, runs, [&](const Piece& piece) {
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const Mismatch& m) { return m.found == piece.stamp; });
    if (piece.stamp != stamp && !seen) out.push_back(Mismatch{piece.p0, piece.begin, piece.stamp});
    return false;
  });
}

void ShadowMap::for_each_piece(int64_t p0, int64_t p1, const std::vector<ByteRun>& runs,
                               const std::function<void(const Piece&)>& f) const {
  scan(p0, p1, runs, [&](const Piece& piece) {
    f(piece);
    return false;
  });
}

ShadowMap::Gaps ShadowMap::unwritten(int64_t p, int64_t n) const {
  Gaps g;
  int64_t cur = 0;
  for (const Segment& s : bands_[band_of(p)].segs) {
    if (s.begin >= n) break;
    if (s.begin > cur) {
      if (g.first < 0) g.first = cur;
      g.count += s.begin - cur;
    }
    cur = std::max(cur, s.end);
  }
  if (cur < n) {
    if (g.first < 0) g.first = cur;
    g.count += n - cur;
  }
  return g;
}

}  // namespace interp
}  // namespace ncv
