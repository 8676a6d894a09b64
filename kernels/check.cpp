#include "kernels/check.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

OracleReference oracle_reference(const oracle::PrecisionContract& ct,
                                 const oracle::AttentionSpec& spec,
                                 const oracle::AttentionInputs& in, double exact_max_macs) {
  OracleReference r;
  const double macs = 2.0 * static_cast<double>(spec.rows()) * static_cast<double>(spec.seqlen_kv) *
                      static_cast<double>(spec.d_head);
  r.exact = macs <= exact_max_macs;
  r.out = r.exact ? oracle::exact_attention(spec, in) : oracle::fast_attention(spec, in);
  r.bound = oracle::error_bound(ct, spec, in, r.out);
  if (!r.exact) {
    const std::vector<double> fb = oracle::fast_oracle_bound(spec, in, r.out);
    for (size_t x = 0; x < fb.size(); ++x) r.bound.bound[x] += fb[x];
  }
  return r;
}

CaseResult check_inputs(const Variant& v, const Program& program, const Options& options,
                        const ParamValues& params, const oracle::AttentionSpec& spec,
                        const oracle::AttentionInputs& in, const CheckOptions& opts) {
  CaseResult c;
  const RunResult run =
      run_program(program, params, pack_inputs(v.layout, program, params, spec, in), opts.run);
  if (run.error) {
    c.run_error = *run.error;
    return c;
  }
  const std::vector<double> got = unpack_output(v.layout, spec, run.outputs);
  const OracleReference ref =
      oracle_reference(v.contract(options), spec, in, opts.exact_oracle_max_macs);
  c.exact_oracle = ref.exact;
  c.comparison = oracle::compare(spec, got, ref.out, ref.bound, spec.output_dtype);
  c.pass = c.comparison.pass;
  return c;
}

CheckResult check_kernel_with(const Variant& v, const Program& program, const Options& options,
                              const ParamValues& params, const InputSource& inputs,
                              const CheckOptions& opts) {
  CheckResult res;
  res.kernel = program.name;
  res.params = params;
  res.options = options;
  res.contract = v.contract(options);
  check_params(program, params);
  const oracle::AttentionSpec spec = v.spec(options, params);
  spec.validate();
  res.pass = opts.cases > 0;
  for (int n = 0; n < opts.cases; ++n) {
    InputSet set = inputs(spec, n);
    CaseResult c = check_inputs(v, program, options, params, spec, set.values, opts);
    c.distribution = std::move(set.label);
    c.seed = set.seed;
    // A case that fails on non-finite or uncertified elements, whose finite ratios are all
    // within bound, would otherwise report a reassuring worst ratio: it counts as infinite.
    const bool fails_off_ratio = !c.pass && c.comparison.max_normalized <= 1;
    res.worst_normalized = c.run_error || fails_off_ratio
                               ? kInf
                               : std::fmax(res.worst_normalized, c.comparison.max_normalized);
    res.pass = res.pass && c.pass;
    res.cases.push_back(std::move(c));
    if (opts.on_case) opts.on_case(n + 1);
  }
  return res;
}

CheckResult check_kernel(const Variant& v, const Program& program, const Options& options,
                         const ParamValues& params, const CheckOptions& opts) {
  const auto& dists = oracle::all_distributions();
  return check_kernel_with(
      v, program, options, params,
      [&](const oracle::AttentionSpec& spec, int n) {
        const oracle::Distribution dist = dists[static_cast<size_t>(n) % dists.size()];
        const uint64_t seed = opts.seed + static_cast<uint64_t>(n);
        return InputSet{oracle::distribution_name(dist), seed,
                        oracle::generate_inputs(spec, dist, seed)};
      },
      opts);
}

std::string CheckResult::summary() const {
  std::string s;
  for (const CaseResult& c : cases) {
    char head[96];
    std::snprintf(head, sizeof head, "  case seed=%llu %-16s %s ",
                  static_cast<unsigned long long>(c.seed), c.distribution.c_str(),
                  c.exact_oracle ? "exact " : "fast  ");
    s += head;
    s += c.run_error ? "model error: " + c.run_error->message : c.comparison.one_line();
    s += c.pass ? "\n" : "  FAIL\n";
  }
  char tail[160];
  std::snprintf(tail, sizeof tail, "%s: %s, worst normalized error %.3g (contract %s, %zu cases)\n",
                kernel.c_str(), pass ? "PASS" : "FAIL", worst_normalized, contract.name.c_str(),
                cases.size());
  return s + tail;
}

nlohmann::json CheckResult::to_json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["params"] = params;
  j["options"] = options;
  j["contract"] = contract.to_json();
  j["pass"] = pass;
  j["worst_normalized"] =
      std::isfinite(worst_normalized) ? nlohmann::json(worst_normalized) : nlohmann::json("inf");
  nlohmann::json cs = nlohmann::json::array();
  for (const CaseResult& c : cases) {
    nlohmann::json e;
    e["distribution"] = c.distribution;
    e["seed"] = c.seed;
    e["oracle"] = c.exact_oracle ? "exact" : "fast";
    e["pass"] = c.pass;
    if (c.run_error) {
      e["model_error"] = c.run_error->message;
    } else {
      e["comparison"] = c.comparison.to_json();
    }
    cs.push_back(e);
  }
  j["cases"] = cs;
  return j;
}

}  // namespace ncv::kernels
