// Internal to the interpreter: access resolution. A symbolic Access becomes, for one instance, a
// concrete View and the physical region it covers, after the bounds checks: which core's memory
// (a peer's for on_core accesses), every dim's index range inside the tensor, the view's
// placement on chip or in HBM, the run-time offsets of an indirect dim (read and checked against
// their declared range), and the bytes the access covers (value runs).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/interp/machine.h"
#include "model/interp/resolved.h"
#include "model/interp/shadow_checks.h"

namespace ncv {
inline namespace interp {

class AccessResolver {
 public:
  explicit AccessResolver(Machine& m) : m_(m) {}

  // Throws CheckFailure (out_of_bounds, shape_rule, indirect_range, and the shadow checks of
  // the indirect offsets it reads, with `shadows` in value runs; `reader` is the executing
  // core's affine-iteration serial).
  // oob_skip (a DMA's oob_mode.skip): a row of an indirect dim whose offset leaves the tensor
  // is marked skipped (Resolved::skipped) instead of failing out_of_bounds.
  Resolved resolve(int core, const Access& a, const char* role, ShadowTracker* shadows,
                   uint32_t reader, bool oob_skip = false);
  // Marks rows of `r` skipped (the other side of a DMA that skips rows): they are neither read
  // nor written, and the bytes it covers leave them out.
  void skip_rows(Resolved& r, const std::vector<uint8_t>& skipped);

 private:
  // The bytes an HBM access covers, run by run, into r.runs (indirect rows, skipped rows).
  void collect_runs(Resolved& r);
  using Dims = std::array<int64_t, 1 + kMaxFreeDims>;
  struct DimRanges {
    Dims start{}, size{}, lo{}, hi{};  // per tensor dim: first index, size, least/greatest index
  };
  int resolve_core(int core, const Access& a, const Tensor& t, const char* role);
  DimRanges resolve_dims(int core, const Access& a, const Tensor& t, const char* role);
  void place_view(Resolved& r, const Access& a, const DimRanges& d, const char* role);
  void resolve_indirect(Resolved& r, int core, const Access& a, const DimRanges& d,
                        const char* role, ShadowTracker* shadows, uint32_t reader, bool oob_skip);
  void byte_runs(Resolved& r, const Access& a, const DimRanges& d);
  std::string flat_element(const Access& a, const DimRanges& d, int64_t v) const;

  Machine& m_;
};

}  // namespace interp
}  // namespace ncv
