// Per static instruction (InstrStmt id): where its instances ran, how long they kept their engine
// busy and how much of the critical path they are. `ncverify bench --by-instruction` prints it;
// its top rows by critical-path time are the instructions that dominate the kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/timing/critical_path.h"

namespace ncv {
inline namespace timing {

struct InstructionRow {
  uint32_t id = 0;
  std::string text;    // "#id " + the instruction's text form, shortened to ~60 characters
  std::string engine;  // "tensor", ..., "dma"; "mixed" if its instances ran on several
  int64_t instances = 0;
  double busy_ns = 0;           // sum of its instances' durations
  double busy_percent = 0;      // of all instances' busy time
  double critical_ns = 0;       // its instances' time on the critical path
  double critical_percent = 0;  // of the makespan
};

// Instructions that ran at least once, by critical-path time, then busy time, then id.
std::vector<InstructionRow> instruction_table(const Program& p, const Trace& trace,
                                              const Schedule& s, const CriticalPath& cp);

// The text of one instruction for a table: its text form when short enough, else its op name and
// the tensors it writes.
std::string short_instruction_text(const Program& p, uint32_t id, const Instruction& ins);

}  // namespace timing
}  // namespace ncv
