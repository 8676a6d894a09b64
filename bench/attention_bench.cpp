// Whole-attention speed at the calibration shape, S = 4096, d = 64 (issues 3 and 4,
// bench/README.md), all measured in one run on one thread:
//   - sd_attention's functional time on the interpreter (values computed, no trace), and its
//     rate counting only the two matmuls' FLOPs (QK^T and PV: 4 S^2 d);
//   - OpenBLAS sgemm doing those two matmuls (the FLOP-rate yardstick; target >= 25%);
//   - the fast oracle on the same inputs (target <= 2x the interpreter's time).
// Each is the best of `--reps` runs (default 5); the interpreter and OpenBLAS runs alternate.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/layout.h"
#include "kernels/registry.h"
#include "oracle/blas_threads.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
double best_seconds(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock_type::now();
    f();
    best = std::min(best, std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--reps") == 0) reps = std::max(1, std::atoi(argv[a + 1]));
  }
  openblas_set_num_threads(1);
  using namespace ncv;
  const int64_t S = 4096, d = 64;
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  const ParamValues params = {{"seqlen", S}, {"d_head", d}};
  const oracle::AttentionSpec spec = v.spec(o, params);
  const oracle::AttentionInputs in =
      oracle::generate_inputs(spec, oracle::Distribution::uniform, 1);
  const auto inputs = kernels::pack_inputs(v.layout_for(o), p, params, spec, in);
  RunOptions ro;
  ro.record_trace = false;
  bool ok = true;

  // The two matmuls in fp32: scores = Q K^T [S, S], out = P V [S, d].
  std::vector<float> q(in.q.begin(), in.q.end()), k(in.k.begin(), in.k.end()),
      vv(in.v.begin(), in.v.end()), scores(static_cast<size_t>(S * S)),
      out(static_cast<size_t>(S * d));
  const int n = static_cast<int>(S), dh = static_cast<int>(d);
  // The interpreter and OpenBLAS run alternately, each keeping its best time, so that both see
  // the same machine (a shared host's speed drifts over seconds).
  double t_interp = 1e300, t_blas = 1e300;
  for (int r = 0; r < reps; ++r) {
    t_interp = std::min(
        t_interp, best_seconds(1, [&] { ok = ok && !run_program(p, params, inputs, ro).error; }));
    t_blas = std::min(t_blas, best_seconds(1, [&] {
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, dh, 1.0f,
                                    q.data(), dh, k.data(), dh, 0.0f, scores.data(), n);
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, dh, n, 1.0f,
                                    scores.data(), n, vv.data(), dh, 0.0f, out.data(), dh);
                      }));
  }
  const double t_fast = best_seconds(reps, [&] { (void)oracle::fast_attention(spec, in); });

  const double flops = 4.0 * static_cast<double>(S) * static_cast<double>(S) * d;
  std::printf("attention S=%lld d=%lld, one thread, best of %d\n", static_cast<long long>(S),
              static_cast<long long>(d), reps);
  std::printf("  interpreter sd_attention (values, no trace): %8.3f s  %6.2f GFLOP/s%s\n", t_interp,
              flops / t_interp * 1e-9, ok ? "" : "  (RUN FAILED)");
  std::printf(
      "  OpenBLAS sgemm, the two matmuls:             %8.3f s  %6.2f GFLOP/s  (kernels: %s)\n",
      t_blas, flops / t_blas * 1e-9, ncv::oracle::blas_core_name().c_str());
  std::printf("  fast oracle (double, dgemm):                 %8.3f s\n", t_fast);
  std::printf("summary: interpreter / OpenBLAS FLOP rate = %.1f%% (target >= 25%%): %s\n",
              100.0 * t_blas / t_interp, t_blas / t_interp >= 0.25 ? "met" : "NOT met");
  std::printf("summary: fast oracle / interpreter time = %.2fx (target <= 2x): %s\n",
              t_fast / t_interp, t_fast <= 2 * t_interp ? "met" : "NOT met");
  return ok ? 0 : 1;
}
