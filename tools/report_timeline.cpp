#include "tools/report_timeline.h"

#include <zlib.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "model/timing/chrome_trace.h"
#include "tools/output_file.h"

namespace ncv::cli {

namespace {

// Per track (display index), the intervals sorted by start and merged when the idle gap between
// them is at most `gap_ns`.
std::vector<BusyInterval> merged(const std::vector<std::vector<std::pair<double, double>>>& per,
                                 double gap_ns) {
  std::vector<BusyInterval> out;
  for (size_t t = 0; t < per.size(); ++t) {
    bool open = false;
    BusyInterval cur;
    for (const auto& [start, end] : per[t]) {
      if (open && start <= cur.end_us + gap_ns) {
        cur.end_us = std::max(cur.end_us, end);
        continue;
      }
      if (open) out.push_back(cur);
      cur = BusyInterval{static_cast<int>(t), start, end};
      open = true;
    }
    if (open) out.push_back(cur);
  }
  // ns to us.
  for (BusyInterval& b : out) {
    b.start_us /= 1000.0;
    b.end_us /= 1000.0;
  }
  return out;
}

}  // namespace

std::string gzip_compress(const std::string& text) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer (what `gunzip` and ui.perfetto.dev read).
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  std::string out;
  char buf[1 << 16];
  size_t fed = 0;
  int rc = Z_OK;
  // zlib counts in uInt (32 bits): the input goes in in pieces.
  constexpr size_t kPiece = size_t{1} << 30;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && fed < text.size()) {
      const size_t n = std::min(kPiece, text.size() - fed);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = deflate(&z, fed == text.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&z);
      throw std::runtime_error("zlib: deflate failed");
    }
    out.append(buf, sizeof buf - z.avail_out);
  }
  deflateEnd(&z);
  return out;
}

std::vector<int> track_order(const Schedule& s) {
  std::vector<int> order(s.tracks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Track& x = s.tracks[static_cast<size_t>(a)];
    const Track& y = s.tracks[static_cast<size_t>(b)];
    return std::tie(x.core, x.engine, x.queue) < std::tie(y.core, y.engine, y.queue);
  });
  return order;
}

std::vector<BusyInterval> busy_intervals(const Schedule& s, const std::vector<int>& order,
                                         size_t max_intervals, double& merge_gap_us) {
  std::vector<int> display(s.tracks.size());
  for (size_t i = 0; i < order.size(); ++i)
    display[static_cast<size_t>(order[i])] = static_cast<int>(i);
  std::vector<std::vector<std::pair<double, double>>> per(s.tracks.size());
  for (const TimedInstance& ti : s.instances) {
    if (ti.end_ns > ti.start_ns) {
      per[static_cast<size_t>(display[static_cast<size_t>(ti.track)])].emplace_back(ti.start_ns,
                                                                                    ti.end_ns);
    }
  }
  for (auto& v : per) std::sort(v.begin(), v.end());
  double gap_ns = 0;
  std::vector<BusyInterval> out = merged(per, gap_ns);
  // Idle gaps below a threshold that doubles from a millionth of the makespan until the
  // timeline is small enough.
  double next = std::max(s.makespan_ns * 1e-6, 1e-3);
  while (out.size() > max_intervals && next < 2 * s.makespan_ns) {
    gap_ns = next;
    out = merged(per, gap_ns);
    next *= 2;
  }
  merge_gap_us = gap_ns / 1000.0;
  return out;
}

nlohmann::json timeline_json(const Program& p, const TimedRun& run,
                             const std::filesystem::path& trace_path, size_t max_intervals) {
  const Schedule& s = run.schedule;
  const std::vector<int> order = track_order(s);
  double gap_us = 0;
  const std::vector<BusyInterval> busy = busy_intervals(s, order, max_intervals, gap_us);
  nlohmann::json tracks = nlohmann::json::array(), intervals = nlohmann::json::array();
  for (int t : order) tracks.push_back(s.tracks[static_cast<size_t>(t)].name);
  for (const BusyInterval& b : busy) {
    intervals.push_back({{"track", b.track}, {"start_us", b.start_us}, {"end_us", b.end_us}});
  }
  std::ostringstream trace;
  write_chrome_trace(trace, p, run.run.trace, s);
  write_output_file(trace_path.string(), gzip_compress(trace.str()), true, "--html");
  return {{"latency_us", s.latency_us()},
          {"tracks", tracks},
          {"intervals", intervals},
          {"merge_gap_us", gap_us},
          {"instances", s.instances.size()}};
}

}  // namespace ncv::cli
