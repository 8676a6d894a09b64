// Chrome trace-event JSON writer (chrome_trace.h). Hand-written JSON: model/ depends on the
// standard library only (model/README.md).
#include "model/timing/chrome_trace.h"

#include <cstdio>
#include <string>
#include <variant>

namespace ncv {
inline namespace timing {

namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string region_text(const Program& p, const Region& r) {
  const std::string name = r.tensor < p.tensors.size() ? p.tensor(r.tensor).name : "?";
  std::string s = name + " " + std::string(memory_name(r.memory));
  if (r.memory != Memory::HBM) {
    s += " p[" + std::to_string(r.partition_begin) + "," + std::to_string(r.partition_end) + ")";
  }
  return s + " b[" + std::to_string(r.byte_begin) + "," + std::to_string(r.byte_end) + ")";
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Program& p, const Trace& trace,
                        const Schedule& s) {
  std::vector<std::string_view> op_names(p.num_instructions);
  std::vector<const Loop*> loops;
  for_each_stmt(p.body, loops, [&](const std::vector<const Loop*>&, const Stmt& st) {
    if (auto* i = std::get_if<InstrStmt>(&st.node)) op_names.at(i->id) = op_name(i->ins);
  });
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const std::string& e) {
    out << (first ? "" : ",\n") << e;
    first = false;
  };
  for (size_t t = 0; t < s.tracks.size(); ++t) {
    const Track& tr = s.tracks[t];
    emit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(tr.core) +
         ", \"args\": {\"name\": " + quoted("core " + std::to_string(tr.core)) + "}}");
    emit("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + std::to_string(tr.core) +
         ", \"tid\": " + std::to_string(t) + ", \"args\": {\"name\": " + quoted(tr.name) + "}}");
  }
  for (size_t k = 0; k < trace.events.size(); ++k) {
    const TraceEvent& ev = trace.events[k];
    const TimedInstance& ti = s.instances.at(k);
    const Track& tr = s.tracks.at(static_cast<size_t>(ti.track));
    std::string args = "\"instruction\": " + std::to_string(ev.instruction);
    std::string reads, writes;
    for (int i = 0; i < ev.num_reads + ev.num_writes; ++i) {
      const Region& r = trace.regions.at(ev.region_begin + static_cast<uint32_t>(i));
      std::string& list = i < ev.num_reads ? reads : writes;
      list += (list.empty() ? "" : ", ") + quoted(region_text(p, r));
    }
    args += ", \"reads\": [" + reads + "], \"writes\": [" + writes + "]";
    args += ", \"partitions\": " + std::to_string(ev.partitions) +
            ", \"free_elements\": " + std::to_string(ev.free_elems);
    if (ev.engine == Engine::Dma) args += ", \"bytes\": " + std::to_string(ev.bytes);
    const std::string_view name = ev.instruction < op_names.size() ? op_names[ev.instruction] : "";
    emit("{\"ph\": \"X\", \"name\": " + quoted(name) + ", \"pid\": " + std::to_string(tr.core) +
         ", \"tid\": " + std::to_string(ti.track) + ", \"ts\": " + number(ti.start_ns / 1000.0) +
         ", \"dur\": " + number((ti.end_ns - ti.start_ns) / 1000.0) + ", \"args\": {" + args +
         "}}");
    if (ti.waited_for >= 0) {
      const TimedInstance& from = s.instances.at(static_cast<size_t>(ti.waited_for));
      if (from.track != ti.track) {
        const Track& ft = s.tracks.at(static_cast<size_t>(from.track));
        const std::string id = std::to_string(k);
        emit("{\"ph\": \"s\", \"name\": \"dependency\", \"cat\": \"dependency\", \"id\": " + id +
             ", \"pid\": " + std::to_string(ft.core) + ", \"tid\": " + std::to_string(from.track) +
             ", \"ts\": " + number((from.start_ns + from.end_ns) / 2000.0) + "}");
        emit(
            "{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"dependency\", \"cat\": \"dependency\", "
            "\"id\": " +
            id + ", \"pid\": " + std::to_string(tr.core) + ", \"tid\": " +
            std::to_string(ti.track) + ", \"ts\": " + number(ti.start_ns / 1000.0) + "}");
      }
    }
  }
  out << "\n]}\n";
}

}  // namespace timing
}  // namespace ncv
