#include "model/isa/check_kind.h"

#include <array>

namespace ncv {
inline namespace isa {

std::string_view check_kind_name(CheckKind k) {
  static constexpr std::array<std::string_view, 14> kNames = {
      "out_of_bounds",  "partition_rule",     "psum_bank",      "shape_rule",
      "engine_rule",    "uninitialized_read", "clobbered_read", "capacity",
      "indirect_range", "output_not_written", "value_range",    "carried_dependency",
      "well_formed",    "undefined_result"};
  return kNames.at(static_cast<size_t>(k));
}

}  // namespace isa
}  // namespace ncv
