// How long `ncverify import` takes to trace an NKI kernel with symbolic shapes (target: under
// 2 s for the tutorial kernel). The kernel is the front end's rendition of the SD attention
// tutorial (frontend/tests/kernels/sd_attention_rendition.py), traced as the CLI does it:
// python3 started, the file loaded, the kernel run on the stand-in modules, .nkir returned;
// also the traced program's parse and its fully concrete trace at seqlen 4096.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "frontend/nki_trace.h"

namespace {

const std::string kKernel =
    std::string(NCV_FRONTEND_KERNELS_DIR) + "/sd_attention_rendition.py:sd_attention";

void BM_ImportSymbolic(benchmark::State& state) {
  ncv::frontend::TraceRequest req;
  req.target = kKernel;
  size_t bytes = 0;
  for (auto _ : state) bytes = ncv::frontend::trace_nki(req).size();
  state.counters["nkir_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ImportSymbolic)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_ImportConcrete4096(benchmark::State& state) {
  ncv::frontend::TraceRequest req;
  req.target = kKernel;
  req.params = {"seqlen=4096", "d_head=64", "use_causal_mask=true"};
  for (auto _ : state) benchmark::DoNotOptimize(ncv::frontend::trace_nki(req));
}
BENCHMARK(BM_ImportConcrete4096)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  ncv::frontend::TraceRequest req;
  req.target = kKernel;
  const auto t0 = std::chrono::steady_clock::now();
  ncv::frontend::trace_nki(req);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("import (symbolic shapes) of the tutorial kernel: %.3f s (target < 2 s): %s\n", s,
              s < 2.0 ? "met" : "MISSED");
  benchmark::Shutdown();
  return 0;
}
