// Profile summary (profile.h).
#include "model/timing/profile.h"

#include <algorithm>
#include <variant>

namespace ncv {
inline namespace timing {

namespace {

int64_t region_bytes(const Region& r) {
  const int64_t parts = std::max<int64_t>(r.partition_end - r.partition_begin, 1);
  return parts * static_cast<int64_t>(r.byte_end - r.byte_begin);
}

void add_engine(EngineProfile& e, const TimedInstance& ti) {
  e.instruction_count++;
  e.instruction_time_ns += ti.end_ns - ti.start_ns;
}

}  // namespace

ProfileSummary summarize(const Program& p, const Trace& trace, const Schedule& s,
                         const CostTable& costs) {
  ProfileSummary out;
  out.total_time_ns = s.makespan_ns;
  std::vector<const Instruction*> by_id(p.num_instructions, nullptr);
  std::vector<const Loop*> loops;
  for_each_stmt(p.body, loops, [&](const std::vector<const Loop*>&, const Stmt& st) {
    if (auto* i = std::get_if<InstrStmt>(&st.node)) by_id.at(i->id) = &i->ins;
  });
  double macs = 0;
  int64_t dma_bytes = 0;
  for (size_t k = 0; k < trace.events.size(); ++k) {
    const TraceEvent& ev = trace.events[k];
    const TimedInstance& ti = s.instances.at(k);
    switch (ev.engine) {
      case Engine::Tensor:
        add_engine(out.tensor, ti);
        if (std::holds_alternative<Matmul>(*by_id.at(ev.instruction))) {
          out.matmul_instruction_count++;
          macs += static_cast<double>(ev.partitions) * static_cast<double>(ev.free_elems) *
                  static_cast<double>(ev.stationary_cols);
        } else if (std::holds_alternative<MatmulMx>(*by_id.at(ev.instruction))) {
          // Four multiply-accumulates per packed element pair (the MX deep dive).
          out.matmul_instruction_count++;
          macs += 4.0 * static_cast<double>(ev.partitions) * static_cast<double>(ev.free_elems) *
                  static_cast<double>(ev.stationary_cols);
        }
        break;
      case Engine::Vector:
        add_engine(out.vector, ti);
        break;
      case Engine::Scalar:
        add_engine(out.scalar, ti);
        break;
      case Engine::GpSimd:
        add_engine(out.gpsimd, ti);
        break;
      case Engine::Dma:
        out.dma_transfer_count++;
        dma_bytes += static_cast<int64_t>(ev.bytes);
        break;
    }
    for (int i = 0; i < ev.num_reads + ev.num_writes; ++i) {
      const Region& r = trace.regions.at(ev.region_begin + static_cast<uint32_t>(i));
      const bool write = i >= ev.num_reads;
      // A DMA moves exactly ev.bytes on each side; other regions count their bounding box.
      const int64_t b = ev.engine == Engine::Dma ? static_cast<int64_t>(ev.bytes) : region_bytes(r);
      switch (r.memory) {
        case Memory::SBUF:
          (write ? out.sbuf_write_bytes : out.sbuf_read_bytes) += b;
          break;
        case Memory::PSUM:
          (write ? out.psum_write_bytes : out.psum_read_bytes) += b;
          break;
        case Memory::HBM:
          (write ? out.hbm_write_bytes : out.hbm_read_bytes) += b;
          break;
      }
    }
  }
  if (out.dma_transfer_count > 0) {
    out.dma_transfer_average_bytes =
        static_cast<double>(dma_bytes) / static_cast<double>(out.dma_transfer_count);
  }
  for (EngineProfile* e : {&out.tensor, &out.vector, &out.scalar, &out.gpsimd}) {
    if (s.makespan_ns > 0) e->active_time_percent = 100.0 * e->instruction_time_ns / s.makespan_ns;
  }
  // Busy time is per engine; with several cores the engines of all cores are summed, so the
  // percentages are per core on average.
  int cores = 1;
  for (const Track& t : s.tracks) cores = std::max(cores, t.core + 1);
  for (EngineProfile* e : {&out.tensor, &out.vector, &out.scalar, &out.gpsimd}) {
    e->active_time_percent /= cores;
  }
  const double peak_flops_per_ns = 128.0 * 128.0 * 2.0 * costs.hw->tensor_ghz * cores;
  if (s.makespan_ns > 0) {
    out.mfu_estimated_percent = 100.0 * (2.0 * macs) / (s.makespan_ns * peak_flops_per_ns);
  }
  return out;
}

DmaTime dma_time(const Trace& trace, const Schedule& s) {
  DmaTime out;
  std::vector<std::pair<double, double>> busy;
  for (size_t k = 0; k < trace.events.size(); ++k) {
    if (trace.events[k].engine != Engine::Dma) continue;
    const TimedInstance& ti = s.instances.at(k);
    out.busy_ns += ti.end_ns - ti.start_ns;
    busy.emplace_back(ti.start_ns, ti.end_ns);
  }
  // The union of the intervals.
  std::sort(busy.begin(), busy.end());
  double covered_to = -1;
  for (const auto& [b, e] : busy) {
    const double from = std::max(b, covered_to);
    if (e > from) {
      out.span_ns += e - from;
      covered_to = e;
    }
  }
  return out;
}

std::vector<std::pair<std::string, double>> ProfileSummary::fields() const {
  std::vector<std::pair<std::string, double>> f;
  f.emplace_back("total_time", total_time_ns / 1000.0);  // us, as neuron-profile prints it
  const std::pair<const char*, const EngineProfile*> engines[] = {
      {"tensor", &tensor}, {"vector", &vector}, {"scalar", &scalar}, {"gpsimd", &gpsimd}};
  for (const auto& [name, e] : engines) {
    const std::string n(name);
    f.emplace_back(n + "_engine_instruction_count", static_cast<double>(e->instruction_count));
    f.emplace_back(n + "_engine_instruction_time", e->instruction_time_ns / 1000.0);
    f.emplace_back(n + "_engine_active_time_percent", e->active_time_percent);
  }
  f.emplace_back("matmul_instruction_count", static_cast<double>(matmul_instruction_count));
  f.emplace_back("sbuf_read_bytes", static_cast<double>(sbuf_read_bytes));
  f.emplace_back("sbuf_write_bytes", static_cast<double>(sbuf_write_bytes));
  f.emplace_back("psum_read_bytes", static_cast<double>(psum_read_bytes));
  f.emplace_back("psum_write_bytes", static_cast<double>(psum_write_bytes));
  f.emplace_back("hbm_read_bytes", static_cast<double>(hbm_read_bytes));
  f.emplace_back("hbm_write_bytes", static_cast<double>(hbm_write_bytes));
  f.emplace_back("dma_transfer_count", static_cast<double>(dma_transfer_count));
  f.emplace_back("dma_transfer_average_bytes", dma_transfer_average_bytes);
  f.emplace_back("mfu_estimated_percent", mfu_estimated_percent);
  return f;
}

}  // namespace timing
}  // namespace ncv
