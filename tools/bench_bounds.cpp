// What bounds a benched kernel (bench_bounds.h).
#include "tools/bench_bounds.h"

#include <algorithm>
#include <iomanip>

namespace ncv::cli {

namespace {

constexpr size_t kDominating = 5;  // instructions named under "dominating instructions:"

double us(double ns) {
  return ns / 1000.0;
}

double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

nlohmann::json row_json(const InstructionRow& r) {
  return {{"id", r.id},
          {"text", r.text},
          {"engine", r.engine},
          {"instances", r.instances},
          {"busy_us", us(r.busy_ns)},
          {"busy_percent", r.busy_percent},
          {"critical_us", us(r.critical_ns)},
          {"critical_percent", r.critical_percent}};
}

void print_table(std::ostream& out, const std::vector<InstructionRow>& rows, size_t n) {
  out << "  " << std::left << std::setw(62) << "instruction" << std::setw(8) << "engine"
      << std::right << std::setw(12) << "critical_us" << std::setw(8) << "crit_%" << std::setw(12)
      << "busy_us" << std::setw(8) << "busy_%" << std::setw(10) << "instances"
      << "\n";
  for (size_t i = 0; i < std::min(n, rows.size()); ++i) {
    const InstructionRow& r = rows[i];
    out << "  " << std::left << std::setw(62) << r.text << std::setw(8) << r.engine << std::right
        << std::fixed << std::setprecision(2) << std::setw(12) << us(r.critical_ns)
        << std::setprecision(1) << std::setw(8) << r.critical_percent << std::setprecision(2)
        << std::setw(12) << us(r.busy_ns) << std::setprecision(1) << std::setw(8) << r.busy_percent
        << std::setw(10) << r.instances << "\n";
  }
}

}  // namespace

std::string BenchBounds::bounded_by() const {
  return path.bounded_by >= 0 ? track_names.at(static_cast<size_t>(path.bounded_by)) : "-";
}

BenchBounds bench_bounds(const Program& p, const Trace& trace, const Schedule& s,
                         const CostTable& costs) {
  BenchBounds b;
  for (const Track& t : s.tracks) b.track_names.push_back(t.name);
  b.dma = dma_time(trace, s);
  b.path = critical_path(trace, s, costs);
  b.instructions = instruction_table(p, trace, s, b.path);
  return b;
}

void print_bench_bounds(std::ostream& out, const BenchBounds& b, bool by_instruction) {
  const double total = b.path.makespan_ns;
  out << std::fixed << std::setprecision(2) << "dma_time: " << us(b.dma.busy_ns)
      << " us busy (summed over queues), " << us(b.dma.span_ns) << " us with any queue busy\n";
  out << "critical path: " << us(total) << " us, bounded by " << b.bounded_by() << " ("
      << us(b.path.bounded_ns()) << " us, " << std::setprecision(1)
      << pct(b.path.bounded_ns(), total) << "%)\n";
  auto line = [&](const std::string& what, double ns, const std::string& note) {
    out << "  " << std::left << std::setw(20) << what << std::right << std::setprecision(2)
        << std::setw(12) << us(ns) << " us" << std::setprecision(1) << std::setw(7)
        << pct(ns, total) << "%" << note << "\n";
  };
  for (const PathSegment& seg : b.path.segments) {
    line(b.track_names.at(static_cast<size_t>(seg.track)), seg.ns,
         "  (" + std::to_string(seg.instances) +
             (seg.instances == 1 ? " instance)" : " instances)"));
  }
  line("semaphore waits", b.path.waits_ns, "");
  line("dma fixed latency", b.path.dma_latency_ns, "");
  line("gaps", b.path.gaps_ns, "");
  out << "dominating instructions:\n";
  print_table(out, b.instructions, kDominating);
  if (by_instruction) {
    out << "by instruction (critical-path time, then busy time):\n";
    print_table(out, b.instructions, b.instructions.size());
  }
}

void add_bench_bounds_json(nlohmann::json& j, const BenchBounds& b, bool by_instruction) {
  j["dma_time_us"] = us(b.dma.busy_ns);
  j["dma_span_us"] = us(b.dma.span_ns);
  nlohmann::json segments = nlohmann::json::array();
  for (const PathSegment& seg : b.path.segments) {
    segments.push_back({{"track", b.track_names.at(static_cast<size_t>(seg.track))},
                        {"ns", seg.ns},
                        {"instances", seg.instances},
                        {"percent", pct(seg.ns, b.path.makespan_ns)}});
  }
  j["critical_path"] = {{"bounded_by", b.bounded_by()},
                        {"makespan_us", us(b.path.makespan_ns)},
                        {"segments", segments},
                        {"waits_ns", b.path.waits_ns},
                        {"dma_latency_ns", b.path.dma_latency_ns},
                        {"gaps_ns", b.path.gaps_ns}};
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < std::min(kDominating, b.instructions.size()); ++i) {
    top.push_back(row_json(b.instructions[i]));
  }
  j["dominating_instructions"] = top;
  if (by_instruction) {
    nlohmann::json all = nlohmann::json::array();
    for (const InstructionRow& r : b.instructions) all.push_back(row_json(r));
    j["instructions"] = all;
  }
}

}  // namespace ncv::cli
