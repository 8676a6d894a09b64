// Where the time of `ncverify check` goes, per shape (issue 25 item 8, bench/README.md
// "check_bench"). For each shape, the same cases `check` runs (the first `cases` hard
// distributions, seeds 1, 2, ...) are timed piece by piece, summed over the cases:
//   - input generation, packing into the kernel's layout, the interpreter run, unpacking;
//   - the fast oracle: fast_attention and fast_oracle_bound (both part of its cost);
//   - case_error_bound (the bound check compares with), compare, and error_bound (the a-priori
//     bound, which check computes only with --apriori or where the case bound is uncertified);
// and `kernels::check_kernel` is timed as a whole (whatever check does, including steps not
// listed above). Summary lines: check / (interpreter + fast oracle) against its target (<= 1.5)
// and fast oracle / interpreter against its target (<= 1.0). Each time is the best of `--reps`.
//
// Times are the process's CPU time by default (`--clock cpu`): everything timed runs on one
// thread, and on a shared host CPU time is what the ratios mean (wall time there mostly measures
// the other tenants); `--clock wall` times the wall clock. The load average is printed before
// and after.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/layout.h"
#include "kernels/registry.h"
#include "oracle/blas_threads.h"
#include "oracle/case_bound.h"
#include "oracle/comparison.h"
#include "oracle/error_bound.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace {

using namespace ncv;

bool g_cpu_clock = true;

