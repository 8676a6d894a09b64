#include "check/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "kernels/exercised.h"
#include "kernels/registry.h"
#include "model/ir/random_draws.h"
#include "oracle/bias_values.h"
#include "oracle/case_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double median(std::vector<double> x) {
  if (x.empty()) return 0;
  const size_t mid = x.size() / 2;
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(mid), x.end());
  return x[mid];
}

nlohmann::json finite_or_inf(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json("inf");
}

}  // namespace

OracleReference oracle_reference(const oracle::PrecisionContract& ct,
                                 const oracle::AttentionSpec& spec,
                                 const oracle::AttentionInputs& in, double exact_max_macs,
                                 const std::vector<oracle::PrecisionContract>& also_accept,
                                 bool with_apriori, bool with_lse, bool with_reference,
                                 bool with_stats) {
  OracleReference r;
  const double macs = 2.0 * static_cast<double>(spec.rows()) * static_cast<double>(spec.seqlen_kv) *
                      static_cast<double>(spec.d_head);
  r.exact = macs <= exact_max_macs;
  std::vector<double> fb, fb_lse;  // the fast oracle's own bounds
  oracle::FastStatBounds fb_stats;
  r.out = r.exact ? oracle::exact_attention(spec, in)
                  : oracle::fast_attention_with_bound(spec, in, fb, with_lse ? &fb_lse : nullptr,
                                                      with_stats ? &fb_stats : nullptr);
  oracle::CaseBound cb = oracle::case_error_bound(ct, spec, in, r.out.out, with_reference);
  for (const oracle::PrecisionContract& other : also_accept) {
    if (other.to_json() == ct.to_json()) continue;
    const oracle::CaseBound ob = oracle::case_error_bound(other, spec, in, r.out.out, false);
    for (size_t x = 0; x < cb.bound.size(); ++x) cb.bound[x] = std::fmax(cb.bound[x], ob.bound[x]);
  }
  // The a-priori bound costs as much as the case bound and is larger wherever the case bound is
  // finite: it is computed where the case bound leaves elements uncertified (an interval that may
  // overflow), or when asked for (its ratio is reported).
  // The lse and statistics bounds are the a-priori analysis's (the case bound covers out only).
  const bool apriori = with_apriori || with_lse || with_stats || cb.uncertified > 0;
  if (apriori) {
    oracle::ErrorBound eb = oracle::error_bound(ct, spec, in, r.out);
    r.apriori = std::move(eb.bound);
    if (with_lse) {
      r.lse_bound = std::move(eb.lse);
      for (size_t x = 0; x < fb_lse.size(); ++x) r.lse_bound[x] += fb_lse[x];
    }
    if (with_stats) {
      r.row_max_bound = std::move(eb.row_max);
      r.recip_sum_bound = std::move(eb.recip_sum);
      for (size_t x = 0; x < fb_stats.row_max.size(); ++x) {
        r.row_max_bound[x] += fb_stats.row_max[x];
        r.recip_sum_bound[x] += fb_stats.recip_sum[x];
      }
    }
  }
  if (!r.exact) {
    for (size_t x = 0; x < fb.size(); ++x) {
      if (apriori) r.apriori[x] += fb[x];
      cb.bound[x] += fb[x];
    }
  }
  // Both bounds are sound for a kernel honouring the contract, so their minimum is too.
  r.bound.bound = std::move(cb.bound);
  r.bound.uncertified = 0;
  for (size_t x = 0; x < r.bound.bound.size(); ++x) {
    if (apriori) r.bound.bound[x] = std::fmin(r.bound.bound[x], r.apriori[x]);
    r.bound.uncertified += std::isinf(r.bound.bound[x]) ? 1 : 0;
  }
  r.reference = std::move(cb.reference);
  return r;
}

