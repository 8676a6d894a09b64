#include "model/interp/shadow_checks.h"

#include <optional>
#include <string>

#include "model/interp/interpreter.h"

namespace ncv {
inline namespace interp {

namespace {

// Calls f(p0, p1, runs) for the byte runs of `r` in partitions [p0, p1): once for the whole
// access, or once per row when indirect offsets shift each row or a DMA skips some rows (HBM
// runs already leave skipped rows out: resolve.cpp).
template <class F>
void for_each_row_runs(const Resolved& r, F&& f) {
  const int64_t p0 = r.tensor->on_chip() ? r.partition_begin : 0;
  if (!r.tensor->on_chip() || (r.row_offsets.empty() && r.skipped.empty())) {
    f(p0, r.tensor->on_chip() ? p0 + r.partitions : 1, r.runs);
    return;
  }
  std::vector<ByteRun> shifted;
  for (int64_t row = 0; row < r.view.rows; ++row) {
    if (!r.skipped.empty() && r.skipped[row]) continue;
    shifted = r.runs;
    const int64_t off = r.row_offsets.empty() ? 0 : r.row_offsets[row];
    for (ByteRun& b : shifted) b = {b.begin + off, b.end + off};
    f(p0 + row, p0 + row + 1, shifted);
  }
}

}  // namespace

ShadowTracker::ShadowTracker(const Program& p, int64_t grid, int64_t partitions,
                             const std::vector<int64_t>& hbm_bytes)
    : p_(p) {
  cores_.resize(static_cast<size_t>(grid));
  for (CoreMaps& c : cores_) {
    c.sbuf = {ShadowMap(partitions), ShadowMap(partitions)};
    c.psum = {ShadowMap(partitions), ShadowMap(partitions)};
    c.stamp.assign(p.tensors.size(), 0);
  }
  hbm_.resize(p.tensors.size());
  lifetimes_.assign(1, Lifetime{});
  iterations_.assign(1, AffineIteration{});
  for (const Tensor& t : p.tensors) {
    if (t.on_chip()) continue;
    HbmMaps& h = hbm_[t.id];
    h.stamp = new_lifetime(t.id);
    const int64_t n = hbm_bytes[t.id];
    if (t.kind == TensorKind::Input && n > 0) h.maps.stamps.write(0, 1, {{0, n}}, h.stamp);
  }
}

uint32_t ShadowTracker::new_lifetime(TensorId id) {
  if (lifetimes_.size() >= UINT32_MAX - 1) {
    throw InputError("kernel '" + p_.name + "' opens more than 2^32 buffer lifetimes");
  }
  lifetimes_.push_back(Lifetime{id, UINT32_MAX});
  return static_cast<uint32_t>(lifetimes_.size() - 1);
}

void ShadowTracker::begin_lifetime(int core, TensorId id) {
  cores_[static_cast<size_t>(core)].stamp[id] = new_lifetime(id);
}

void ShadowTracker::end_lifetime(int core, TensorId id) {
  const uint32_t s = cores_[static_cast<size_t>(core)].stamp[id];
  if (s != 0) lifetimes_[s].ended_after = static_cast<uint32_t>(lifetimes_.size() - 1);
}

uint32_t ShadowTracker::new_iteration(uint32_t instance, int64_t iteration, uint32_t parent,
                                      const Loop* loop) {
  if (iterations_.size() >= UINT32_MAX - 1) {
    throw InputError("kernel '" + p_.name + "' runs more than 2^32 affine-loop iterations");
  }
  iterations_.push_back(AffineIteration{instance, iteration, parent, loop});
  return static_cast<uint32_t>(iterations_.size() - 1);
}

uint32_t ShadowTracker::stamp_of(const Resolved& r) const {
  return r.tensor->on_chip() ? cores_[static_cast<size_t>(r.core)].stamp[r.id] : hbm_[r.id].stamp;
}

ShadowTracker::Maps& ShadowTracker::maps_of(const Resolved& r) {
  if (!r.tensor->on_chip()) return hbm_[r.id].maps;
  CoreMaps& c = cores_[static_cast<size_t>(r.core)];
  return r.memory == Memory::SBUF ? c.sbuf : c.psum;
}

void ShadowTracker::check_read(const Resolved& r, const char* role, uint32_t reader, bool carried) {
  const ShadowMap& map = maps_of(r).stamps;
  const uint32_t want = stamp_of(r);
  std::optional<ShadowMap::Mismatch> first;
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    if (!first) first = map.find_other(p0, p1, runs, want);
  });
  if (!first) {  // the common case: every byte was written by this lifetime
    if (carried) check_carried(r, role, reader, nullptr);
    return;
  }
  if (!sink_) {
    auto [kind, detail] = describe_read(r, role, first->partition, first->byte, first->found);
    fail_check(kind, detail);
  }
  // Under a sink the read goes on: the bytes it did not write go to the sink, and the carried-
  // dependency check looks only at the bytes this lifetime wrote (the others are stale, whatever
  // iteration wrote them last).
  bool reported = false;
  std::vector<ShadowMap::Piece> own;
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    map.for_each_piece(p0, p1, runs, [&](const ShadowMap::Piece& piece) {
      if (piece.stamp == want) {
        own.push_back(piece);
        return;
      }
      if (!reported) {
        reported = true;
        auto [kind, detail] = describe_read(r, role, piece.p0, piece.begin, piece.stamp);
        sink_->foreign_read(kind, detail);
      }
      sink_->foreign_bytes(r, piece);
    });
  });
  if (carried) check_carried(r, role, reader, &own);
}

