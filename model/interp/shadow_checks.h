// Internal to the interpreter: the shadow checks of value runs. Each buffer lifetime (one entry
// into its scope on one core) and each HBM tensor gets a stamp, numbered in start order, and
// every execution of an affine loop gets iteration serials; two shadow maps per memory record
// which stamp and which iteration last wrote every byte. A read fails when a byte it reads was
// not written by the reader's own lifetime (uninitialized_read, or clobbered_read when another
// live buffer wrote it), or was written by another iteration of an affine loop enclosing both
// the write and the read (carried_dependency). model/interp/README.md states the rules. Under a
// ForeignReadSink a read of bytes its lifetime did not write is reported to the sink instead
// (interpreter.cpp decides from reruns whether it matters).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/interp/resolved.h"
#include "model/interp/shadow_map.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace interp {

// Told about reads of bytes the reader's lifetime did not write (ShadowTracker::set_sink), in
// place of the uninitialized_read / clobbered_read failure.
class ForeignReadSink {
 public:
  virtual ~ForeignReadSink() = default;
  // One read instance that found such bytes: the failure the strict model reports for it.
  virtual void foreign_read(CheckKind kind, const std::string& detail) = 0;
  // Partitions [p0, p1) x bytes [begin, end) of `r`'s memory (its core's SBUF or PSUM array, or
  // its HBM tensor's bytes) that the read found so; called after foreign_read, before the read.
  virtual void foreign_bytes(const Resolved& r, const ShadowMap::Piece& piece) = 0;
};

class ShadowTracker {
 public:
  // Maps for `grid` cores of `partitions` partitions each and for every HBM tensor of `p`, whose
  // sizes in bytes are `hbm_bytes` (by TensorId; 0 for buffers). Each HBM tensor gets a lifetime
  // (in TensorId order) and kernel inputs start written by it.
  ShadowTracker(const Program& p, int64_t grid, int64_t partitions,
                const std::vector<int64_t>& hbm_bytes);

  // Entering and leaving a buffer's scope on a core. A new lifetime writes nothing: its bytes
  // read as unwritten until it writes them.
  void begin_lifetime(int core, TensorId id);
  void end_lifetime(int core, TensorId id);

  // A new execution of an affine loop, and the serial of one of its iterations inside iteration
  // `parent` of the enclosing affine loop (0: none).
  uint32_t new_loop_instance() { return ++loop_instances_; }
  uint32_t new_iteration(uint32_t instance, int64_t iteration, uint32_t parent, const Loop* loop);

  // The read of `r` by an instance running in iteration serial `reader` (0: no affine loop).
  // `carried`: whether the read must not see another iteration's write (false for a matmul
  // accumulating into PSUM, the one carried dependency affine loops allow). Throws CheckFailure.
  // Without a sink, a byte the reader's lifetime did not write fails the read; with one, it is
  // reported there (the sink must outlive the tracker's reads).
  void check_read(const Resolved& r, const char* role, uint32_t reader, bool carried);
  void set_sink(ForeignReadSink* sink) { sink_ = sink; }
  void mark_written(const Resolved& r, uint32_t writer);

  // Bytes of [0, n) of HBM tensor t never written: their count and the first one.
  ShadowMap::Gaps unwritten_hbm(TensorId t, int64_t n) const {
    return hbm_[t].maps.stamps.unwritten(0, n);
  }

 private:
  struct Lifetime {
    TensorId tensor = 0;
    uint32_t ended_after = UINT32_MAX;  // the newest stamp when it ended; UINT32_MAX while open
  };
  struct AffineIteration {
    uint32_t instance = 0;
    int64_t iteration = 0;
    uint32_t parent = 0;
    const Loop* loop = nullptr;
  };
  struct Maps {
    ShadowMap stamps;   // which lifetime last wrote each byte
    ShadowMap writers;  // which affine iteration last wrote each byte (0: none)
  };
  struct CoreMaps {
    Maps sbuf, psum;
    std::vector<uint32_t> stamp;  // per tensor: the stamp of its current (or last) lifetime
  };
  struct HbmMaps {
    Maps maps;
    uint32_t stamp = 0;
  };

  uint32_t new_lifetime(TensorId id);
  uint32_t stamp_of(const Resolved& r) const;
  Maps& maps_of(const Resolved& r);
  // `only`: the pieces to look at (null: all of r's bytes).
  void check_carried(const Resolved& r, const char* role, uint32_t reader,
                     const std::vector<ShadowMap::Piece>* only);
  // The failure of a read of `r` that found byte `byte` of `partition` last written by `found`.
  std::pair<CheckKind, std::string> describe_read(const Resolved& r, const char* role,
                                                  int64_t partition, int64_t byte,
                                                  uint32_t found) const;

  const Program& p_;
  std::vector<CoreMaps> cores_;
  std::vector<HbmMaps> hbm_;                 // by TensorId (unused for buffers)
  std::vector<Lifetime> lifetimes_;          // by stamp; [0] = never written
  std::vector<AffineIteration> iterations_;  // by serial; [0] = none
  uint32_t loop_instances_ = 0;
  ForeignReadSink* sink_ = nullptr;
};

}  // namespace interp
}  // namespace ncv