namespace {

// max |got - exact| / (2 max |reference - exact|) over elements where all three are finite.
double fa_ratio(const std::vector<double>& got, const std::vector<double>& exact,
                const std::vector<double>& reference) {
  double err = 0, ref_err = 0;
  for (size_t x = 0; x < exact.size(); ++x) {
    if (!std::isfinite(got[x]) || !std::isfinite(exact[x]) || !std::isfinite(reference[x])) {
      continue;
    }
    err = std::fmax(err, std::fabs(got[x] - exact[x]));
    ref_err = std::fmax(ref_err, std::fabs(reference[x] - exact[x]));
  }
  if (err == 0) return 0;
  return ref_err == 0 ? kInf : err / (2 * ref_err);
}

// A cached statistic (the row max, or 1 / the row sum when `recip`) as stored: the kernel's
// values `got` against the oracle's under `bound`, widened by the store's rounding when the tensor
// is narrower than fp32 (the bound is of the fp32 value). Rows without a visible key or a sink
// are not compared (got is set to the oracle's value there): nki-library's reference takes the
// max of an empty row, so no value is the library's.
oracle::Comparison compare_stat(const oracle::AttentionSpec& spec, const LseOutput& got,
                                const oracle::OracleOutput& out, std::vector<double> bound,
                                bool recip) {
  std::vector<double> exact(out.row_max.size()), values = got.values;
  const double u = got.dtype == DType::fp32 ? 0.0 : oracle::unit_roundoff(got.dtype);
  const double eta = got.dtype == DType::fp32 ? 0.0 : oracle::subnormal_half_spacing(got.dtype);
  for (size_t r = 0; r < exact.size(); ++r) {
    exact[r] = recip ? 1.0 / out.row_sum[r] : out.row_max[r];
    if (out.row_max[r] == -kInf) values[r] = exact[r];
    if (std::isfinite(exact[r])) bound[r] += u * (std::fabs(exact[r]) + bound[r]) + eta;
  }
  return oracle::compare_rows(spec, values, exact, bound, got.dtype);
}

}  // namespace

