// The equivalence checker's speed on the whole Autocomp chain (bench/README.md): each of
// sd_attention_step1..5 against the variant it rewrites (`ncverify equiv PRED STEP`), every one
// of the 8 option combinations (use_causal_mask x mixed_precision x dtype), equiv's default
// checked shapes and cases. One benchmark per link, one iteration each (a link takes seconds);
// counters: the link's wall and CPU time, the running total, the option sets and how many reached
// bit-exact / hold at the required level. A summary prints the total against its target
// (< 60 s on the 2-core machine). Then the FlashAttention tutorial's links (attn_fwd_v2 ..
// v11 against the version before, their default option sets and checked shapes, seqlen 512 and
// 1024), each against the per-link target of issue 46 (<= 60 s), with the process's peak
// resident memory after it (against 4 GiB; peak so far, so it only grows). Benchmarks measure,
// nothing here asserts.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

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
constexpr double kLinkTargetSeconds = 60.0;  // issue 46: each registered link
constexpr double kLinkTargetGiB = 4.0;

// The process's peak resident memory so far, GiB.
double peak_rss_gib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
}

struct LinkTime {
  std::string name;
  double seconds = 0, cpu_seconds = 0;
  int options = 0, bit_exact = 0, holds = 0;
  std::string verdict;
  double peak_gib = 0;
};
std::vector<LinkTime> g_links, g_tutorial;
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
  t.peak_gib = peak_rss_gib();
  if (pred->name.rfind("attn_fwd", 0) == 0) {
    state.counters["peak_gib"] = t.peak_gib;
    state.counters["link_s"] = t.seconds;
    state.SetLabel(t.verdict);
    g_tutorial.push_back(t);
    return;
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

// The tutorial chain's links, in chain order.
void register_tutorial() {
  for (const char* name :
       {"attn_fwd_v2", "attn_fwd_v3", "attn_fwd_v4", "attn_fwd_v5", "attn_fwd_v6", "attn_fwd_v7",
        "attn_fwd_v8", "attn_fwd_v8a", "attn_fwd_v9", "attn_fwd_v10", "attn_fwd_v11"}) {
    const kernels::Variant* step = kernels::find_variant(name);
    if (step == nullptr || step->rewrites.empty()) continue;
    const kernels::Variant* pred = kernels::find_variant(step->rewrites);
    if (pred == nullptr) continue;
    benchmark::RegisterBenchmark(("BM_EquivTutorial/" + step->name).c_str(), BM_EquivLink, pred,
                                 step)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kSecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_chain();
  register_tutorial();
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
  if (!g_tutorial.empty()) {
    std::printf(
        "\nsummary (the FlashAttention tutorial's links, default option sets and shapes):\n");
    bool met = true;
    for (const LinkTime& t : g_tutorial) {
      const bool ok = t.seconds <= kLinkTargetSeconds && t.peak_gib <= kLinkTargetGiB;
      met = met && ok;
      std::printf("  %-30s %7.2f s (%.2f s CPU)  peak %.2f GiB  %s; %s\n", t.name.c_str(),
                  t.seconds, t.cpu_seconds, t.peak_gib, t.verdict.c_str(),
                  ok ? "within" : "NOT within");
    }
    std::printf("  each link <= %.0f s and <= %.0f GiB (issue 46): %s\n", kLinkTargetSeconds,
                kLinkTargetGiB, met ? "met" : "NOT met");
  }
  benchmark::Shutdown();
  return 0;
}
