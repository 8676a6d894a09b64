// Oracle speed (bench/README.md).
//
// FastOracle: one head, S = 4096 queries x 4096 keys, d = 64, no mask, random inputs
// (2 * S * S * d = 2.1e9 multiply-adds); its target is at most 2x the interpreter's time for the
// same attention, which attention_bench measures in one run. ExactOracle: multiply-adds per second
// on a 16 x 512, d = 64 head (QK^T and PV both counted); target >= 1e6/s.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"

namespace {

using namespace ncv::oracle;

struct Problem {
  AttentionSpec spec;
  AttentionInputs in;
};

Problem make_problem(int64_t sq, int64_t skv, int64_t d) {
  Problem p;
  p.spec.seqlen_q = sq;
  p.spec.seqlen_kv = skv;
  p.spec.d_head = d;
  p.spec.scale = 0.125;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);  // fp32-representable values
  for (int64_t x = 0; x < p.spec.q_elements(); ++x) p.in.q.push_back(u(rng));
  for (int64_t x = 0; x < p.spec.kv_elements(); ++x) p.in.k.push_back(u(rng));
  for (int64_t x = 0; x < p.spec.kv_elements(); ++x) p.in.v.push_back(u(rng));
  return p;
}

double macs(const AttentionSpec& s) {
  return 2.0 * static_cast<double>(s.rows()) * static_cast<double>(s.seqlen_kv * s.d_head);
}

void BM_FastOracle_S4096_d64(benchmark::State& state) {
  const Problem p = make_problem(4096, 4096, 64);
  for (auto _ : state) benchmark::DoNotOptimize(fast_attention(p.spec, p.in));
  state.counters["MAC/s"] =
      benchmark::Counter(macs(p.spec), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FastOracle_S4096_d64)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_ExactOracle_16x512_d64(benchmark::State& state) {
  const Problem p = make_problem(16, 512, 64);
  for (auto _ : state) benchmark::DoNotOptimize(exact_attention(p.spec, p.in));
  state.counters["MAC/s"] =
      benchmark::Counter(macs(p.spec), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ExactOracle_16x512_d64)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // One-line summary against the targets.
  using clock = std::chrono::steady_clock;
  const Problem f = make_problem(4096, 4096, 64);
  auto t0 = clock::now();
  benchmark::DoNotOptimize(fast_attention(f.spec, f.in));
  const double fast_s = std::chrono::duration<double>(clock::now() - t0).count();
  const Problem e = make_problem(16, 512, 64);
  t0 = clock::now();
  benchmark::DoNotOptimize(exact_attention(e.spec, e.in));
  const double exact_s = std::chrono::duration<double>(clock::now() - t0).count();
  std::printf(
      "summary: fast oracle S=4096 d=64 one head: %.3f s (attention_bench compares it with the "
      "interpreter's time for the same attention, target <= 2x)\n",
      fast_s);
  std::printf("summary: exact oracle: %.3g multiply-adds/s (target >= 1e6/s): %s\n",
              macs(e.spec) / exact_s, macs(e.spec) / exact_s >= 1e6 ? "met" : "NOT met");
  return 0;
}
