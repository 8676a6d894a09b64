// The modelled latency `report` prints beside each verdict: a trace-only run (no values) of the
// kernel scheduled on the timing model with its generation's cost table, exactly as `ncverify
// bench` computes it (model/timing/timing.h; same program, params, generation: same number).
// A run that fails a dynamic check, or a shape outside the domain, has no latency: the reason is
// kept instead, never a made-up number.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/variant.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"
#include "model/timing/timing.h"

namespace ncv::cli {

// The default cap of timed_run: 4M instances (a few GiB of trace at bench's ~700 bytes each
// would be far more than any report shape needs; the largest report shape has ~1M).
inline constexpr int64_t kDefaultMaxTraceInstances = int64_t{4} << 20;

struct Latency {
  std::optional<double> us;  // the schedule's makespan in microseconds
  std::string error;         // why there is none (when us is empty)
};

// The instruction instances a run of p at `params` records (its trace's events), counted from
// the loop bounds without running; `error` instead when the params are refused or the shape's
// own arithmetic fails.
struct InstanceCount {
  int64_t instances = 0;
  std::string error;
};
InstanceCount count_instances(const Program& p, const ParamValues& params, const HwConfig& hw);

// Why a trace of `instances` instances is not recorded under the cap `max_instances`.
std::string trace_cap_refusal(int64_t instances, int64_t max_instances);

// A trace-only run that is scheduled: the trace and its schedule, or why there is none. The
// trace of a run with more than `max_instances` instruction instances is not recorded (its
// host memory and time grow with it): `error` says so.
struct TimedRun {
  RunResult run;
  Schedule schedule;
  std::string error;
  bool ok() const { return error.empty(); }
};
TimedRun timed_run(const Program& p, const ParamValues& params, const HwConfig& hw,
                   int64_t max_instances = kDefaultMaxTraceInstances);

Latency modelled_latency(const Program& p, const ParamValues& params, const HwConfig& hw,
                         int64_t max_instances = kDefaultMaxTraceInstances);

// Latencies by (kernel, options, params, generation): a rewrite row's predecessor, its link row
// and the sweeps ask for the same runs; each is made once. Safe to share between threads (the
// report's jobs): a second caller of a key being computed waits for that run instead of
// repeating it. The answer does not depend on the order of the calls: a caller whose
// `max_instances` is below the run's instance count gets the cap's refusal, whoever asked first.
class LatencyCache {
 public:
  // `o` must be resolved options of v; builds v at o.
  Latency get(const kernels::Variant& v, const kernels::Options& o, const ParamValues& params,
              const HwConfig& hw, int64_t max_instances = kDefaultMaxTraceInstances);
  // A program that is not `kernel`'s own build (a bug-catalogue edit): `kernel` names it.
  Latency get(const std::string& kernel, const kernels::Options& o, const ParamValues& params,
              const HwConfig& hw, const std::function<Program()>& build,
              int64_t max_instances = kDefaultMaxTraceInstances);

 private:
  struct Entry {
    std::mutex mu;  // held while the entry is filled: a second caller waits for the first
    bool counted = false, made = false;
    InstanceCount count;
    Latency latency;
  };
  Entry& entry(const std::string& kernel, const kernels::Options& o, const ParamValues& params,
               const HwConfig& hw);

  std::mutex mu_;  // guards the map only
  std::map<std::string, std::unique_ptr<Entry>> cache_;
};

}  // namespace ncv::cli