void ShadowTracker::mark_written(const Resolved& r, uint32_t writer) {
  Maps& maps = maps_of(r);
  const uint32_t s = stamp_of(r);
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    maps.stamps.write(p0, p1, runs, s);
    maps.writers.write(p0, p1, runs, writer);
  });
}

// A byte of the read was last written by stamp `found` (0 = never), not by the reader's own
// lifetime. It is a clobber when another buffer wrote it while the reader's lifetime was open,
// or when that other buffer's lifetime was still open when the reader's began (on hardware a new
// lifetime writes nothing, so those bytes still hold the other buffer's data); otherwise the
// reader never wrote it in this lifetime.
std::pair<CheckKind, std::string> ShadowTracker::describe_read(const Resolved& r, const char* role,
                                                               int64_t partition, int64_t byte,
                                                               uint32_t found) const {
  if (!r.tensor->on_chip()) {
    const int64_t dsize = static_cast<int64_t>(dtype_size(r.tensor->dtype));
    return {CheckKind::uninitialized_read,
            std::string(role) + " reads HBM tensor '" + r.tensor->name + "' at flat element " +
                std::to_string(byte / dsize) + " before anything wrote it"};
  }
  const uint32_t mine = stamp_of(r);
  const bool foreign = found != 0 && lifetimes_[found].tensor != r.id;
  const bool clobbered = foreign && (found > mine || lifetimes_[found].ended_after >= mine);
  std::string where = " at " + std::string(memory_name(r.memory)) + " partition " +
                      std::to_string(partition) + ", byte " + std::to_string(byte);
  if (!clobbered) {
    return {CheckKind::uninitialized_read, std::string(role) + " reads '" + r.tensor->name + "'" +
                                               where +
                                               " before anything wrote it in this lifetime"};
  }
  return {CheckKind::clobbered_read, std::string(role) + " reads '" + r.tensor->name + "'" + where +
                                         ", but those bytes were last written by '" +
                                         p_.tensor(lifetimes_[found].tensor).name +
                                         "': the two buffers overlap while both are live"};
}

// The reader runs in iteration serial `reader`; every byte it reads was last written in some
// iteration serial. Both serials name a chain of nested affine-loop iterations; if one loop
// instance appears in both chains with different iterations, the read depends on another
// iteration of a loop whose iterations may run in any order or overlap (affine_range with a
// true dependency can give wrong numerics; docs/ARCHITECTURE.md).
void ShadowTracker::check_carried(const Resolved& r, const char* role, uint32_t reader,
                                  const std::vector<ShadowMap::Piece>* only) {
  if (reader == 0) return;
  const ShadowMap& map = maps_of(r).writers;
  std::vector<ShadowMap::Mismatch> others;
  auto collect = [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    if (map.find_other(p0, p1, runs, reader)) map.others(p0, p1, runs, reader, others);
  };
  if (only) {
    for (const ShadowMap::Piece& piece : *only) {
      collect(piece.p0, piece.p1, {ByteRun{piece.begin, piece.end}});
    }
  } else {
    for_each_row_runs(r, collect);
  }
  for (const ShadowMap::Mismatch& m : others) {
    for (uint32_t w = m.found; w != 0; w = iterations_[w].parent) {
      for (uint32_t c = reader; c != 0; c = iterations_[c].parent) {
        const AffineIteration &wi = iterations_[w], &ci = iterations_[c];
        if (wi.instance != ci.instance || wi.iteration == ci.iteration) continue;
        const std::string where = r.tensor->on_chip()
                                      ? std::string(memory_name(r.memory)) + " partition " +
                                            std::to_string(m.partition) + ", byte " +
                                            std::to_string(m.byte)
                                      : "byte " + std::to_string(m.byte);
        fail_check(CheckKind::carried_dependency,
                   std::string(role) + " reads '" + r.tensor->name + "' at " + where +
                       ", written by iteration " + std::to_string(wi.iteration) +
                       " of affine loop '" + wi.loop->var + "' while running its iteration " +
                       std::to_string(ci.iteration) +
                       ": affine iterations may run in any order or overlap, so this carried "
                       "dependency needs a sequential loop");
      }
    }
  }
}

}  // namespace interp
}  // namespace ncv
