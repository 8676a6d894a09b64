// Every workload builds at its calibration shape and at a small shape and runs trace-only there;
// at a small shape with values each computes what its source computes: GEMM against a naive
// product, Mamba (with the exact scan) against a naive loop over the same recurrence.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/interp/interpreter.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"
#include "workloads/families.h"
#include "workloads/workload.h"

namespace ncv::workloads {
namespace {

// The shapes of calibration/latencies/trn1-{gemm,mamba}-autocomp.json (and of
// trn1-matmul-tutorial.json, the same as the GEMM chain's).
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
  EXPECT_EQ(names.size(), 22u);
  EXPECT_EQ(find_workload("no_such_workload"), nullptr);
}

// Every workload program (timing and exact-scan builds) prints to .nkir text and parses back
// to the same program, as the registered kernels do.
TEST(Workloads, EveryProgramRoundTripsThroughItsTextForm) {
  for (const Workload& w : registry()) {
    for (bool exact : {false, true}) {
      BuildOptions o;
      o.exact_scan = exact;
      const Program p = w.build(o);
      const std::string text = print_program(p);
      EXPECT_TRUE(parse_program(text, w.name) == p) << w.name << " exact_scan=" << exact;
      EXPECT_EQ(print_program(parse_program(text, w.name)), text) << w.name;
    }
  }
}

// The shapes of calibration/latencies/trn1-mamba-tutorial.json: each tutorial kernel at every
// shape a latency of it was published for.
std::vector<ParamValues> mamba_tutorial_shapes(const std::string& name) {
  auto shape = [](int64_t channels, int64_t seq_len) {
    return ParamValues{
        {"batch", 1}, {"channels", channels}, {"seq_len", seq_len}, {"state_size", 16}};
  };
  if (name == "mamba_tutorial_v1") return {shape(256, 512), shape(4096, 512)};
  if (name == "mamba_tutorial_v2") return {shape(4096, 512)};
  return {shape(4096, 8192)};  // mamba_tutorial_v3
}

// calibration/latencies/trn1-instruction-anchor.json: PERF-FIG17's 64 partitions x 8192 elements.
const ParamValues kFig17Shape = {{"P", 64}, {"N", 8192}};

TEST(Workloads, EveryWorkloadRunsTraceOnlyAtItsCalibrationShape) {
  for (const Workload& w : registry()) {
    const Program p = w.build({});
    std::vector<ParamValues> shapes = {w.family == "gemm" ? kGemmCalibration : kMambaCalibration};
    if (w.name.starts_with("mamba_tutorial_")) shapes = mamba_tutorial_shapes(w.name);
    if (w.family == "anchor") shapes = {kFig17Shape};
    for (const ParamValues& params : shapes) {
      RunOptions o;
      o.compute_values = false;
      const RunResult r = run_program(p, params, {}, o);
      EXPECT_FALSE(r.error) << w.name << ": " << r.error->message;
      EXPECT_GT(r.instances, 0u) << w.name;
    }
  }
}

// Runs a GEMM program at (K, M, N) on random inputs and checks sampled outputs against a naive
// double-precision product. k_block > 0: the program adds the partial product of each k_block
// rows of K into a bf16 result (the fully optimised tutorial version), so each of those sums is
// rounded to bf16 (unit roundoff 2^-8) and the bound grows by 2^-8 of each running sum.
void expect_naive_product(const Program& p, const std::string& name, int64_t K, int64_t M,
                          int64_t N, int64_t k_block = 0) {
  const ParamValues params = {{"K", K}, {"M", M}, {"N", N}};
  std::mt19937 rng(7);
  std::map<std::string, HostTensor> in;
  in["lhsT"] = random_tensor(p, "lhsT", params, rng, -1, 1);
  in["rhs"] = random_tensor(p, "rhs", params, rng, -1, 1);
  const RunResult r = run_program(p, params, in);
  ASSERT_FALSE(r.error) << name << ": " << r.error->message;
  const HostTensor& out = r.outputs.at("result");
  for (int64_t m = 0; m < M; m += 37) {
    for (int64_t n = 0; n < N; n += 29) {
      double want = 0, rounded = 0;
      for (int64_t k = 0; k < K; ++k) {
        want += double(in["lhsT"].get(k * M + m)) * double(in["rhs"].get(k * N + n));
        if (k_block > 0 && (k + 1) % k_block == 0) rounded += std::abs(want);
      }
      // bf16 output: 2^-8 relative plus the fp32 accumulation, and the bf16 partial sums
      const double tol = 1e-2 * std::max(1.0, std::abs(want)) + std::ldexp(rounded, -8);
      EXPECT_NEAR(out.get(m * N + n), want, tol) << name << " at (" << m << ", " << n << ")";
    }
  }
}

// The M and N block of each GEMM workload (the multiple its params must be).
std::pair<int64_t, int64_t> gemm_block(const std::string& name) {
  if (name == "gemm_autocomp_c0" || name == "matmul_tutorial_tiled" ||
      name == "matmul_tutorial_hoist_load")
    return {128, 512};
  if (name == "gemm_autocomp_c1") return {128, 1024};
  if (name == "gemm_autocomp_c2" || name == "matmul_tutorial_block_free") return {256, 1024};
  return {512, 1024};  // gemm_autocomp_c3 ... c5
}

TEST(Workloads, GemmMatchesANaiveProduct) {
  // Two blocks in M and N, three k tiles: every loop and the k = 0 peel run more than once.
  for (const Workload& w : registry()) {
    if (w.family != "gemm") continue;
    // Its blocks are 2048 x 1024 x 1024: too big to interpret twice over; checked below at
    // smaller blocks of the same builder.
    if (w.name == "matmul_tutorial_fully_optimized") continue;
    const auto [bm, bn] = gemm_block(w.name);
    expect_naive_product(w.build({}), w.name, 384, 2 * bm, 2 * bn);
  }
}

TEST(Workloads, MatmulTutorialFullyOptimizedMatchesANaiveProductAtSmallBlocks) {
  // TILES_IN_BLOCK_M/N/K = 2, 2, 2 (blocks 256 x 1024 x 256): two blocks in every dimension, so
  // the sequential K blocks accumulate into the SBUF result and every loop runs twice.
  expect_naive_product(build_matmul_tutorial_fully_optimized(2, 2, 2),
                       "matmul_tutorial_fully_optimized(2, 2, 2)", 512, 512, 2048, 256);
  // The registered blocks (16, 2, 8) at one block each way but two K blocks.
  const Workload* w = find_workload("matmul_tutorial_fully_optimized");
  ASSERT_NE(w, nullptr);
  expect_naive_product(w->build({}), w->name, 2048, 2048, 1024, 1024);
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

// The anchor's one Vector instruction adds its two inputs, elementwise.
TEST(Workloads, TensorTensorAnchorAddsItsInputs) {
  const Workload* w = find_workload("vector_tensor_tensor_anchor");
  ASSERT_NE(w, nullptr);
  const Program p = w->build({});
  const ParamValues params = {{"P", 3}, {"N", 5}};
  std::mt19937 rng(11);
  std::map<std::string, HostTensor> in;
  in["a"] = random_tensor(p, "a", params, rng, -1, 1);
  in["b"] = random_tensor(p, "b", params, rng, -1, 1);
  const RunResult r = run_program(p, params, in);
  ASSERT_FALSE(r.error) << r.error->message;
  for (int64_t i = 0; i < 15; ++i) {
    EXPECT_EQ(r.outputs.at("out").get(i), in["a"].get(i) + in["b"].get(i)) << i;
  }
}

}  // namespace
}  // namespace ncv::workloads