CaseResult check_inputs(const Variant& v, const Program& program, const Options& options,
                        const ParamValues& params, const oracle::AttentionSpec& spec,
                        const oracle::AttentionInputs& in, const CaseDraws& draws,
                        const CheckOptions& opts) {
  note_exercised(program.name);
  CaseResult c;
  const Layout layout = v.layout_for(options);
  // A kernel over capacity runs with spills on hardware: its values are checked, its verdict is
  // unknown (RunOptions::spills_allowed).
  RunOptions run_options = opts.run;
  run_options.spills_allowed = true;
  const DeterminismResult runs =
      run_schedules(program, params, pack_inputs(layout, program, params, spec, in, draws),
                    run_options, std::max(opts.determinism_runs, 1));
  const RunResult& run = runs.first;
  c.nondeterministic = runs.mismatch;
  c.determinism_runs = runs.runs;
  if (run.error) {
    c.run_error = *run.error;
    // What the documentation leaves undefined, the model cannot judge: the hardware may give a
    // result the kernel handles (model/isa/check_kind.h undefined_result). Every other dynamic
    // error breaks a documented rule and fails the case.
    if (run.error->kind == CheckKind::undefined_result && !c.nondeterministic) {
      c.unknown =
          "the run reached a result the documentation leaves undefined, which the model "
          "cannot judge: " +
          run.error->message;
    }
    return c;
  }
  c.spill = run.spill;
  const std::vector<double> got = unpack_output(layout, spec, run.outputs);
  const std::optional<LseOutput> lse = unpack_lse(layout, spec, run.outputs);
  std::optional<LseOutput> neg_max = unpack_row_output(layout.neg_max, spec, run.outputs);
  const std::optional<LseOutput> recip = unpack_row_output(layout.recip_sum, spec, run.outputs);
  const OracleReference ref = oracle_reference(
      v.contract(options), spec, in, opts.exact_oracle_max_macs, opts.also_accept, opts.apriori,
      lse.has_value(), opts.fa_ratio, neg_max.has_value() || recip.has_value());
  c.exact_oracle = ref.exact;
  c.comparison = oracle::compare(spec, got, ref.out, ref.bound, spec.output_dtype);
  if (lse) c.lse = oracle::compare_lse(spec, lse->values, ref.out, ref.lse_bound, lse->dtype);
  if (neg_max) {
    for (double& x : neg_max->values) x = -x;  // the kernel stores -max (exact)
    c.row_max = compare_stat(spec, *neg_max, ref.out, ref.row_max_bound, false);
  }
  if (recip) c.recip_sum = compare_stat(spec, *recip, ref.out, ref.recip_sum_bound, true);
  if (!ref.apriori.empty()) {
    oracle::ErrorBound apriori;
    apriori.bound = ref.apriori;
    c.apriori_normalized =
        oracle::compare(spec, got, ref.out, apriori, spec.output_dtype).max_normalized;
  }
  if (opts.fa_ratio) c.fa_ratio = fa_ratio(got, ref.out.out, ref.reference);
  c.pass = c.comparison.pass && (!c.lse || c.lse->pass) && (!c.row_max || c.row_max->pass) &&
           (!c.recip_sum || c.recip_sum->pass) && !c.nondeterministic;
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
  if (const std::optional<std::string> why = random_values_reason(program)) {
    throw UnknownVerdict(program.name + ": unknown, no case run: " + *why);
  }
  const oracle::AttentionSpec spec = v.spec(options, params);
  spec.validate();
  res.pass = opts.cases > 0;
  bool failed = false;
  for (int n = 0; n < opts.cases; ++n) {
    InputSet set = inputs(spec, n);
    oracle::AttentionSpec case_spec = set.spec ? std::move(*set.spec) : spec;
    if (set.spec) case_spec.validate();
    if (set.bias) case_spec.bias = std::move(*set.bias);
    CaseResult c =
        check_inputs(v, program, options, params, case_spec, set.values, set.draws, opts);
    c.distribution = std::move(set.label);
    c.seed = set.seed;
    // A case that fails on non-finite or uncertified elements, whose finite ratios are all
    // within bound, would otherwise report a reassuring worst ratio: it counts as infinite.
    double ratio = std::fmax(c.comparison.max_normalized, c.lse ? c.lse->max_normalized : 0.0);
    for (const auto* stat : {&c.row_max, &c.recip_sum}) {
      if (*stat) ratio = std::fmax(ratio, (*stat)->max_normalized);
    }
    const bool fails_off_ratio = !c.pass && ratio <= 1;
    res.worst_normalized =
        c.run_error || fails_off_ratio ? kInf : std::fmax(res.worst_normalized, ratio);
    res.pass = res.pass && c.pass;
    failed = failed || c.failed();
    if (!res.unknown && c.unknown) res.unknown = *c.unknown;
    if (!res.unknown && c.pass && c.spill) res.unknown = c.spill->detail;
    res.cases.push_back(std::move(c));
    if (opts.on_case) opts.on_case(n + 1);
    if (opts.stop_on_failure && failed) break;
  }
  if (failed) res.unknown.reset();  // a failing case decides
  if (res.unknown) res.pass = false;
  std::vector<double> cr, ar, fr;
  for (const CaseResult& c : res.cases) {
    if (c.run_error) continue;
    cr.push_back(c.comparison.max_normalized);
    if (!std::isnan(c.apriori_normalized)) ar.push_back(c.apriori_normalized);
    if (!std::isnan(c.fa_ratio)) fr.push_back(c.fa_ratio);
  }
  res.median_case_ratio = median(cr);
  res.median_apriori_ratio = ar.empty() ? std::nan("") : median(ar);
  res.median_fa_ratio = fr.empty() ? std::nan("") : median(fr);
  return res;
}

