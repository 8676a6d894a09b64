// The equivalence checker's speed on the whole Autocomp chain (bench/README.md): each of
// sd_attention_step1..5 against the variant it rewrites (`ncverify equiv PRED STEP`), every one
// of the 8 option combinations (use_causal_mask x mixed_precision x dtype), equiv's default
// checked shapes and cases. One benchmark per link, one iteration each (a link takes seconds);
// counters: the link's wall and CPU time, the running total, the option sets and how many reached
// bit-exact / hold at the required level. A summary prints the total against its target
// (< 60 s on the 2-core machine); benchmarks measure, nothing here asserts.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "equiv/equiv.h"
#include "kernels/registry.h"

namespace {

using namespace ncv;
using clock_type = std::chrono::steady_clock;

constexpr double kTargetSeconds = 60.0;

struct LinkTime {
  std::string name;
  double seconds = 0, cpu_seconds = 0;
  int options = 0, bit_exact = 0, holds = 0;
  std::string verdict;
};
std::vector<LinkTime> g_links;
double g_total_s = 0, g_total_cpu_s = 0;

void BM_EquivLink(benchmark::State& state, const kernels::Variant* pred,
                  const kernels::Variant* step) {
  equiv::EquivRequest req;
  req.original = equiv::EquivSide{pred->name, pred, std::nullopt};
  req.rewrite = equiv::EquivSide{step->name, step, std::nullopt};
  req.run.record_trace = false;
  LinkTime t{pred->name + " -> " + step->name};
  for (auto _ : state) {
    const auto t0 = clock_type::now();
    const std::clock_t c0 = std::clock();
    const equiv::EquivResult r = equiv::run_equiv(req);
    t.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    t.cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    t.options = static_cast<int>(r.outcomes.size());
    t.bit_exact = t.holds = 0;
    for (const equiv::OptionOutcome& o : r.outcomes) {
      t.bit_exact += o.bit_exact == equiv::Verdict::proved;
      t.holds += o.holds(r.required);
    }
    t.verdict = r.verdict + " (require " + equiv::level_name(r.required) + ")";
    benchmark::DoNotOptimize(r.outcomes.data());
  }
  g_total_s += t.seconds;
  g_total_cpu_s += t.cpu_seconds;
  state.counters["link_s"] = t.seconds;
  state.counters["link_cpu_s"] = t.cpu_seconds;
  state.counters["total_s"] = g_total_s;
  state.counters["options"] = t.options;
  state.counters["bit_exact"] = t.bit_exact;
  state.counters["holds"] = t.holds;
  state.SetLabel(t.verdict);
  g_links.push_back(t);
}

// Registers one benchmark per link of the chain, in chain order.
void register_chain() {
  for (int s = 1; s <= 5; ++s) {
    const kernels::Variant* step = kernels::find_variant("sd_attention_step" + std::to_string(s));
    if (step == nullptr || step->rewrites.empty()) continue;
    const kernels::Variant* pred = kernels::find_variant(step->rewrites);
    if (pred == nullptr) continue;
    benchmark::RegisterBenchmark(("BM_Equiv/" + step->name).c_str(), BM_EquivLink, pred, step)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kSecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_chain();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  std::printf(
      "\nsummary (the Autocomp chain, every link x 8 option sets, equiv's checked shapes):\n");
  for (const LinkTime& t : g_links) {
    std::printf("  %-40s %7.2f s (%.2f s CPU)  %d option sets, %d bit-exact, %d hold; %s\n",
                t.name.c_str(), t.seconds, t.cpu_seconds, t.options, t.bit_exact, t.holds,
                t.verdict.c_str());
  }
  // One thread: on a shared machine the wall time exceeds the CPU time by what others took.
  std::printf("  total %.2f s wall, %.2f s CPU  (target < %.0f s on 2 cores: %s)\n", g_total_s,
              g_total_cpu_s, kTargetSeconds, g_total_s < kTargetSeconds ? "met" : "NOT met");
  benchmark::Shutdown();
  return 0;
}
