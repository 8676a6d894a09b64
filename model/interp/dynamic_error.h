// Typed failures of the interpreter's always-on dynamic checks. Each names the
// kernel, the instruction (text form) and, for a traced kernel, the source line that emitted it,
// the loop indices and the parameter values.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/isa/check_kind.h"

namespace ncv {
inline namespace interp {

struct DynamicError : std::exception {
  CheckKind kind = CheckKind::out_of_bounds;
  std::string kernel;
  int64_t instruction = -1;  // InstrStmt id, -1 when not tied to one instruction
  std::string instruction_text;
  // Where the instruction came from (Program::source_file, InstrStmt::source_line), printed as
  // `(kernel.py:42)` after its text so that a traced kernel's author finds the call; 0: unknown.
  std::string source_file;
  uint32_t source_line = 0;
  int core = 0;
  std::vector<std::pair<std::string, int64_t>> loop_indices;  // outermost first
  std::vector<std::pair<std::string, int64_t>> params;
  std::string detail;
  std::string message;  // the full one-paragraph message built from the fields above

  void build_message();
  const char* what() const noexcept override { return message.c_str(); }
};

}  // namespace interp
}  // namespace ncv
