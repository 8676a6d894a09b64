#include "properties/allclose_baseline.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "kernels/layout.h"
#include "kernels/variant.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/domain_search.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace ncv::props {

namespace {

constexpr double kAtol = 1e-2, kRtol = 1e-5;  // allclose(atol=1e-2), numpy's default rtol
constexpr int kInputs = 5;

int64_t nearest_legal(const Param& p, int64_t want) {
  const int64_t m = std::max<int64_t>(p.multiple_of, 1);
  const int64_t lo = (p.lo + m - 1) / m * m, hi = p.hi / m * m;
  return std::clamp((want + m / 2) / m * m, lo, hi);
}

}  // namespace

ParamValues baseline_shape(const KernelUnderTest& k, const kernels::Options& options) {
  const Program& program = k.program(options);
  ParamValues shape;
  for (const Param& p : program.params) {
    const int64_t want = p.name == "seqlen" ? 512 : p.name == "d_head" ? 64 : p.lo;
    shape[p.name] = nearest_legal(p, want);
  }
  // Each param picked alone can break a relation between them (attention_tkg's LNC2 batch split
  // needs 129 <= bs * q_head * s_active): the nearest shape where every relation holds.
  if (!in_domain(program.params, program.relations, shape)) {
    const auto legal = nearest_in_domain(program.params, program.relations, shape);
    if (!legal) {
      std::string near;
      for (const auto& [name, value] : shape) near += " " + name + "=" + std::to_string(value);
      throw std::invalid_argument(k.name + ": no shape of the declared domain near" + near +
                                  " satisfies its relations");
    }
    shape = *legal;
  }
  return shape;
}

BaselineVerdict allclose_baseline(const KernelUnderTest& k) {
  const kernels::Options options = k.variant->resolve(k.fixed);
  BaselineVerdict v;
  v.shape = baseline_shape(k, options);
  const Program& program = k.program(options);
  const oracle::AttentionSpec spec = k.variant->spec(options, v.shape);
  for (int n = 0; n < kInputs; ++n) {
    const oracle::AttentionInputs in =
        oracle::generate_inputs(spec, oracle::Distribution::uniform_positive, 1000 + n);
    RunOptions ro;
    ro.hw = find_hw_config(kernels::default_generation(*k.variant));  // the kernel's own
    const kernels::Layout layout = k.variant->layout_for(options);
    const RunResult run =
        run_program(program, v.shape, kernels::pack_inputs(layout, program, v.shape, spec, in), ro);
    if (run.error) {
      v.caught = v.by_model_check = true;
      v.detail = "model error on input " + std::to_string(n + 1) + ": " + run.error->message;
      return v;
    }
    const std::vector<double> got = kernels::unpack_output(layout, spec, run.outputs);
    const oracle::OracleOutput ref = oracle::fast_attention(spec, in);
    double worst = 0;
    bool close = true;
    for (size_t x = 0; x < got.size(); ++x) {
      const double err = std::fabs(got[x] - ref.out[x]);
      // NaN compares false: allclose treats a NaN as not close.
      if (!(err <= kAtol + kRtol * std::fabs(ref.out[x]))) close = false;
      if (std::isfinite(err)) worst = std::max(worst, err);
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "max |out - ref| %.3g on input %d", worst, n + 1);
    v.detail = buf;
    if (!close) {
      v.caught = true;
      return v;
    }
  }
  return v;
}

}  // namespace ncv::props
