// The kinds of rule a kernel can break: what the interpreter's dynamic checks raise
// (interp/dynamic_error.h) and what a solver counterexample must replay as. The ISA rules
// (rules.h) name the kind each of them raises.
#pragma once

#include <cstdint>
#include <string_view>

namespace ncv {
inline namespace isa {

enum class CheckKind : uint8_t {
  out_of_bounds,       // an index outside its tensor
  partition_rule,      // > 128 partitions, start-partition alignment, partition count mismatch
  psum_bank,           // a PSUM tile that crosses a 2 KiB bank
  shape_rule,          // operand shapes that do not fit the instruction (matmul K/M/N, ...)
  engine_rule,         // generation-specific engine/dtype rules (e.g. tensor_copy on ScalarE v2)
  uninitialized_read,  // reading bytes nothing wrote since the buffer's lifetime began
  clobbered_read,      // reading bytes another live tensor overwrote (overlapping placements)
  capacity,            // SBUF/PSUM allocation beyond the generation's capacity
  indirect_range,      // an indirect offset outside its declared range
  output_not_written,  // kernel output elements never written
  value_range,         // an integer input outside its declared value range
  carried_dependency,  // an affine-loop iteration reads what another iteration of it wrote
  well_formed,  // a shape, size, loop range, grid or placement that cannot be evaluated at these
                // params: a dimension < 1, arithmetic beyond int64, a negative trip count
  undefined_result,  // values for which the ISA documents no result (nc_find_index8 or
                     // nc_match_replace8 asked for a value the data does not hold)
};

std::string_view check_kind_name(CheckKind k);

}  // namespace isa
}  // namespace ncv
