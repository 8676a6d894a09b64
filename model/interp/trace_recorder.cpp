#include "model/interp/trace_recorder.h"

#include <algorithm>

namespace ncv {
inline namespace interp {

void TraceRecorder::record(const InstrStmt& s, int core, Engine engine,
                           std::span<const int64_t> loop_values,
                           const std::vector<const Resolved*>& reads,
                           const std::vector<const Resolved*>& writes, const EventSizes& sizes) {
  if (!enabled_) return;
  TraceEvent ev;
  ev.instruction = s.id;
  ev.core = static_cast<uint16_t>(core);
  ev.engine = engine;
  ev.op = static_cast<uint8_t>(s.ins.index());
  ev.queue = static_cast<uint8_t>(sizes.queue);
  ev.partitions = static_cast<uint16_t>(std::min<int64_t>(sizes.partitions, 65535));
  ev.free_elems = sizes.free_elems;
  ev.stationary_cols = sizes.stationary_cols;
  ev.contiguous_bytes = sizes.contiguous_bytes;
  ev.bytes = sizes.bytes;
  ev.reduce_readout = sizes.reduce_readout;
  ev.in_dtype = sizes.in;
  ev.out_dtype = sizes.out;
  ev.region_begin = static_cast<uint32_t>(trace_.regions.size());
  for (const Resolved* r : reads) add_region(*r);
  for (const Resolved* r : writes) add_region(*r);
  ev.num_reads = static_cast<uint8_t>(reads.size());
  ev.num_writes = static_cast<uint8_t>(writes.size());
  ev.num_loop_values = static_cast<uint8_t>(loop_values.size());
  ev.loop_values_begin = loop_values_run(core, loop_values);
  trace_.events.push_back(ev);
}

uint32_t TraceRecorder::loop_values_run(int core, std::span<const int64_t> values) {
  if (last_run_.size() <= static_cast<size_t>(core))
    last_run_.resize(static_cast<size_t>(core) + 1);
  Run& last = last_run_[static_cast<size_t>(core)];
  const auto stored = trace_.loop_values.begin() + last.begin;
  if (values.size() <= last.size && std::equal(values.begin(), values.end(), stored)) {
    return last.begin;
  }
  last = {static_cast<uint32_t>(trace_.loop_values.size()), static_cast<uint32_t>(values.size())};
  trace_.loop_values.insert(trace_.loop_values.end(), values.begin(), values.end());
  return last.begin;
}

void TraceRecorder::add_region(const Resolved& r) {
  Region g;
  g.memory = r.memory;
  g.core = static_cast<uint16_t>(r.core);
  g.tensor = r.id;
  if (r.tensor->on_chip()) {
    g.partition_begin = static_cast<uint16_t>(r.partition_begin);
    g.partition_end = static_cast<uint16_t>(r.partition_begin + r.partitions);
  } else {
    g.partition_begin = 0;
    g.partition_end = 1;
  }
  g.byte_begin = static_cast<uint64_t>(r.byte_begin);
  g.byte_end = static_cast<uint64_t>(r.byte_end);
  g.iteration = static_cast<uint32_t>(r.scope_iteration);
  trace_.regions.push_back(g);
}

}  // namespace interp
}  // namespace ncv
