// What bounds a benched kernel, as `bench` prints it: the DMA time, the critical path (which engine
// or DMA queue bounds the kernel and for how long) and the instructions that dominate it, as text
// and JSON (model/timing/critical_path.h, instruction_table.h).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "model/timing/critical_path.h"
#include "model/timing/instruction_table.h"
#include "model/timing/profile.h"

namespace ncv::cli {

struct BenchBounds {
  std::vector<std::string> track_names;  // Schedule::tracks' names, by track index
  DmaTime dma;
  CriticalPath path;
  std::vector<InstructionRow> instructions;  // instruction_table order
  // The track bounding the kernel, or "-" for an empty run.
  std::string bounded_by() const;
};

BenchBounds bench_bounds(const Program& p, const Trace& trace, const Schedule& s,
                         const CostTable& costs);

// "dma_time: ...", "critical path: ...", a line per track on the path and per kind of wait, then
// "dominating instructions:" (the top 5 by critical-path time); with by_instruction the whole
// per-instruction table.
void print_bench_bounds(std::ostream& out, const BenchBounds& b, bool by_instruction);

// Adds "dma_time_us", "dma_span_us", "critical_path" {bounded_by, makespan_us, segments[],
// waits_ns, dma_latency_ns, gaps_ns}, "dominating_instructions" and, with by_instruction,
// "instructions" to j.
void add_bench_bounds_json(nlohmann::json& j, const BenchBounds& b, bool by_instruction);

}  // namespace ncv::cli
