// The per-kernel sections `ncverify report --html` adds to the report (the sections only
// --html collects, tools/report_page/README.md "The object the page reads"): the modelled latency
// against seqlen on each generation the kernel runs on, the SBUF/PSUM footprint against seqlen with
// the capacities, and the capacity frontier per generation (also used, for the report generation
// alone, by the proof rows).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/hw/hw_config.h"
#include "model/ir/program.h"
#include "tools/report_latency.h"

namespace ncv::cli {

// The report shape: every param at its smallest legal value, seqlen near `seqlen`, d_head 64, a
// GQA group of 2 (q heads per kv head) where the kernel has one, a sliding window of a quarter
// of the sequence; each value clamped into the param's range and rounded to its multiple.
ParamValues report_params(const Program& p, int64_t seqlen);

// The seqlens of a sweep over `seqlen`'s domain: its least legal value (not below 128 when the
// domain reaches 128), the powers of two above it and the largest legal value, all at most
// `cap`. A domain that starts above `cap` gives its least value alone.
std::vector<int64_t> sweep_seqlens(const Param& seqlen, int64_t cap);

// The cap on a timeline's trace: a kernel whose run at the report shape records more instruction
// instances gets its timeline and Perfetto trace at a smaller seqlen (timeline_shape). A trace
// costs ~550 bytes of JSON per instance, ~42 gzip-compressed (the registry's largest,
// pipelined_attention at seqlen 1024: 50083 instances, 27.3 MB, 2.1 MB compressed), and its run
// grows with it: 2^16 instances keep one trace under ~3 MB on the page's folder.
inline constexpr int64_t kTimelineMaxInstances = int64_t{1} << 16;

// The shape of a kernel's timeline: the report shape at `seqlen`, or, when a run there records
// more than `max_instances` instances, the largest seqlen of sweep_seqlens below it whose run
// records at most that many (the smallest when none does). `reduced_from` is then the report
// shape and `note` says why, for the page and report.json; `instances` is the count at `params`.
struct TimelineShape {
  ParamValues params;
  int64_t instances = 0;
  std::optional<ParamValues> reduced_from;
  std::string note;
};
TimelineShape timeline_shape(const Program& p, const HwConfig& hw, int64_t seqlen,
                             int64_t max_instances);

struct SweepLimits {
  int64_t max_seqlen = 8192;  // the latency sweep's cap (the footprint covers the whole domain)
  // Per point: a trace longer than this is skipped (and said so), which bounds the sweep's
  // time and memory.
  int64_t max_instances = int64_t{1} << 20;
  unsigned frontier_timeout_ms = 5000;  // per Z3 query of a frontier search
};

// LatencySeries: v at default options on `hw` over sweep_seqlens, other params at the report
// shape; points that have no latency are listed under "skipped" with the reason.
nlohmann::json latency_series(const kernels::Variant& v, const HwConfig& hw,
                              const SweepLimits& limits, LatencyCache& cache);

// FootprintSeries: the allocator's SBUF and PSUM peak (bytes per partition, auto-placed buffers;
// explicitly placed ones summed apart) at default options on `hw` over the whole seqlen domain.
nlohmann::json footprint_series(const kernels::Variant& v, const HwConfig& hw);

// One generation's capacity frontier in seqlen of v's default-option program at the report
// shape's other params (d_head 64), searched up to max(65536, the declared max): status
// fits_below / fits_everywhere / fits_nowhere / unknown (Z3 gave none within the timeout), or
// skipped when v does not run on `gen`. `text` is the proof table's cell: "6656", ">=65536",
// "none", "unknown", "skipped" or "-" (no seqlen param).
struct FrontierEntry {
  nlohmann::json json;
  std::string text;
};
FrontierEntry frontier_entry(const kernels::Variant& v, const std::string& gen,
                             unsigned timeout_ms);

}  // namespace ncv::cli
