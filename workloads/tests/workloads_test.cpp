// Every workload builds at its calibration shape and at a small shape and runs trace-only there;
// at a small shape with values each computes what its source computes: GEMM against a naive
// product, Mamba (with the exact scan) against a naive loop over the same recurrence.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/interp/interpreter.h"
#include "workloads/workload.h"

namespace ncv::workloads {
namespace {

// The shapes of calibration/latencies/trn1-{gemm,mamba}-autocomp.json.
const ParamValues kGemmCalibration = {{"K", 8192}, {"M", 4096}, {"N", 8192}};
const ParamValues kMambaCalibration = {
    {"batch", 1}, {"channels", 256}, {"seq_len", 2048}, {"state_size", 16}};

HostTensor random_tensor(const Program& p, const std::string& name, const ParamValues& params,
                         std::mt19937& rng, float lo, float hi) {
  for (TensorId t = 0; t < p.tensors.size(); ++t) {
    if (p.tensors[t].name != name) continue;
    HostTensor h(p.tensors[t].dtype, concrete_shape(p, t, params));
    std::uniform_real_distribution<float> d(lo, hi);
    for (int64_t i = 0; i < h.num_elements(); ++i) h.set(i, d(rng));
    return h;
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

TEST(Workloads, RegistryNamesAreUniqueAndDescribed) {
  std::set<std::string> names;
  for (const Workload& w : registry()) {
    EXPECT_TRUE(names.insert(w.name).second) << w.name;
    EXPECT_FALSE(w.source.empty()) << w.name;
    EXPECT_FALSE(w.notes.empty()) << w.name;
    EXPECT_EQ(find_workload(w.name), &w);
  }
  EXPECT_EQ(names.size(), 14u);
  EXPECT_EQ(find_workload("no_such_workload"), nullptr);
}

TEST(Workloads, EveryWorkloadRunsTraceOnlyAtItsCalibrationShape) {
  for (const Workload& w : registry()) {
    const Program p = w.build({});
    const ParamValues& params = w.family == "gemm" ? kGemmCalibration : kMambaCalibration;
    RunOptions o;
    o.compute_values = false;
    const RunResult r = run_program(p, params, {}, o);
    EXPECT_FALSE(r.error) << w.name << ": " << r.error->message;
    EXPECT_GT(r.instances, 0u) << w.name;
  }
}

TEST(Workloads, GemmMatchesANaiveProduct) {
  // Two blocks in M and N, three k tiles: every loop and the k = 0 peel run more than once.
  for (const Workload& w : registry()) {
    if (w.family != "gemm") continue;
    const Program p = w.build({});
    const int64_t gm = w.name == "gemm_autocomp_c0" || w.name == "gemm_autocomp_c1" ? 1
                       : w.name == "gemm_autocomp_c2"                               ? 2
                                                                                    : 4;
    const int64_t gn = w.name == "gemm_autocomp_c0" ? 1 : 2;
    const int64_t K = 384, M = 2 * 128 * gm, N = 2 * 512 * gn;
    const ParamValues params = {{"K", K}, {"M", M}, {"N", N}};
    std::mt19937 rng(7);
    std::map<std::string, HostTensor> in;
    in["lhsT"] = random_tensor(p, "lhsT", params, rng, -1, 1);
    in["rhs"] = random_tensor(p, "rhs", params, rng, -1, 1);
    const RunResult r = run_program(p, params, in);
    ASSERT_FALSE(r.error) << w.name << ": " << r.error->message;
    const HostTensor& out = r.outputs.at("result");
    for (int64_t m = 0; m < M; m += 37) {
      for (int64_t n = 0; n < N; n += 29) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k) {
          want += double(in["lhsT"].get(k * M + m)) * double(in["rhs"].get(k * N + n));
        }
        // bf16 output: 2^-8 relative plus the fp32 accumulation
        EXPECT_NEAR(out.get(m * N + n), want, 1e-2 * std::max(1.0, std::abs(want)))
            << w.name << " at (" << m << ", " << n << ")";
      }
    }
  }
}

// out[b, c, t] = sum_s C[b,s,t] * h_s[t], h_s[t] = exp(delta*A[c,s]) h_s[t-1] + delta*u*B[b,s,t]
std::vector<float> mamba_reference(const std::map<std::string, HostTensor>& in, int64_t B,
                                   int64_t CH, int64_t L, int64_t S) {
  std::vector<float> out(B * CH * L, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < CH; ++c) {
      for (int64_t s = 0; s < S; ++s) {
        float h = 0;
        for (int64_t t = 0; t < L; ++t) {
          const float d = in.at("delta").get((b * CH + c) * L + t);
          const float u = in.at("u").get((b * CH + c) * L + t);
          const float a = std::exp(d * in.at("A").get(c * S + s));
          const float bu = d * u * in.at("B").get((b * S + s) * L + t);
          h = a * h + bu;
          out[(b * CH + c) * L + t] += h * in.at("C").get((b * S + s) * L + t);
        }
      }
    }
  }
  return out;
}

TEST(Workloads, MambaWithTheExactScanMatchesANaiveRecurrence) {
  // Two batches, two channel tiles, two 512-wide chunks (the carry crosses a chunk), four states
  // (two state pairs: the double-buffered loop and its peeled last pair both run).
  const int64_t B = 2, CH = 256, L = 1024, S = 4;
  const ParamValues params = {{"batch", B}, {"channels", CH}, {"seq_len", L}, {"state_size", S}};
  for (const Workload& w : registry()) {
    if (w.family != "mamba") continue;
    const Program p = w.build({.exact_scan = true});
    std::mt19937 rng(11);
    std::map<std::string, HostTensor> in;
    // the harness's ranges: delta, u, B, C in [0, 1), A in (-1, 0]
    in["delta"] = random_tensor(p, "delta", params, rng, 0, 1);
    in["u"] = random_tensor(p, "u", params, rng, 0, 1);
    in["A"] = random_tensor(p, "A", params, rng, -1, 0);
    in["B"] = random_tensor(p, "B", params, rng, 0, 1);
    in["C"] = random_tensor(p, "C", params, rng, 0, 1);
    const RunResult r = run_program(p, params, in);
    ASSERT_FALSE(r.error) << w.name << ": " << r.error->message;
    const std::vector<float> want = mamba_reference(in, B, CH, L, S);
    const HostTensor& out = r.outputs.at("out");
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::abs(out.get(int64_t(i)) - want[i]) > 1e-4f * std::max(1.0f, std::abs(want[i]))) {
        if (++bad <= 3)
          ADD_FAILURE() << w.name << " at " << i << ": " << out.get(int64_t(i)) << " vs "
                        << want[i];
      }
    }
    EXPECT_EQ(bad, 0) << w.name;
  }
}

TEST(Workloads, MambaTimingProgramsRunAtASmallShape) {
  const ParamValues params = {{"batch", 1}, {"channels", 128}, {"seq_len", 512}, {"state_size", 2}};
  for (const Workload& w : registry()) {
    if (w.family != "mamba") continue;
    RunOptions o;
    o.compute_values = false;
    const RunResult r = run_program(w.build({}), params, {}, o);
    EXPECT_FALSE(r.error) << w.name << ": " << r.error->message;
  }
}

}  // namespace
}  // namespace ncv::workloads
