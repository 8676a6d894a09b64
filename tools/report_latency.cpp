#include "tools/report_latency.h"

#include <stdexcept>

#include "model/ir/expr.h"
#include "model/timing/cost_table.h"
#include "tools/cli_common.h"

namespace ncv::cli {

TimedRun timed_run(const Program& p, const ParamValues& params, const HwConfig& hw,
                   int64_t max_instances) {
  TimedRun out;
  const CostTable* costs = find_cost_table(hw.name);
  if (costs == nullptr) {
    out.error = "no cost table for " + hw.name;
    return out;
  }
  // As bench_once (tools/cmd_bench.cpp): the trace of every instance, no values.
  RunOptions ro;
  ro.hw = &hw;
  ro.compute_values = false;
  try {
    check_params(p, params);
    const StepCount n = count_steps(p, params, ro.max_steps);
    if (n.instances > max_instances) {
      out.error = "the trace of " + std::to_string(n.instances) +
                  "+ instruction instances is over the report's cap of " +
                  std::to_string(max_instances) + " (`ncverify bench` runs it)";
      return out;
    }
    out.run = run_program(p, params, {}, ro);
  } catch (const InputError& e) {
    out.error = e.message;
    return out;
  } catch (const EvalError& e) {
    out.error = e.message;
    return out;
  } catch (const DynamicError& e) {
    // A shape whose own arithmetic fails (well_formed) while counting the steps.
    out.error = e.message;
    return out;
  }
  if (out.run.error) {
    out.error = "the trace-only run failed a dynamic check: " + out.run.error->message;
    return out;
  }
  out.schedule = schedule_trace(p, out.run.trace, *costs);
  return out;
}

Latency modelled_latency(const Program& p, const ParamValues& params, const HwConfig& hw,
                         int64_t max_instances) {
  const TimedRun r = timed_run(p, params, hw, max_instances);
  if (!r.ok()) return Latency{std::nullopt, r.error};
  return Latency{r.schedule.latency_us(), ""};
}

const Latency& LatencyCache::get(const kernels::Variant& v, const kernels::Options& o,
                                 const ParamValues& params, const HwConfig& hw,
                                 int64_t max_instances) {
  return get(
      v.name, o, params, hw, [&] { return v.build(o); }, max_instances);
}

const Latency& LatencyCache::get(const std::string& kernel, const kernels::Options& o,
                                 const ParamValues& params, const HwConfig& hw,
                                 const std::function<Program()>& build, int64_t max_instances) {
  std::string key = kernel + "|" + hw.name + "|" + format_params(params);
  for (const auto& [name, value] : o) key += "|" + name + "=" + value;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  Latency l;
  try {
    l = modelled_latency(build(), params, hw, max_instances);
  } catch (const std::exception& e) {
    // A build that throws (BuildError, an excluded combination) has no latency either.
    l = Latency{std::nullopt, e.what()};
  }
  return cache_.emplace(key, std::move(l)).first->second;
}

}  // namespace ncv::cli
