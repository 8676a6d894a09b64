// The per-instruction table (instruction_table.h).
#include "model/timing/instruction_table.h"

#include <algorithm>
#include <map>

#include "model/hw/engine.h"
#include "model/ir/printer.h"

namespace ncv {
inline namespace timing {

namespace {

constexpr size_t kMaxText = 60;  // a table column, not the whole instruction

}  // namespace

std::string short_instruction_text(const Program& p, uint32_t id, const Instruction& ins) {
  const std::string head = "#" + std::to_string(id) + " ";
  std::string full = print_instruction(p, ins);
  if (head.size() + full.size() <= kMaxText) return head + full;
  // Too long for a column: the op and what it writes name it well enough.
  std::string out = head + std::string(op_name(ins));
  const char* sep = " -> ";
  for (const Access* a : written_accesses(ins)) {
    out += sep + p.tensor(a->tensor).name;
    sep = ", ";
  }
  if (out.size() > kMaxText) out = out.substr(0, kMaxText - 3) + "...";
  return out;
}

std::vector<InstructionRow> instruction_table(const Program& p, const Trace& trace,
                                              const Schedule& s, const CriticalPath& cp) {
  std::vector<const Instruction*> by_id(p.num_instructions, nullptr);
  std::vector<const Loop*> loops;
  for_each_stmt(p.body, loops, [&](const std::vector<const Loop*>&, const Stmt& st) {
    if (auto* i = std::get_if<InstrStmt>(&st.node)) by_id.at(i->id) = &i->ins;
  });
  std::map<uint32_t, InstructionRow> rows;
  double total_busy = 0;
  for (size_t k = 0; k < trace.events.size(); ++k) {
    const TraceEvent& ev = trace.events[k];
    const TimedInstance& ti = s.instances.at(k);
    auto [it, fresh] = rows.try_emplace(ev.instruction);
    InstructionRow& r = it->second;
    const std::string engine(engine_name(ev.engine));
    if (fresh) {
      r.id = ev.instruction;
      r.engine = engine;
    } else if (r.engine != engine) {
      r.engine = "mixed";  // an unpinned instruction the compiler put on several engines
    }
    r.instances++;
    r.busy_ns += ti.end_ns - ti.start_ns;
    total_busy += ti.end_ns - ti.start_ns;
  }
  std::vector<InstructionRow> out;
  for (auto& [id, r] : rows) {
    r.text = short_instruction_text(p, id, *by_id.at(id));
    if (total_busy > 0) r.busy_percent = 100.0 * r.busy_ns / total_busy;
    auto c = cp.instruction_ns.find(id);
    if (c != cp.instruction_ns.end()) r.critical_ns = c->second;
    if (s.makespan_ns > 0) r.critical_percent = 100.0 * r.critical_ns / s.makespan_ns;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const InstructionRow& a, const InstructionRow& b) {
    if (a.critical_ns != b.critical_ns) return a.critical_ns > b.critical_ns;
    return a.busy_ns > b.busy_ns;
  });
  return out;
}

}  // namespace timing
}  // namespace ncv
