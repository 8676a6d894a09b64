// Speed of the timing side (issue 5, bench/README.md): trace-only interpretation plus scheduling,
// in simulated instruction instances per second, for the largest shape of each sd_attention
// variant's domain and of naive_attention, next to sd_attention's functional (values) time at
// S = 4096. Best of `--reps` runs (default 3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/layout.h"
#include "kernels/registry.h"
#include "model/interpreter.h"
#include "model/timing.h"
#include "oracle/input_distributions.h"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--reps") == 0) reps = std::max(1, std::atoi(argv[a + 1]));
  }
  using namespace ncv;
  struct Case {
    const char* kernel;
    ParamValues params;
  };
  const Case cases[] = {
      {"sd_attention", {{"seqlen", 4096}, {"d_head", 64}}},
      {"sd_attention_step5", {{"seqlen", 4096}, {"d_head", 64}}},
      {"naive_attention", {{"seqlen", 8192}, {"d_head", 64}}},
  };
  std::printf("timing side: trace-only run + schedule on trn1, best of %d\n", reps);
  for (const Case& c : cases) {
    const kernels::Variant& v = *kernels::find_variant(c.kernel);
    const Program p = v.build(v.resolve({}));
    double best_run = 1e300, best_sched = 1e300, latency = 0;
    size_t instances = 0;
    for (int r = 0; r < reps; ++r) {
      RunOptions ro;
      ro.compute_values = false;
      const auto t0 = clock_type::now();
      RunResult res = run_program(p, c.params, {}, ro);
      best_run = std::min(best_run, seconds_since(t0));
      const auto t1 = clock_type::now();
      const Schedule s = schedule_trace(p, res.trace, cost_table_trn1());
      best_sched = std::min(best_sched, seconds_since(t1));
      instances = res.trace.events.size();
      latency = s.latency_us();
    }
    const double total = best_run + best_sched;
    std::printf(
        "  %-20s seqlen %5lld: %8zu instances, run %.3f s + schedule %.3f s = %.3f s "
        "(%.2f M instances/s), latency %.1f us\n",
        c.kernel, static_cast<long long>(c.params.at("seqlen")), instances, best_run, best_sched,
        total, instances / total * 1e-6, latency);
  }
  // Functional time of sd_attention at S = 4096, for comparison.
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  const ParamValues params = {{"seqlen", 4096}, {"d_head", 64}};
  const oracle::AttentionSpec spec = v.spec(o, params);
  const auto inputs = kernels::pack_inputs(
      v.layout, p, params, spec, oracle::generate_inputs(spec, oracle::Distribution::uniform, 1));
  RunOptions ro;
  ro.record_trace = false;
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock_type::now();
    (void)run_program(p, params, inputs, ro);
    best = std::min(best, seconds_since(t0));
  }
  std::printf("  sd_attention         seqlen  4096 functional (values): %.3f s\n", best);
  std::printf(
      "note: seqlen 16384 is outside sd_attention's domain (its [128, S] buffers exceed "
      "trn1's SBUF), so the largest traces timed here are the domain maxima\n");
  return 0;
}
