#include "tools/report_latency.h"

#include <stdexcept>

#include "model/ir/expr.h"
#include "model/timing/cost_table.h"
#include "tools/cli_common.h"

namespace ncv::cli {

InstanceCount count_instances(const Program& p, const ParamValues& params, const HwConfig& hw) {
  InstanceCount out;
  RunOptions ro;
  ro.hw = &hw;
  try {
    check_params(p, params);
    out.instances = count_steps(p, params, ro.max_steps).instances;
  } catch (const InputError& e) {
    out.error = e.message;
  } catch (const EvalError& e) {
    out.error = e.message;
  } catch (const DynamicError& e) {
    // A shape whose own arithmetic fails (well_formed) while counting the steps.
    out.error = e.message;
  }
  return out;
}

std::string trace_cap_refusal(int64_t instances, int64_t max_instances) {
  return "the trace of " + std::to_string(instances) +
         "+ instruction instances is over the report's cap of " + std::to_string(max_instances) +
         " (`ncverify bench` runs it)";
}

TimedRun timed_run(const Program& p, const ParamValues& params, const HwConfig& hw,
                   int64_t max_instances) {
  TimedRun out;
  const CostTable* costs = find_cost_table(hw.name);
  if (costs == nullptr) {
    out.error = "no cost table for " + hw.name;
    return out;
  }
  const InstanceCount n = count_instances(p, params, hw);
  if (!n.error.empty()) {
    out.error = n.error;
    return out;
  }
  if (n.instances > max_instances) {
    out.error = trace_cap_refusal(n.instances, max_instances);
    return out;
  }
  // As bench_once (tools/cmd_bench.cpp): the trace of every instance, no values.
  RunOptions ro;
  ro.hw = &hw;
  ro.compute_values = false;
  try {
    out.run = run_program(p, params, {}, ro);
  } catch (const InputError& e) {
    out.error = e.message;
    return out;
  } catch (const EvalError& e) {
    out.error = e.message;
    return out;
  } catch (const DynamicError& e) {
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

Latency LatencyCache::get(const kernels::Variant& v, const kernels::Options& o,
                          const ParamValues& params, const HwConfig& hw, int64_t max_instances) {
  return get(
      v.name, o, params, hw, [&] { return v.build(o); }, max_instances);
}

LatencyCache::Entry& LatencyCache::entry(const std::string& kernel, const kernels::Options& o,
                                         const ParamValues& params, const HwConfig& hw) {
  std::string key = kernel + "|" + hw.name + "|" + format_params(params);
  for (const auto& [name, value] : o) key += "|" + name + "=" + value;
  const std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Entry>& slot = cache_[key];
  if (!slot) slot = std::make_unique<Entry>();
  return *slot;
}

Latency LatencyCache::get(const std::string& kernel, const kernels::Options& o,
                          const ParamValues& params, const HwConfig& hw,
                          const std::function<Program()>& build, int64_t max_instances) {
  Entry& e = entry(kernel, o, params, hw);
  const std::lock_guard<std::mutex> lock(e.mu);
  try {
    if (!e.counted) {
      e.count = count_instances(build(), params, hw);
      e.counted = true;
    }
    if (!e.count.error.empty()) return Latency{std::nullopt, e.count.error};
    // The cap's refusal is the caller's own: it does not depend on who ran the key first.
    if (e.count.instances > max_instances) {
      return Latency{std::nullopt, trace_cap_refusal(e.count.instances, max_instances)};
    }
    if (!e.made) {
      e.latency = modelled_latency(build(), params, hw, e.count.instances);
      e.made = true;
    }
  } catch (const std::exception& ex) {
    // A build that throws (BuildError, an excluded combination) has no latency either.
    e.count.error = ex.what();
    e.counted = true;
    return Latency{std::nullopt, e.count.error};
  }
  return e.latency;
}

}  // namespace ncv::cli
