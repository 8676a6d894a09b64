#include "check/check_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "model/interp/interpreter.h"

namespace ncv::kernels {

namespace {

bool is_power_of_two(int64_t x) {
  return x > 0 && (x & (x - 1)) == 0;
}

// The largest value of p's range that is <= x and on its grid (lo + k * multiple_of).
int64_t on_grid_below(const Param& p, int64_t x) {
  const int64_t step = std::max<int64_t>(p.multiple_of, 1);
  x = std::clamp(x, p.lo, p.hi);
  // Params with multiple_of are multiples of it (not offsets from lo).
  if (step > 1) x -= ((x % step) + step) % step;
  return std::max(x, p.lo);
}

// The smallest non-power-of-two value of the range from lo + 2 on, on its grid (or the largest
// value when every candidate is a power of two).
int64_t non_power_of_two(const Param& p) {
  const int64_t step = std::max<int64_t>(p.multiple_of, 1);
  for (int64_t x = on_grid_below(p, p.lo + 2 * step); x <= p.hi; x += step) {
    if (!is_power_of_two(x)) return x;
  }
  return p.hi;
}

bool tiled(const Param& p) {
  return p.multiple_of > 1;
}

bool legal(const Program& p, const ParamValues& v) {
  try {
    check_params(p, v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string options_text(const Options& o) {
  std::string s;
  for (const auto& [k, v] : o) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string params_text(const ParamValues& v) {
  std::string s;
  for (const auto& [k, x] : v) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(x);
  return s;
}

}  // namespace

std::vector<PlannedShape> planned_shapes(const Program& p, const ParamValues& pinned) {
  // Each role gives every unpinned param a value.
  using Pick = std::function<int64_t(const Param&)>;
  // Untiled params (batch, head dim) stay small where the tiled ones grow, and take their largest
  // value once, at one tile: a batch of 64 at eight tiles would cost more than it finds.
  const std::vector<std::pair<std::string, Pick>> roles = {
      {"smallest", [](const Param& x) { return x.lo; }},
      {"one tile + one step",
       [](const Param& x) {
         return tiled(x) ? on_grid_below(x, x.lo + x.multiple_of) : on_grid_below(x, x.lo + 1);
       }},
      {"non-power-of-two",
       [](const Param& x) {
         if (!tiled(x)) return non_power_of_two(x);
         const int64_t v = on_grid_below(x, 3 * x.multiple_of);
         return is_power_of_two(v) ? non_power_of_two(x) : v;
       }},
      {"several tiles",
       [](const Param& x) {
         return tiled(x) ? on_grid_below(x, 8 * x.multiple_of) : on_grid_below(x, x.lo + 1);
       }},
      {"widest", [](const Param& x) { return tiled(x) ? x.lo : x.hi; }},
  };
  std::vector<PlannedShape> out;
  for (const auto& [role, pick] : roles) {
    PlannedShape s{pinned, role};
    for (const Param& prm : p.params) {
      if (!pinned.count(prm.name)) s.params[prm.name] = pick(prm);
    }
    if (!legal(p, s.params)) continue;
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const PlannedShape& o) { return o.params == s.params; });
    if (!seen) out.push_back(std::move(s));
  }
  return out;
}

double predicted_seconds(const Program& p, const ParamValues& from, const ParamValues& to,
                         double seconds_per_case) {
  double growth = 1;
  for (const Param& prm : p.params) {
    const auto f = from.find(prm.name), t = to.find(prm.name);
    if (f == from.end() || t == to.end() || f->second <= 0) continue;
    const double g = static_cast<double>(t->second) / static_cast<double>(f->second);
    growth *= tiled(prm) ? g * g : g;
  }
  return seconds_per_case * growth;
}

std::optional<PlannedShape> largest_within(const Program& p, const PlannedShape& from,
                                           double seconds_per_case, int cases, double seconds) {
  std::optional<PlannedShape> best;
  // Candidates: the tiled params scaled together by k/8 of their maximum (k = 8 down to 1).
  for (int k = 8; k >= 1 && !best; --k) {
    PlannedShape s{from.params, "largest within budget"};
    bool any = false;
    for (const Param& prm : p.params) {
      if (!tiled(prm) || from.params.count(prm.name) == 0) continue;
      const int64_t v = on_grid_below(prm, prm.hi * k / 8);
      if (v > from.params.at(prm.name)) {
        s.params[prm.name] = v;
        any = true;
      }
    }
    if (!any || !legal(p, s.params)) continue;
    if (predicted_seconds(p, from.params, s.params, seconds_per_case) * cases <= seconds) {
      best = std::move(s);
    }
  }
  return best;
}

SweepResult check_sweep(const Variant& v, const std::vector<Options>& option_sets,
                        const std::function<Program(const Options&)>& build,
                        const ParamValues& pinned, const SweepOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  SweepResult res;
  res.budget_s = opts.budget_s;
  res.pass = true;
  int done = 0, planned = 0;
  std::vector<std::pair<Program, std::vector<PlannedShape>>> plans;
  for (const Options& o : option_sets) {
    Program prog = build(o);
    std::vector<PlannedShape> shapes = planned_shapes(prog, pinned);
    if (shapes.empty()) {
      throw std::invalid_argument("no shape of the declared domain satisfies the pinned params " +
                                  params_text(pinned));
    }
    planned += static_cast<int>(shapes.size());
    plans.emplace_back(std::move(prog), std::move(shapes));
  }
  auto run_one = [&](const Options& o, const Program& prog, const PlannedShape& shape, int cases) {
    if (opts.on_shape) {
      opts.on_shape(done, planned,
                    options_text(o) + " " + params_text(shape.params) + " (" + shape.role + ")");
    }
    CheckOptions co = opts.check;
    co.cases = cases;
    if (heavy_check(v) && co.distributions.empty())
      co.distributions = heavy_check_distributions(v, o);
    const auto t0 = std::chrono::steady_clock::now();
    SweepRun run{o, shape, check_kernel(v, prog, o, shape.params, co), 0};
    run.seconds = seconds_since(t0);
    res.pass = res.pass && run.result.pass;
    res.runs.push_back(std::move(run));
    ++done;
    return res.runs.back().seconds;
  };
  // The fixed shapes of every option set first (the bug-finding ones), then the largest shapes
  // with what is left of the budget, shared equally by the option sets.
  std::vector<double> per_case(plans.size(), 0);
  std::vector<PlannedShape> last(plans.size());
  const bool stop = opts.check.stop_on_failure;
  for (size_t k = 0; k < plans.size() && !(stop && !res.pass); ++k) {
    const std::vector<PlannedShape>& shapes = plans[k].second;
    const auto set_start = std::chrono::steady_clock::now();
    const double set_share =
        (opts.budget_s - seconds_since(start)) / static_cast<double>(plans.size() - k);
    // Predictions come from the last shape this option set ran (the nearest in size).
    ParamValues ref;
    double ref_per_case = 0;
    for (size_t i = 0; i < shapes.size() && !(stop && !res.pass); ++i) {
      const PlannedShape& shape = shapes[i];
      int cases = opts.cases_per_shape;
      if (ref.empty() && heavy_check(v)) {
        // A heavy variant's first shape: as many cases as its declared per-case cost fits in the
        // set's share, at least one.
        cases = std::clamp(static_cast<int>(set_share / v.check_case_seconds), 1, cases);
      } else if (!ref.empty()) {
        // The smallest shape runs every distribution; a larger one as many as its predicted
        // time allows within an equal part of the set's budget left (one part kept for the
        // largest shape). A fixed role keeps at least one case (the most bug-exposing input);
        // the widest shape (untiled params at their largest: a batch of 64 costs more than it
        // finds) is skipped and listed when not even one case fits.
        const double per = predicted_seconds(plans[k].first, ref, shape.params, ref_per_case);
        const double allowance =
            (set_share - seconds_since(set_start)) / static_cast<double>(shapes.size() - i + 1);
        const double fit = per > 0 ? std::floor(allowance / per) : cases;
        cases = static_cast<int>(std::clamp<double>(fit, 0, cases));
        // (A heavy variant skips every later shape that does not fit: each costs minutes.)
        if (cases == 0 && (shape.role == "widest" || heavy_check(v))) {
          res.skipped.push_back({options_text(option_sets[k]), shape, per});
          continue;
        }
        cases = std::max(cases, 1);
      }
      const double s = run_one(option_sets[k], plans[k].first, shape, cases);
      ref = shape.params;
      ref_per_case = s / cases;
      // The largest shape grows the tiled params of the widest shape (untiled ones at their
      // largest), predicted from its time.
      if (shape.role == "widest" || last[k].params.empty()) {
        per_case[k] = ref_per_case;
        last[k] = shape;
      }
    }
  }
  for (size_t k = 0; k < plans.size() && !(stop && !res.pass); ++k) {
    const auto set_start = std::chrono::steady_clock::now();
    const double share =
        (opts.budget_s - seconds_since(start)) / static_cast<double>(plans.size() - k);
    const int cases = std::max(2, opts.cases_per_shape / 2);
    // A prediction from a small shape overestimates (fixed costs grow slower than the work): once
    // the largest predicted shape has run, predict again from its own time while budget is left.
    for (int grow = 0; grow < 3 && share > 0; ++grow) {
      const double left = share - seconds_since(set_start);
      auto big = largest_within(plans[k].first, last[k], per_case[k], cases, left);
      if (!big) break;
      ++planned;
      const double s = run_one(option_sets[k], plans[k].first, *big, cases);
      if (stop && !res.pass) break;
      per_case[k] = s / cases;
      last[k] = *big;
    }
  }
  res.seconds = seconds_since(start);
  return res;
}

int SweepResult::cases() const {
  int n = 0;
  for (const SweepRun& r : runs) n += static_cast<int>(r.result.cases.size());
  return n;
}

const SweepRun* SweepResult::worst_run() const {
  const SweepRun* worst = nullptr;
  for (const SweepRun& r : runs) {
    const bool worse = worst == nullptr || (!r.result.pass && worst->result.pass) ||
                       (r.result.pass == worst->result.pass &&
                        r.result.worst_normalized > worst->result.worst_normalized);
    if (worse) worst = &r;
  }
  return worst;
}

const CaseResult* worst_case_of(const CheckResult& r) {
  auto ratio = [](const CaseResult& c) {
    return c.run_error ? std::numeric_limits<double>::infinity() : c.comparison.max_normalized;
  };
  const CaseResult* worst = nullptr;
  for (const CaseResult& c : r.cases) {
    if (worst == nullptr || (!c.pass && worst->pass) ||
        (c.pass == worst->pass && ratio(c) > ratio(*worst))) {
      worst = &c;
    }
  }
  return worst;
}

const CaseResult* SweepResult::worst_case() const {
  const SweepRun* r = worst_run();
  return r == nullptr ? nullptr : worst_case_of(r->result);
}

std::string case_recipe(const CaseResult& c) {
  return "--dist " + c.distribution + " --seed " + std::to_string(c.seed);
}

std::string SweepResult::summary() const {
  std::string s;
  char line[256];
  for (const SweepRun& r : runs) {
    int failed = 0;
    for (const CaseResult& c : r.result.cases) failed += c.pass ? 0 : 1;
    std::snprintf(line, sizeof line, "  %-4s %-44s %-28s %-22s %2zu cases  worst %.3g  %.2f s\n",
                  r.result.pass ? "PASS" : "FAIL", options_text(r.options).c_str(),
                  params_text(r.shape.params).c_str(), r.shape.role.c_str(), r.result.cases.size(),
                  r.result.worst_normalized, r.seconds);
    s += line;
    if (failed > 0) {
      for (const CaseResult& c : r.result.cases) {
        if (!c.pass) s += "      " + case_recipe(c) + ": " + c.verdict_line() + "\n";
      }
    }
  }
  for (const SkippedShape& k : skipped) {
    std::snprintf(line, sizeof line,
                  "  SKIP %-44s %-28s %-22s one case predicted %.3g s > budget left\n",
                  k.options.c_str(), params_text(k.shape.params).c_str(), k.shape.role.c_str(),
                  k.predicted_s);
    s += line;
  }
  std::snprintf(line, sizeof line, "%zu shapes x option sets, %d cases, %.1f s (budget %.0f s)\n",
                runs.size(), cases(), seconds, budget_s);
  return s + line;
}

nlohmann::json SweepResult::to_json() const {
  nlohmann::json j;
  j["pass"] = pass;
  j["seconds"] = seconds;
  j["budget_s"] = budget_s;
  j["cases"] = cases();
  nlohmann::json rs = nlohmann::json::array();
  for (const SweepRun& r : runs) {
    nlohmann::json e = r.result.to_json();
    e["role"] = r.shape.role;
    e["seconds"] = r.seconds;
    rs.push_back(std::move(e));
  }
  j["runs"] = std::move(rs);
  nlohmann::json sk = nlohmann::json::array();
  for (const SkippedShape& k : skipped) {
    sk.push_back({{"options", k.options},
                  {"params", k.shape.params},
                  {"role", k.shape.role},
                  {"predicted_s", k.predicted_s}});
  }
  j["skipped"] = std::move(sk);
  return j;
}

}  // namespace ncv::kernels
