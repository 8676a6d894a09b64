// The engine timeline of `ncverify report --html`: one kernel at one shape on one generation,
// scheduled on the timing model (model/timing/timing.h), as busy intervals per engine and DMA
// queue (the Schedule's tracks), plus the same schedule as a Perfetto trace file
// (model/timing/chrome_trace.h) for the instance-level view, gzip-compressed (ui.perfetto.dev and
// chrome://tracing open .json.gz as they are; the JSON of a large kernel's trace is tens of MB
// and compresses about tenfold). Intervals closer than a gap are merged so that the page stays
// small (at most ~2000 per timeline; the gap used is in the JSON).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/timing/timing.h"
#include "tools/report_latency.h"

namespace ncv::cli {

struct BusyInterval {
  int track = 0;
  double start_us = 0, end_us = 0;
};

// The busy intervals of `s` per track, overlapping or touching ones merged; while there are more
// than `max_intervals`, idle gaps up to a doubling threshold are merged too. `merge_gap_us`
// receives the threshold used (0: only overlaps and touches merged). Track numbers are
// indices into `order` (the schedule's tracks sorted by core, engine, queue).
std::vector<BusyInterval> busy_intervals(const Schedule& s, const std::vector<int>& order,
                                         size_t max_intervals, double& merge_gap_us);

// The tracks of `s` in display order (core, then tensor, vector, scalar, gpsimd, dma queues):
// indices into s.tracks.
std::vector<int> track_order(const Schedule& s);

// `text` as a gzip file's bytes (zlib's default level).
std::string gzip_compress(const std::string& text);

// Timeline JSON for a scheduled run (schema Timeline without family/kernel/gen/params, which the
// caller adds), and its Perfetto trace written gzip-compressed to `trace_path` (a .json.gz;
// replacing a previous one).
nlohmann::json timeline_json(const Program& p, const TimedRun& run,
                             const std::filesystem::path& trace_path, size_t max_intervals = 2000);

}  // namespace ncv::cli
