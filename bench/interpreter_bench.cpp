// Interpreter throughput against plain C++ and OpenBLAS (bench/README.md).
//
// The matmul benchmarks do the same work: C[128,512] = A[128,128]^T B[128,512] with bf16 inputs
// and fp32 accumulation, the shape of one full Tensor-engine instruction (K = M = 128, N = 512).
// The interpreter runs it as a Program (built once with the Builder) that issues `reps` such
// matmuls into one PSUM tile; the C++ loop and OpenBLAS run it on the same bf16-valued data.
// Interpreter rates are marginal: the time of a run with reps = R minus a run with reps = 1.
// The elementwise benchmarks run activation(exp) and tensor_tensor(add) over large SBUF tiles.
// After the runs a summary prints the ratio interpreter / OpenBLAS next to its target.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "oracle/blas_threads.h"

namespace {

using namespace ncv;

constexpr int64_t kK = 128, kM = 128, kN = 512;
constexpr double kFlopsPerTile = 2.0 * kK * kM * kN;
constexpr int64_t kMatmulReps = 64;  // matmuls per interpreted program run
constexpr int64_t kEltCols = 8192;   // free size of the elementwise SBUF tiles (fp32)
constexpr int64_t kEltReps = 16;     // elementwise instructions per interpreted program run

// reps x matmul(psum[128,512] = a[128,128]^T b[128,512]), then one copy out.
Program matmul_program() {
  Builder b("bench_matmul");
  Expr reps = b.param("reps", 1, 1 << 20);
  auto a = b.input("a", DType::bf16, {kK, kM});
  auto x = b.input("b", DType::bf16, {kK, kN});
  auto c = b.output("c", DType::fp32, {kM, kN});
  auto a_s = b.sbuf("a_s", DType::bf16, {kK, kM});
  auto b_s = b.sbuf("b_s", DType::bf16, {kK, kN});
  auto acc = b.psum("acc", DType::fp32, {kM, kN});
  auto c_s = b.sbuf("c_s", DType::fp32, {kM, kN});
  b.dma_copy(a_s(), a());
  b.dma_copy(b_s(), x());
  b.sequential_range("i", reps, [&](Expr) { b.matmul(acc(), a_s(), b_s(), false); });
  b.tensor_copy(c_s(), acc());
  b.dma_copy(c(), c_s());
  return b.finish();
}

enum class EltKind { exp, add };

// reps x (activation exp | tensor_tensor add) over [128, kEltCols] fp32 SBUF tiles.
Program elementwise_program(EltKind kind) {
  Builder b(kind == EltKind::exp ? "bench_exp" : "bench_add");
  Expr reps = b.param("reps", 1, 1 << 20);
  auto x = b.input("x", DType::fp32, {128, kEltCols});
  auto y = b.output("y", DType::fp32, {128, kEltCols});
  auto x_s = b.sbuf("x_s", DType::fp32, {128, kEltCols});
  auto y_s = b.sbuf("y_s", DType::fp32, {128, kEltCols});
  b.dma_copy(x_s(), x());
  b.sequential_range("i", reps, [&](Expr) {
    if (kind == EltKind::exp) {
      ActivationArgs exp_args;
      exp_args.func = ActFunc::exp;
      b.activation(y_s(), x_s(), exp_args);
    } else {
      b.tensor_tensor(y_s(), x_s(), x_s(), AluOp::add);
    }
  });
  b.dma_copy(y(), y_s());
  return b.finish();
}

RunOptions value_run_options() {
  RunOptions o;
  o.record_trace = false;
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Throughput of the repeated instruction alone: each iteration runs the program with reps = 1
// and with reps = `reps`, and reports the difference as the iteration's (manual) time, so the
// per-run setup (allocation, poisoning, input and output copies) does not dilute the rate. The
// setup is reported separately as `run1_ms` (one run with reps = 1).
void run_interpreted(benchmark::State& state, const Program& p, int64_t reps, double work_per_rep,
                     const char* counter) {
  const ParamValues one{{"reps", 1}};
  const ParamValues many{{"reps", reps}};
  const auto inputs = random_inputs(p, many, 1);  // reps changes no shape
  const RunOptions options = value_run_options();
  double work = 0, run1_seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    RunResult base = run_program(p, one, inputs, options);
    const double t_one = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    RunResult full = run_program(p, many, inputs, options);
    const double t_many = seconds_since(t1);
    for (const RunResult* r : {&base, &full}) {
      if (r->error) {
        state.SkipWithError(r->error->message.c_str());
        return;
      }
    }
    benchmark::DoNotOptimize(base.outputs);
    benchmark::DoNotOptimize(full.outputs);
    state.SetIterationTime(std::max(t_many - t_one, 1e-9));
    work += work_per_rep * static_cast<double>(reps - 1);
    run1_seconds += t_one;
  }
  state.counters[counter] = benchmark::Counter(work, benchmark::Counter::kIsRate);
  state.counters["run1_ms"] =
      benchmark::Counter(run1_seconds * 1e3, benchmark::Counter::kAvgIterations);
}

void BM_InterpreterMatmul(benchmark::State& state) {
  static const Program p = matmul_program();
  run_interpreted(state, p, kMatmulReps, kFlopsPerTile, "FLOP/s");
}

// bf16-valued fp32 operands, as the interpreter sees them after decoding.
struct MatmulData {
  std::vector<float> a = std::vector<float>(kK * kM), b = std::vector<float>(kK * kN);
  std::vector<float> c = std::vector<float>(kM * kN);
  MatmulData() {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : a) v = quantize(DType::bf16, u(rng));
    for (float& v : b) v = quantize(DType::bf16, u(rng));
  }
};

