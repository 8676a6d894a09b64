#include "model/dynamic_error.h"

#include <array>

namespace ncv {

std::string_view check_kind_name(CheckKind k) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "out_of_bounds",      "partition_rule", "psum_bank",     "shape_rule",
      "engine_rule",        "uninitialized_read", "clobbered_read", "capacity",
      "indirect_range",     "output_not_written", "value_range"};
  return kNames.at(static_cast<size_t>(k));
}

void DynamicError::build_message() {
  message = "dynamic check failed [" + std::string(check_kind_name(kind)) + "] in kernel '" +
            kernel + "'";
  if (instruction >= 0) {
    message += ", instruction #" + std::to_string(instruction) + " `" + instruction_text + "`";
  }
  if (core != 0) message += ", core " + std::to_string(core);
  if (!loop_indices.empty()) {
    message += ", at";
    for (size_t i = 0; i < loop_indices.size(); ++i) {
      message += (i ? ", " : " ") + loop_indices[i].first + "=" +
                 std::to_string(loop_indices[i].second);
    }
  }
  if (!params.empty()) {
    message += ", with";
    for (size_t i = 0; i < params.size(); ++i) {
      message += (i ? ", " : " ") + params[i].first + "=" + std::to_string(params[i].second);
    }
  }
  message += ": " + detail;
}

}  // namespace ncv
