// Typed failures of the interpreter's always-on dynamic checks (DESIGN.md §3). Each names the
// kernel, the instruction (text form), the loop indices and the parameter values.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ncv {

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
};

std::string_view check_kind_name(CheckKind k);

struct DynamicError : std::exception {
  CheckKind kind = CheckKind::out_of_bounds;
  std::string kernel;
  int64_t instruction = -1;  // InstrStmt id, -1 when not tied to one instruction
  std::string instruction_text;
  int core = 0;
  std::vector<std::pair<std::string, int64_t>> loop_indices;  // outermost first
  std::vector<std::pair<std::string, int64_t>> params;
  std::string detail;
  std::string message;  // the full one-paragraph message built from the fields above

  void build_message();
  const char* what() const noexcept override { return message.c_str(); }
};

}  // namespace ncv