void BM_NaiveLoopMatmul(benchmark::State& state) {
  MatmulData d;
  double flops = 0;
  for (auto _ : state) {
    for (int64_t m = 0; m < kM; ++m) {
      for (int64_t n = 0; n < kN; ++n) {
        float acc = 0.0f;
        for (int64_t k = 0; k < kK; ++k) acc += d.a[k * kM + m] * d.b[k * kN + n];
        d.c[m * kN + n] = acc;
      }
    }
    benchmark::DoNotOptimize(d.c.data());
    benchmark::ClobberMemory();
    flops += kFlopsPerTile;
  }
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
}

void BM_OpenBlasSgemm1Thread(benchmark::State& state) {
  openblas_set_num_threads(1);
  MatmulData d;
  double flops = 0;
  for (auto _ : state) {
    // C[M,N] = A[K,M]^T B[K,N], row-major.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kM, kN, kK, 1.0f, d.a.data(), kM,
                d.b.data(), kN, 0.0f, d.c.data(), kN);
    benchmark::DoNotOptimize(d.c.data());
    benchmark::ClobberMemory();
    flops += kFlopsPerTile;
  }
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
}

void BM_InterpreterActivationExp(benchmark::State& state) {
  static const Program p = elementwise_program(EltKind::exp);
  run_interpreted(state, p, kEltReps, 128.0 * kEltCols, "elems/s");
}

void BM_InterpreterTensorTensorAdd(benchmark::State& state) {
  static const Program p = elementwise_program(EltKind::add);
  run_interpreted(state, p, kEltReps, 128.0 * kEltCols, "elems/s");
}

// Wall-clock time throughout: the interpreter may use threads, and the machine is shared.
BENCHMARK(BM_InterpreterMatmul)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NaiveLoopMatmul)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenBlasSgemm1Thread)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InterpreterActivationExp)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InterpreterTensorTensorAdd)->UseManualTime()->Unit(benchmark::kMillisecond);

// The console output, plus each benchmark's final rate counter kept for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter() : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      for (const auto& entry : run.counters) {
        if (entry.first == "FLOP/s" || entry.first == "elems/s") {
          rates[run.run_name.function_name] = entry.second.value;
        } else if (entry.first == "run1_ms") {
          run1_ms[run.run_name.function_name] = entry.second.value;
        }
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> rates;    // function name -> FLOP/s or elements/s
  std::map<std::string, double> run1_ms;  // function name -> ms of one run with reps = 1
};

std::string rate_text(const std::map<std::string, double>& rates, const std::string& name,
                      double scale, const char* unit) {
  auto it = rates.find(name);
  if (it == rates.end()) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", it->second / scale, unit);
  return buf;
}

void print_summary(const std::map<std::string, double>& rates,
                   const std::map<std::string, double>& run1_ms) {
  std::printf("\nsummary (128x128x512 bf16 -> fp32 PSUM tiles; elementwise on [128, %lld] fp32):\n",
              static_cast<long long>(kEltCols));
  std::printf("  interpreter matmul      %s\n",
              rate_text(rates, "BM_InterpreterMatmul", 1e9, "GFLOP/s").c_str());
  std::printf("  naive C++ triple loop   %s\n",
              rate_text(rates, "BM_NaiveLoopMatmul", 1e9, "GFLOP/s").c_str());
  std::printf("  OpenBLAS sgemm, 1 thr   %s  (kernels: %s)\n",
              rate_text(rates, "BM_OpenBlasSgemm1Thread", 1e9, "GFLOP/s").c_str(),
              ncv::oracle::blas_core_name().c_str());
  auto interp = rates.find("BM_InterpreterMatmul");
  auto blas = rates.find("BM_OpenBlasSgemm1Thread");
  if (interp != rates.end() && blas != rates.end() && blas->second > 0) {
    const double ratio = interp->second / blas->second;
    std::printf("  interpreter / OpenBLAS  %.1f%%  (target >= 25%%: %s)\n", 100.0 * ratio,
                ratio >= 0.25 ? "met" : "not met");
  } else {
    std::printf("  interpreter / OpenBLAS  n/a  (target >= 25%%)\n");
  }
  std::printf("  activation exp          %s\n",
              rate_text(rates, "BM_InterpreterActivationExp", 1e6, "M elements/s").c_str());
  std::printf("  tensor_tensor add       %s\n",
              rate_text(rates, "BM_InterpreterTensorTensorAdd", 1e6, "M elements/s").c_str());
  std::printf("  setup per run (excluded from the interpreter rates; one run with reps = 1):");
  const char* sep = " ";
  for (const auto& [name, ms] : run1_ms) {
    std::printf("%s%s %.1f ms", sep, name.c_str(), ms);
    sep = ", ";
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter.rates, reporter.run1_ms);
  benchmark::Shutdown();
  return 0;
}