std::vector<oracle::PrecisionContract> family_contracts(const Variant& v, const Options& options) {
  std::vector<oracle::PrecisionContract> out = {v.contract(options)};
  for (const Variant& w : registry()) {
    if (w.family != v.family || w.name == v.name) continue;
    bool offers = true;
    for (const auto& [name, value] : options) offers = offers && w.offers(name, value);
    if (!offers) continue;
    oracle::PrecisionContract c = w.contract(w.resolve(options));
    nlohmann::json key = c.to_json();
    key.erase("name");
    const bool seen = std::any_of(out.begin(), out.end(), [&](const oracle::PrecisionContract& o) {
      nlohmann::json k = o.to_json();
      k.erase("name");
      return k == key;
    });
    if (!seen) out.push_back(std::move(c));
  }
  return out;
}

const std::vector<oracle::Distribution>& check_distributions() {
  return oracle::gate_distributions();
}

std::vector<oracle::Distribution> check_distributions(const oracle::AttentionSpec& spec) {
  std::vector<oracle::Distribution> d = check_distributions();
  if (spec.mask.kind == oracle::MaskKind::kv_cache) {
    const auto it = std::find(d.begin(), d.end(), oracle::Distribution::stale_cache);
    if (it != d.end()) std::rotate(d.begin(), it, it + 1);
  }
  return d;
}

std::vector<oracle::Distribution> heavy_check_distributions(const Variant& v, const Options& o) {
  std::vector<oracle::Distribution> d = check_distributions();
  if (v.contract(o).online_tile > 0) {
    const auto it = std::find(d.begin(), d.end(), oracle::Distribution::rowmax_across_tiles);
    if (it != d.end()) std::rotate(d.begin(), it, it + 1);
  }
  return d;
}

CheckResult check_kernel(const Variant& v, const Program& program, const Options& options,
                         const ParamValues& params, const CheckOptions& opts) {
  // Params outside the domain are the caller's InputError before the spec reads them.
  check_params(program, params);
  const oracle::AttentionSpec base = v.spec(options, params);
  const auto dists = opts.distributions.empty() ? check_distributions(base) : opts.distributions;
  return check_kernel_with(
      v, program, options, params,
      [&](const oracle::AttentionSpec& spec, int n) {
        const oracle::Distribution dist = dists[static_cast<size_t>(n) % dists.size()];
        const uint64_t seed = opts.seed + static_cast<uint64_t>(n);
        // A variant with per-case problem values (cache positions, sinks) draws them from the
        // case's seed, before the inputs that may depend on them.
        std::optional<oracle::AttentionSpec> drawn;
        CaseDraws draws;
        if (v.draw_case) {
          drawn = spec;
          draws = v.draw_case(*drawn, params, seed);
        }
        const oracle::AttentionSpec& cs = drawn ? *drawn : spec;
        InputSet set{oracle::distribution_name(dist),
                     seed,
                     oracle::generate_inputs(cs, dist, seed),
                     std::nullopt,
                     std::move(drawn),
                     std::move(draws)};
        // A kernel that takes a bias gets a new one per case, from the case's seed.
        if (!spec.bias.empty()) set.bias = oracle::generate_bias(spec, seed);
        return set;
      },
      opts);
}

std::string CaseResult::verdict_line() const {
  std::string s = unknown     ? "undefined result, unknown: " + run_error->message
                  : run_error ? "model error: " + run_error->message
                              : comparison.one_line();
  if (nondeterministic)
    s += (s.empty() ? "" : "; ") + ("nondeterministic: " + nondeterministic->message);
  if (spill) s += "; needs spills: unknown";
  return s;
}

