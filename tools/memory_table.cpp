#include "tools/memory_table.h"

#include <cstdio>

namespace ncv::cli {

namespace {

void print_buffers(std::ostream& out, const std::vector<LiveBuffer>& v, const std::string& indent);

void print_one(std::ostream& out, const char* mem, const MemoryPeak& m, const std::string& indent) {
  char head[160];
  // With explicit placements the stacked peak covers only the buffers the compiler places; say
  // so, or "peak 0" reads as an empty memory.
  std::snprintf(head, sizeof head, "%s peak%s %lld of %lld bytes per partition (%.1f%%", mem,
                m.explicitly_placed.empty() ? "" : " of the compiler-placed buffers",
                static_cast<long long>(m.peak_bytes), static_cast<long long>(m.capacity),
                m.capacity > 0
                    ? 100.0 * static_cast<double>(m.peak_bytes) / static_cast<double>(m.capacity)
                    : 0.0);
  out << indent << head;
  if (!m.fits()) out << ", " << (m.peak_bytes - m.capacity) << " over";
  std::string where = "kernel body";
  if (!m.at_loops.empty()) {
    where = "loop ";
    for (size_t i = 0; i < m.at_loops.size(); ++i) where += (i ? " > " : "") + m.at_loops[i];
  }
  out << ", in " << where << ")";
  out << "\n";
  print_buffers(out, m.live, indent);
  // Explicit placements are outside the stacked peak; list them apart, or a kernel that places
  // its buffers itself would seem to use no memory.
  if (!m.explicitly_placed.empty()) {
    out << indent << "  explicitly placed (not in the peak; each checked inside " << mem << "):\n";
    print_buffers(out, m.explicitly_placed, indent + "  ");
  }
}

void print_buffers(std::ostream& out, const std::vector<LiveBuffer>& v, const std::string& indent) {
  for (const LiveBuffer& b : v) {
    const std::string scope = b.loop.empty() ? "kernel body" : "loop " + b.loop;
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %10lld B  (%lld x %lld B, %s)", b.name.c_str(),
                  static_cast<long long>(b.bytes_per_partition), static_cast<long long>(b.copies),
                  static_cast<long long>(b.bytes_per_copy), scope.c_str());
    out << indent << line << "\n";
  }
}

nlohmann::json buffers_json(const std::vector<LiveBuffer>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const LiveBuffer& b : v) {
    out.push_back({{"name", b.name},
                   {"bytes_per_partition", b.bytes_per_partition},
                   {"bytes_per_copy", b.bytes_per_copy},
                   {"copies", b.copies},
                   {"loop", b.loop}});
  }
  return out;
}

nlohmann::json one_json(const MemoryPeak& m) {
  const nlohmann::json live = buffers_json(m.live);
  return {{"peak_bytes", m.peak_bytes},
          {"capacity", m.capacity},
          {"fits", m.fits()},
          {"at_loops", m.at_loops},
          {"live", live},
          {"explicitly_placed", buffers_json(m.explicitly_placed)}};
}

}  // namespace

void print_memory_peaks(std::ostream& out, const MemoryPeaks& m, const std::string& indent) {
  print_one(out, "SBUF", m.sbuf, indent);
  print_one(out, "PSUM", m.psum, indent);
}

nlohmann::json memory_peaks_json(const MemoryPeaks& m) {
  return {{"sbuf", one_json(m.sbuf)}, {"psum", one_json(m.psum)}};
}

}  // namespace ncv::cli
