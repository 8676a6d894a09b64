#include "model/interp/dynamic_error.h"

namespace ncv {
inline namespace interp {

void DynamicError::build_message() {
  // Built with append(): GCC 12 reports a false -Wrestrict on chained operator+ here.
  message.clear();
  message.append("dynamic check failed [").append(check_kind_name(kind));
  message.append("] in kernel '").append(kernel).append("'");
  if (instruction >= 0) {
    message.append(", instruction #").append(std::to_string(instruction));
    message.append(" `").append(instruction_text).append("`");
    if (source_line != 0) {
      message.append(" (");
      if (source_file.empty()) {
        message.append("line ");
      } else {
        message.append(source_file).append(":");
      }
      message.append(std::to_string(source_line)).append(")");
    }
  }
  if (core != 0) message.append(", core ").append(std::to_string(core));
  auto list = [this](const char* head, const std::vector<std::pair<std::string, int64_t>>& kv) {
    if (kv.empty()) return;
    message.append(head);
    for (size_t i = 0; i < kv.size(); ++i) {
      message.append(i ? ", " : " ").append(kv[i].first).append("=");
      message.append(std::to_string(kv[i].second));
    }
  };
  list(", at", loop_indices);
  list(", with", params);
  message.append(": ").append(detail);
}

}  // namespace interp
}  // namespace ncv