std::string CheckResult::summary() const {
  std::string s;
  for (const CaseResult& c : cases) {
    char head[96];
    std::snprintf(head, sizeof head, "  case seed=%llu %-16s %s ",
                  static_cast<unsigned long long>(c.seed), c.distribution.c_str(),
                  c.exact_oracle ? "exact " : "fast  ");
    s += head;
    s += c.verdict_line();
    s += c.pass ? "\n" : c.unknown ? "  UNKNOWN\n" : "  FAIL\n";
    if (c.lse) s += "    lse " + c.lse->one_line() + "\n";
    if (c.row_max) s += "    row_max " + c.row_max->one_line() + "\n";
    if (c.recip_sum) s += "    recip_sum " + c.recip_sum->one_line() + "\n";
  }
  char tail[160];
  std::snprintf(tail, sizeof tail, "%s: %s, worst normalized error %.3g (contract %s, %zu cases)\n",
                kernel.c_str(), verdict(), worst_normalized, contract.name.c_str(), cases.size());
  return s + tail + (unknown ? "  unknown: " + *unknown + "\n" : "");
}

nlohmann::json CheckResult::to_json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["params"] = params;
  j["options"] = options;
  j["contract"] = contract.to_json();
  j["pass"] = pass;
  j["verdict"] = pass ? "pass" : unknown ? "unknown" : "fail";
  if (unknown) j["unknown"] = *unknown;
  j["worst_normalized"] =
      std::isfinite(worst_normalized) ? nlohmann::json(worst_normalized) : nlohmann::json("inf");
  nlohmann::json cs = nlohmann::json::array();
  for (const CaseResult& c : cases) {
    nlohmann::json e;
    e["distribution"] = c.distribution;
    e["seed"] = c.seed;
    e["oracle"] = c.exact_oracle ? "exact" : "fast";
    e["pass"] = c.pass;
    e["verdict"] = c.pass ? "pass" : c.unknown ? "unknown" : "fail";
    e["verdict_line"] = c.verdict_line();  // as the text summary prints it
    if (c.unknown) e["unknown"] = *c.unknown;
    if (c.determinism_runs > 1 || c.nondeterministic) {
      nlohmann::json d{{"runs", c.determinism_runs}, {"identical", !c.nondeterministic}};
      if (const auto& m = c.nondeterministic) {
        d["run"] = m->run;
        d["schedule_seed"] = m->run;
        d["message"] = m->message;
        if (!m->output.empty()) {
          d["output"] = m->output;
          d["element"] = m->element;
          d["index"] = m->index;
          d["value_run0"] = m->value0;
          d["value"] = m->value;
          d["differing_elements"] = m->differing;
        }
      }
      e["determinism"] = d;
    }
    if (c.spill) e["spill"] = c.spill->detail;
    if (c.run_error) {
      e[c.unknown ? "undefined_result" : "model_error"] = c.run_error->message;
    } else {
      e["comparison"] = c.comparison.to_json();
      e["case_bound_ratio"] = finite_or_inf(c.comparison.max_normalized);
      if (c.lse) {
        e["lse_comparison"] = c.lse->to_json();
        e["lse_ratio"] = finite_or_inf(c.lse->max_normalized);
      }
      if (c.row_max) {
        e["row_max_comparison"] = c.row_max->to_json();
        e["row_max_ratio"] = finite_or_inf(c.row_max->max_normalized);
      }
      if (c.recip_sum) {
        e["recip_sum_comparison"] = c.recip_sum->to_json();
        e["recip_sum_ratio"] = finite_or_inf(c.recip_sum->max_normalized);
      }
      if (!std::isnan(c.apriori_normalized)) {
        e["apriori_ratio"] = finite_or_inf(c.apriori_normalized);
      }
      // Absent when not computed (CheckOptions::fa_ratio), never a made-up 0.
      if (!std::isnan(c.fa_ratio)) e["fa_ratio"] = finite_or_inf(c.fa_ratio);
    }
    cs.push_back(e);
  }
  j["cases"] = cs;
  j["median_case_bound_ratio"] = finite_or_inf(median_case_ratio);
  if (!std::isnan(median_apriori_ratio)) {
    j["median_apriori_ratio"] = finite_or_inf(median_apriori_ratio);
  }
  if (!std::isnan(median_fa_ratio)) j["median_fa_ratio"] = finite_or_inf(median_fa_ratio);
  return j;
}

}  // namespace ncv::kernels
