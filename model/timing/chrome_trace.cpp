// Chrome trace-event JSON writer (chrome_trace.h). Hand-written JSON: model/ depends on the
// standard library only (model/README.md).
#include "model/timing/chrome_trace.h"

#include <algorithm>
#include <cmath>
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

// Times are printed in ticks of 0.1 ns (µs with four decimals). Every printed time goes through
// ticks(), and a duration is the difference of its rounded ends: rounding is monotone, so slices
// that do not overlap in the schedule do not overlap as printed (rounding start and duration
// apart could end a slice a tick after the next one starts).
int64_t ticks(double ns) {
  return std::llround(ns * 10.0);
}

std::string micros(int64_t t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%lld.%04lld", t < 0 ? "-" : "",
                static_cast<long long>(std::llabs(t) / 10000),
                static_cast<long long>(std::llabs(t) % 10000));
  return buf;
}

// A track's place within its core, which is also its tid: the compute engines in Engine order
// (tensor, vector, scalar, gpsimd), then the DMA queues in queue order. Fixed, so the same
// kernel's tracks line up the same way in every trace whatever ran first.
int track_position(const Track& t) {
  return t.engine == Engine::Dma ? static_cast<int>(Engine::Dma) + t.queue
                                 : static_cast<int>(t.engine);
}

std::string region_text(const Program& p, const Region& r) {
  const std::string name = r.tensor < p.tensors.size() ? p.tensor(r.tensor).name : "?";
  std::string s = name + " " + std::string(memory_name(r.memory));
  if (r.memory != Memory::HBM) {
    s += " p[" + std::to_string(r.partition_begin) + "," + std::to_string(r.partition_end) + ")";
  }
  return s + " b[" + std::to_string(r.byte_begin) + "," + std::to_string(r.byte_end) + ")";
}

// Per instruction: its op name and the variables of its enclosing loops, outermost first.
struct InstrNames {
  std::string_view op;
  std::vector<std::string_view> loop_vars;
  // "kernel.py:42" for a traced NKI kernel's instruction (InstrStmt::source_line), else empty.
  std::string source;
};

std::vector<InstrNames> instruction_names(const Program& p) {
  std::vector<InstrNames> names(p.num_instructions);
  for_each_stmt(p, [&](const std::vector<const Loop*>& loops, const Stmt& st) {
    if (auto* i = std::get_if<InstrStmt>(&st.node)) {
      InstrNames& n = names.at(i->id);
      n.op = op_name(i->ins);
      for (const Loop* l : loops) n.loop_vars.push_back(l->var);
      if (i->source_line.value != 0) {
        const std::string& file = p.source_file.value;
        n.source = (file.empty() ? std::string("line ") : file + ":") +
                   std::to_string(i->source_line.value);
      }
    }
  });
  return names;
}

// The slice name "op [i=3, j=5]" (then " kernel.py:42" for a traced kernel) and its args entries
// "loop": {"i": 3, "j": 5} and "source": "kernel.py:42".
void name_with_loops(const InstrNames* n, const Trace& trace, const TraceEvent& ev,
                     std::string& name, std::string& loop_arg) {
  name = n ? std::string(n->op) : std::string();
  const size_t count = n ? std::min<size_t>(ev.num_loop_values, n->loop_vars.size()) : 0;
  if (n != nullptr && !n->source.empty()) {
    loop_arg += ", \"source\": " + quoted(n->source);
  }
  auto add_source = [&] {
    if (n != nullptr && !n->source.empty()) name += " " + n->source;
  };
  if (count == 0) {
    add_source();
    return;
  }
  std::string list, object;
  for (size_t k = 0; k < count; ++k) {
    const std::string value = std::to_string(trace.loop_values.at(ev.loop_values_begin + k));
    const std::string_view var = n->loop_vars[k];
    list += (k ? ", " : "") + std::string(var) + "=" + value;
    object += (k ? ", " : "") + quoted(var) + ": " + value;
  }
  name += " [" + list + "]";
  add_source();
  loop_arg += ", \"loop\": {" + object + "}";
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Program& p, const Trace& trace,
                        const Schedule& s) {
  const std::vector<InstrNames> names = instruction_names(p);
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const std::string& e) {
    out << (first ? "" : ",\n") << e;
    first = false;
  };
  auto tid = [&](int track) {
    return std::to_string(track_position(s.tracks.at(static_cast<size_t>(track))));
  };
  std::vector<const Track*> order;
  for (const Track& t : s.tracks) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const Track* a, const Track* b) {
    return std::pair(a->core, track_position(*a)) < std::pair(b->core, track_position(*b));
  });
  for (size_t k = 0; k < order.size(); ++k) {
    const Track& tr = *order[k];
    const std::string pid = std::to_string(tr.core), pos = std::to_string(track_position(tr));
    if (k == 0 || order[k - 1]->core != tr.core) {
      emit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid +
           ", \"args\": {\"name\": " + quoted("core " + pid) + "}}");
      emit("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": " + pid +
           ", \"args\": {\"sort_index\": " + pid + "}}");
    }
    emit("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + pos +
         ", \"args\": {\"name\": " + quoted(tr.name) + "}}");
    emit("{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": " + pid + ", \"tid\": " + pos +
         ", \"args\": {\"sort_index\": " + pos + "}}");
  }
  for (size_t k = 0; k < trace.events.size(); ++k) {
    const TraceEvent& ev = trace.events[k];
    const TimedInstance& ti = s.instances.at(k);
    const Track& tr = s.tracks.at(static_cast<size_t>(ti.track));
    std::string name, loop_arg;
    name_with_loops(ev.instruction < names.size() ? &names[ev.instruction] : nullptr, trace, ev,
                    name, loop_arg);
    std::string args = "\"instruction\": " + std::to_string(ev.instruction) + loop_arg;
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
    const int64_t start = ticks(ti.start_ns), end = ticks(ti.end_ns);
    emit("{\"ph\": \"X\", \"name\": " + quoted(name) + ", \"pid\": " + std::to_string(tr.core) +
         ", \"tid\": " + tid(ti.track) + ", \"ts\": " + micros(start) +
         ", \"dur\": " + micros(end - start) + ", \"args\": {" + args + "}}");
    if (ti.waited_for >= 0) {
      const TimedInstance& from = s.instances.at(static_cast<size_t>(ti.waited_for));
      if (from.track != ti.track) {
        const Track& ft = s.tracks.at(static_cast<size_t>(from.track));
        const std::string id = std::to_string(k);
        // Starts mid-slice (between the printed ends), where Perfetto binds it to that slice.
        const int64_t mid = (ticks(from.start_ns) + ticks(from.end_ns)) / 2;
        emit("{\"ph\": \"s\", \"name\": \"dependency\", \"cat\": \"dependency\", \"id\": " + id +
             ", \"pid\": " + std::to_string(ft.core) + ", \"tid\": " + tid(from.track) +
             ", \"ts\": " + micros(mid) + "}");
        emit(
            "{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"dependency\", \"cat\": \"dependency\", "
            "\"id\": " +
            id + ", \"pid\": " + std::to_string(tr.core) + ", \"tid\": " + tid(ti.track) +
            ", \"ts\": " + micros(start) + "}");
      }
    }
  }
  out << "\n]}\n";
}

}  // namespace timing
}  // namespace ncv