double now_s() {
  if (!g_cpu_clock) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class F>
double seconds(F&& f) {
  const double t0 = now_s();
  f();
  return now_s() - t0;
}

std::string load_average() {
  char buf[128] = {0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
    std::fclose(f);
  }
  std::string s = buf;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.empty() ? "unknown" : s;
}

struct Shape {
  const char* label;
  int64_t seqlen, d_head;
  kernels::Options options;
};

// Times of one shape, summed over its cases.
struct Pieces {
  double generate = 0, pack = 0, interp = 0, unpack = 0, fast = 0, fast_bound = 0, error_bound = 0,
         case_bound = 0, compare = 0, check = 0;
  double fast_oracle() const { return fast + fast_bound; }
  void keep_best(const Pieces& p) {
    auto best = [](double& a, double b) { a = std::min(a, b); };
    best(generate, p.generate);
    best(pack, p.pack);
    best(interp, p.interp);
    best(unpack, p.unpack);
    best(fast, p.fast);
    best(fast_bound, p.fast_bound);
    best(error_bound, p.error_bound);
    best(case_bound, p.case_bound);
    best(compare, p.compare);
    best(check, p.check);
  }
};

Pieces measure(const Shape& s, int cases, bool& ok) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const kernels::Options o = v.resolve(s.options);
  const Program p = v.build(o);
  const ParamValues params = {{"seqlen", s.seqlen}, {"d_head", s.d_head}};
  const oracle::AttentionSpec spec = v.spec(o, params);
  const oracle::PrecisionContract ct = v.contract(o);
  kernels::CheckOptions co;
  co.cases = cases;
  co.run.record_trace = false;
  Pieces t;
  // The distributions check draws, in its order (so the pieces time the cases check_kernel runs).
  const std::vector<oracle::Distribution> dists = kernels::check_distributions(spec);
  for (int n = 0; n < cases; ++n) {
    const oracle::Distribution dist = dists[static_cast<size_t>(n) % dists.size()];
    const uint64_t seed = co.seed + static_cast<uint64_t>(n);
    oracle::AttentionInputs in;
    t.generate += seconds([&] { in = oracle::generate_inputs(spec, dist, seed); });
    std::map<std::string, HostTensor> packed;
    t.pack += seconds([&] { packed = kernels::pack_inputs(v.layout_for(o), p, params, spec, in); });
    RunResult run;
    t.interp += seconds([&] { run = run_program(p, params, packed, co.run); });
    if (run.error) {
      ok = false;
      return t;
    }
    std::vector<double> got;
    t.unpack += seconds([&] { got = kernels::unpack_output(v.layout_for(o), spec, run.outputs); });
    oracle::OracleOutput fast;
    const double attention_s = seconds([&] { fast = oracle::fast_attention(spec, in); });
    t.fast += attention_s;
    // As check runs it: the attention and its bound in one pass; fast_bound is the extra time.
    std::vector<double> fb;
    const double both_s = seconds([&] { oracle::fast_attention_with_bound(spec, in, fb); });
    t.fast_bound += std::max(0.0, both_s - attention_s);
    t.error_bound += seconds([&] { oracle::error_bound(ct, spec, in, fast); });
    oracle::ErrorBound eb;
    t.case_bound +=
        seconds([&] { eb.bound = oracle::case_error_bound(ct, spec, in, fast.out, false).bound; });
    for (size_t x = 0; x < fb.size(); ++x) eb.bound[x] += fb[x];
    oracle::Comparison cmp;
    t.compare += seconds([&] { cmp = oracle::compare(spec, got, fast, eb, spec.output_dtype); });
    ok = ok && cmp.pass;
  }
  kernels::CheckResult r;
  t.check = seconds([&] { r = kernels::check_kernel(v, p, o, params, co); });
  ok = ok && r.pass;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 1, cases = 3;
  std::string only;  // run the shapes whose label contains this
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--reps") == 0) reps = std::max(1, std::atoi(argv[a + 1]));
    if (std::strcmp(argv[a], "--cases") == 0) cases = std::max(1, std::atoi(argv[a + 1]));
    if (std::strcmp(argv[a], "--only") == 0) only = argv[a + 1];
    if (std::strcmp(argv[a], "--clock") == 0) g_cpu_clock = std::strcmp(argv[a + 1], "wall") != 0;
  }
  // The headline shape first (issue 42 item 3: both targets at seqlen 4096 x d_head 128).
  const std::vector<Shape> shapes = {
      {"seqlen=4096 d_head=128", 4096, 128, {}},
      {"seqlen=4096 d_head=64", 4096, 64, {}},
      {"seqlen=1024 d_head=64", 1024, 64, {}},
      {"seqlen=4096 d_head=64 use_causal_mask=true", 4096, 64, {{"use_causal_mask", "true"}}},
      {"seqlen=4096 d_head=64 dtype=bf16", 4096, 64, {{"dtype", "bf16"}}},
  };
  bool all_ok = true;
  std::printf(
      "check_bench: sd_attention, %d cases per shape, best of %d, %s seconds summed over the "
      "cases; OpenBLAS %s; load average %s\n",
      cases, reps, g_cpu_clock ? "CPU" : "wall", oracle::blas_core_name().c_str(),
      load_average().c_str());
  for (const Shape& s : shapes) {
    if (!only.empty() && std::string(s.label).find(only) == std::string::npos) continue;
    Pieces best;
    best.generate = best.pack = best.interp = best.unpack = best.fast = best.fast_bound =
        best.error_bound = best.case_bound = best.compare = best.check = 1e300;
    bool ok = true;
    for (int r = 0; r < reps; ++r) best.keep_best(measure(s, cases, ok));
    all_ok = all_ok && ok;
    const double listed = best.generate + best.pack + best.interp + best.unpack +
                          best.fast_oracle() + best.case_bound + best.compare;
    const double r_check = best.check / (best.interp + best.fast_oracle());
    const double r_fast = best.fast_oracle() / best.interp;
    std::printf("%s%s\n", s.label, ok ? "" : "  (RUN OR CHECK FAILED)");
    std::printf("  input generation   %8.3f\n", best.generate);
    std::printf("  pack inputs        %8.3f\n", best.pack);
    std::printf("  interpreter        %8.3f\n", best.interp);
    std::printf("  unpack output      %8.3f\n", best.unpack);
    std::printf("  fast oracle        %8.3f  (fast_attention %.3f + its bound %.3f)\n",
                best.fast_oracle(), best.fast, best.fast_bound);
    std::printf("  case_error_bound   %8.3f\n", best.case_bound);
    std::printf("  error_bound        %8.3f  (a-priori: not in check unless --apriori)\n",
                best.error_bound);
    std::printf("  compare            %8.3f\n", best.compare);
    std::printf("  check_kernel       %8.3f  (pieces above sum to %.3f)\n", best.check, listed);
    std::printf("  summary: check / (interpreter + fast oracle) = %.2f (target <= 1.5): %s\n",
                r_check, r_check <= 1.5 ? "met" : "NOT met");
    std::printf("  summary: fast oracle / interpreter = %.2f (target <= 1.0): %s\n", r_fast,
                r_fast <= 1.0 ? "met" : "NOT met");
    std::fflush(stdout);
  }
  std::printf("load average after: %s\n", load_average().c_str());
  return all_ok ? 0 : 1;
}
