#include "check/check_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "check/check_plan.h"
#include "model/interp/interpreter.h"
#include "model/ir/domain_search.h"

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
  const std::vector<Pick> picks = {
      [](const Param& x) { return x.lo; },
      [](const Param& x) {
        return tiled(x) ? on_grid_below(x, x.lo + x.multiple_of) : on_grid_below(x, x.lo + 1);
      },
      [](const Param& x) {
        if (!tiled(x)) return non_power_of_two(x);
        const int64_t v = on_grid_below(x, 3 * x.multiple_of);
        return is_power_of_two(v) ? non_power_of_two(x) : v;
      },
      [](const Param& x) {
        return tiled(x) ? on_grid_below(x, 8 * x.multiple_of) : on_grid_below(x, x.lo + 1);
      },
      [](const Param& x) { return tiled(x) ? x.lo : x.hi; },
  };
  std::set<std::string> fixed;
  for (const auto& [name, value] : pinned) fixed.insert(name);
  std::vector<PlannedShape> out;
  for (size_t r = 0; r < picks.size(); ++r) {
    PlannedShape s{pinned, sweep_roles()[r]};
    for (const Param& prm : p.params) {
      if (!pinned.count(prm.name)) s.params[prm.name] = picks[r](prm);
    }
    if (!legal(p, s.params)) {
      // Picked one param at a time, the role can break a relation between params: the nearest
      // legal shape instead (pinned params kept).
      const auto near = nearest_in_domain(p.params, p.relations, s.params, fixed);
      if (!near) continue;
      for (const auto& [name, value] : *near) s.params[name] = value;
      if (!legal(p, s.params)) continue;
    }
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
                                           double seconds_per_case, int cases, double seconds,
                                           const ParamValues& pinned) {
  std::optional<PlannedShape> best;
  // Candidates: the tiled params scaled together by k/8 of their maximum (k = 8 down to 1).
  for (int k = 8; k >= 1 && !best; --k) {
    PlannedShape s{from.params, "largest within budget"};
    bool any = false;
    for (const Param& prm : p.params) {
      if (!tiled(prm) || from.params.count(prm.name) == 0 || pinned.count(prm.name)) continue;
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

namespace {

// The median as check.cpp computes it (the upper one of an even count).
double median_of(std::vector<double> x) {
  if (x.empty()) return 0;
  const size_t mid = x.size() / 2;
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(mid), x.end());
  return x[mid];
}

// Folds a one-case result into a run's result: the cases in order, the verdict, the worst ratio
// and the medians as check_kernel computes them over all the cases.
void merge_case(CheckResult& into, CheckResult&& one) {
  if (into.cases.empty()) {
    into = std::move(one);
    return;
  }
  const bool failed = (!into.pass && !into.unknown) || (!one.pass && !one.unknown);
  into.pass = into.pass && one.pass;
  if (failed) {
    into.unknown.reset();
  } else if (!into.unknown) {
    into.unknown = std::move(one.unknown);
  }
  into.worst_normalized = std::fmax(into.worst_normalized, one.worst_normalized);
  for (CaseResult& c : one.cases) into.cases.push_back(std::move(c));
  std::vector<double> cr, ar, fr;
  for (const CaseResult& c : into.cases) {
    if (c.run_error) continue;
    cr.push_back(c.comparison.max_normalized);
    if (!std::isnan(c.apriori_normalized)) ar.push_back(c.apriori_normalized);
    fr.push_back(c.fa_ratio);
  }
  into.median_case_ratio = median_of(cr);
  into.median_apriori_ratio = ar.empty() ? std::nan("") : median_of(ar);
  into.median_fa_ratio = median_of(fr);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

// One sweep: the plan, what has been built, measured and run.
class Sweep {
 public:
  Sweep(const Variant& v, const std::vector<Options>& sets,
        const std::function<Program(const Options&)>& build, const ParamValues& pinned,
        const SweepOptions& opts)
      : v_(v), sets_(sets), build_(build), pinned_(pinned), opts_(opts), sets_state_(sets.size()) {
    if (opts_.clock) {
      clock_ = opts_.clock;
    } else {
      const auto start = std::chrono::steady_clock::now();
      clock_ = [start] { return seconds_since(start); };
    }
    run_case_ = opts_.run_case ? opts_.run_case
                               : [this](const Program& prog, const Options& o,
                                        const ParamValues& params, const CheckOptions& co) {
                                   return check_kernel(v_, prog, o, params, co);
                                 };
    res_.budget_s = opts_.budget_s;
  }

  SweepResult run() {
    const std::vector<PlanItem> order = plan_order(sets_);
    res_.planned = static_cast<int>(order.size());
    first_pass(order);
    top_up();
    grow();
    if (res_.runs.empty()) {
      if (no_shape_everywhere_) {
        throw std::invalid_argument("no shape of the declared domain satisfies the pinned params " +
                                    params_text(pinned_));
      }
      res_.note = "no case ran";
    }
    if (!failed_) res_.unknown = unknown_;
    res_.pass = !res_.runs.empty() && !failed_ && !unknown_;
    res_.seconds = clock_();
    return std::move(res_);
  }

 private:
  struct SetState {
    bool built = false;
    std::optional<Program> program;
    std::vector<PlannedShape> shapes;
  };
  struct Measure {
    size_t set;
    ParamValues params;
    double per_case;
  };

  // Builds option set k's program and its shapes once.
  SetState& state(size_t k) {
    SetState& s = sets_state_[k];
    if (s.built) return s;
    s.built = true;
    try {
      s.program = build_(sets_[k]);
    } catch (const std::exception& e) {
      throw OptionSetError(options_text(sets_[k]), e.what());
    }
    s.shapes = planned_shapes(*s.program, pinned_);
    return s;
  }

  bool stopped() const { return opts_.check.stop_on_failure && failed_; }
  double left(double budget) const { return budget - clock_(); }

  // One case's predicted time for set k at `params`: measured at this shape (this set's cases,
  // else the median over the other sets' at the same shape: option sets of one kernel cost alike
  // at one shape); else a line through this set's measured shapes (all sets' when it has none):
  // time = fixed + rate * work, work as predicted_seconds grows it (quadratic in tiled params,
  // linear in untiled ones), the fixed part half the cheapest shape's case (drawing and packing
  // inputs, the oracle's setup: what does not grow), the rate from the measured shape with the
  // most work (the best anchor for the larger shapes still to come), and never less than a
  // measured shape with no more work. Else, for a heavy variant, its declared cost at the
  // domain's smallest shape; else unknown (0). A shape's time is the mean of its cases, leaving
  // out the sweep's first case when the shape has others (it carries one-time costs).
  double predict(size_t k, const ParamValues& params) const {
    const Program& prog = *sets_state_[k].program;
    struct Shape {
      size_t set = 0;
      const ParamValues* params = nullptr;
      double sum = 0, first = 0;
      int n = 0;
      double mean() const { return n > 0 ? sum / n : first; }
    };
    std::map<std::pair<size_t, ParamValues>, Shape> shapes;
    for (size_t i = 0; i < measures_.size(); ++i) {
      const Measure& m = measures_[i];
      Shape& sh = shapes[{m.set, m.params}];
      sh.set = m.set;
      sh.params = &m.params;
      if (i == 0) {
        sh.first = m.per_case;
      } else {
        sh.sum += m.per_case;
        ++sh.n;
      }
    }
    std::vector<double> same_shape_elsewhere;
    std::vector<const Shape*> own, all;
    for (const auto& [key, sh] : shapes) {
      if (*sh.params == params && sh.set == k) return sh.mean();
      if (*sh.params == params) same_shape_elsewhere.push_back(sh.mean());
      (sh.set == k ? own : all).push_back(&sh);
    }
    if (!same_shape_elsewhere.empty()) return median_of(same_shape_elsewhere);
    const std::vector<const Shape*>& fit = own.empty() ? all : own;
    if (!fit.empty()) {
      const ParamValues& ref = *fit.front()->params;
      auto work = [&](const ParamValues& p) { return predicted_seconds(prog, ref, p, 1.0); };
      double cheapest = std::numeric_limits<double>::infinity(), floor = 0;
      const Shape* big = fit.front();
      const double w = work(params);
      for (const Shape* sh : fit) {
        cheapest = std::min(cheapest, sh->mean());
        if (work(*sh->params) > work(*big->params)) big = sh;
        if (work(*sh->params) <= w) floor = std::max(floor, sh->mean());
      }
      // Up to the anchor's work the line interpolates; beyond it the whole anchor time scales
      // with the work (a fixed part that small shapes cannot tell from the rate would otherwise
      // predict a large shape at the cost of a small one).
      const double fixed = 0.5 * cheapest, big_work = work(*big->params);
      const double rate = std::max(0.0, big->mean() - fixed) / big_work;
      const double line = w <= big_work ? fixed + rate * w : big->mean() * w / big_work;
      return std::max(floor, line);
    }
    if (heavy_check(v_)) {
      const std::vector<PlannedShape> smallest = planned_shapes(prog, {});
      if (!smallest.empty()) {
        return predicted_seconds(prog, smallest.front().params, params, v_.check_case_seconds);
      }
      return v_.check_case_seconds;
    }
    return 0;
  }

  // The input distribution of case n of a run (as check_kernel cycles them), its first
  // cases_per_shape rotated by `offset`, the number of earlier runs at the same role: the first
  // option set's run at each role starts with the most bug-exposing input for the problem
  // (stale_cache for a KV cache), and the one-case runs of the first pass at the other option
  // sets draw the other bug-exposing inputs in turn; a run topped up to cases_per_shape has the
  // same inputs as check_kernel would give it.
  oracle::Distribution distribution(const Options& o, const ParamValues& params, int n,
                                    size_t offset) const {
    std::vector<oracle::Distribution> d = opts_.check.distributions;
    if (d.empty()) {
      d = heavy_check(v_) ? heavy_check_distributions(v_, o)
                          : check_distributions(v_.spec(o, params));
    }
    const size_t cycle = std::min<size_t>(std::max(opts_.cases_per_shape, 1), d.size());
    const auto i = static_cast<size_t>(n);
    return d[(i < cycle ? (i + offset) % cycle : i) % d.size()];
  }

  // Runs case n of `run` (its next one) and records its time.
  void run_one_case(SweepRun& run, size_t k) {
    const int n = static_cast<int>(run.result.cases.size());
    CheckOptions co = opts_.check;
    co.cases = 1;
    co.seed = opts_.check.seed + static_cast<uint64_t>(n);
    size_t offset = 0;
    for (const SweepRun& r : res_.runs) {
      if (&r == &run) break;
      offset += r.shape.role == run.shape.role ? 1 : 0;
    }
    co.distributions = {distribution(run.options, run.shape.params, n, offset)};
    co.on_case = nullptr;
    const double t0 = clock_();
    CheckResult one = run_case_(*sets_state_[k].program, run.options, run.shape.params, co);
    const double s = clock_() - t0;
    run.seconds += s;
    res_.max_case_s = std::max(res_.max_case_s, s);
    ++cases_run_;
    failed_ = failed_ || (!one.pass && !one.unknown);
    if (one.unknown && !unknown_) unknown_ = one.unknown;
    merge_case(run.result, std::move(one));
    measures_.push_back({k, run.shape.params, s});
  }

  // Runs up to `cases` cases of a new run, each only while its predicted time fits what is left
  // of `budget` (the first case of the sweep always runs); the first case's prediction is
  // `first_predicted` when given (>= 0), else predict(). Returns the run's index.
  size_t start_run(size_t k, const PlannedShape& shape, int cases, double budget,
                   double first_predicted = -1) {
    if (opts_.on_shape) {
      opts_.on_shape(
          static_cast<int>(res_.runs.size()), res_.planned,
          options_text(sets_[k]) + " " + params_text(shape.params) + " (" + shape.role + ")");
    }
    res_.runs.push_back({sets_[k], shape, CheckResult{}, 0});
    run_set_.push_back(k);
    const size_t i = res_.runs.size() - 1;
    for (int c = 0; c < cases && !stopped(); ++c) {
      if (cases_run_ > 0) {
        const double per = c > 0                  ? res_.runs[i].seconds / static_cast<double>(c)
                           : first_predicted >= 0 ? first_predicted
                                                  : predict(k, shape.params);
        const double l = left(budget);
        if (l <= 0 || per > l) break;
      }
      run_one_case(res_.runs[i], k);
    }
    return i;
  }

  void skip(size_t k, const PlannedShape& shape, double predicted, std::string reason) {
    res_.skipped.push_back({options_text(sets_[k]), shape, predicted,
                            std::max(0.0, left(opts_.budget_s)), std::move(reason)});
  }

  // One case per item in the plan's order (every case for the first item).
  void first_pass(const std::vector<PlanItem>& order) {
    for (const PlanItem& it : order) {
      const std::string& role = sweep_roles()[it.role];
      if (stopped()) {
        skip(it.set, {{}, role}, -1, "stopped at the first failing case");
        continue;
      }
      if (cases_run_ > 0 && left(opts_.budget_s) <= 0) {
        // Not built for this (the budget is spent); a built set lists the role's shape, or
        // nothing when the role repeats an earlier role's shape.
        PlannedShape shape{{}, role};
        if (sets_state_[it.set].built) {
          const auto& shapes = sets_state_[it.set].shapes;
          const auto s = std::find_if(shapes.begin(), shapes.end(),
                                      [&](const PlannedShape& x) { return x.role == role; });
          if (s == shapes.end()) continue;
          shape = *s;
        }
        skip(it.set, shape, -1, "budget");
        continue;
      }
      SetState& st = state(it.set);
      if (st.shapes.empty()) {
        if (it.role == 0)
          skip(it.set, {pinned_, role}, -1, "no legal shape with the pinned params");
        continue;
      }
      no_shape_everywhere_ = false;
      const auto shape = std::find_if(st.shapes.begin(), st.shapes.end(),
                                      [&](const PlannedShape& s) { return s.role == role; });
      if (shape == st.shapes.end()) continue;  // the same shape as an earlier role
      const double per = predict(it.set, shape->params);
      if (cases_run_ > 0 && per > left(opts_.budget_s)) {
        skip(it.set, *shape, per, "budget");
        continue;
      }
      const bool first = cases_run_ == 0;
      // The first item runs every distribution (within half the budget: the rest is for breadth),
      // the others their most bug-exposing input; top_up adds the rest later.
      const size_t i = start_run(it.set, *shape, first ? opts_.cases_per_shape : 1,
                                 first ? 0.5 * opts_.budget_s : opts_.budget_s);
      if (first && clock_() > opts_.budget_s) {
        // The first case runs whatever the budget: a check that ran nothing could not say PASS.
        res_.note =
            (per > opts_.budget_s
                 ? "one case of the first shape is predicted " + seconds_text(per) + ", over"
                 : "one case took " + seconds_text(res_.max_case_s) + ", over") +
            " the budget of " + seconds_text(opts_.budget_s) +
            ": ran exactly one case (the most bug-exposing input at the " + shape->role + " shape)";
      }
      if (res_.runs[i].result.cases.empty()) {  // its one case no longer fitted
        res_.runs.pop_back();
        run_set_.pop_back();
        skip(it.set, *shape, per, "budget");
      }
    }
  }

  // More cases per run, in the runs' order, while 80% of the budget lasts (the rest is for the
  // larger shapes).
  void top_up() {
    const double budget = 0.8 * opts_.budget_s;
    for (size_t i = 0; i < res_.runs.size() && !stopped(); ++i) {
      SweepRun& run = res_.runs[i];
      while (static_cast<int>(run.result.cases.size()) < opts_.cases_per_shape && !stopped()) {
        const double per = run.seconds / static_cast<double>(run.result.cases.size());
        const double l = left(budget);
        if (l <= 0 || per > l) break;
        run_one_case(run, run_set_[i]);
      }
    }
  }

  // Larger shapes with what is left: per option set that ran (in the plan's order) an equal share,
  // the tiled params grown from its widest (else smallest) shape as far as the predicted time
  // fits, predicted again from each run's own time, up to three steps.
  void grow() {
    std::vector<size_t> sets;
    for (size_t k : run_set_) {
      if (std::find(sets.begin(), sets.end(), k) == sets.end()) sets.push_back(k);
    }
    const int cases = std::max(2, opts_.cases_per_shape / 2);
    for (size_t n = 0; n < sets.size() && !stopped(); ++n) {
      const size_t k = sets[n];
      const double share = left(opts_.budget_s) / static_cast<double>(sets.size() - n);
      if (share <= 0) break;
      const double set_start = clock_();
      // The set's widest run, else its first.
      const SweepRun* from = nullptr;
      for (size_t i = 0; i < res_.runs.size(); ++i) {
        if (run_set_[i] != k || res_.runs[i].result.cases.empty()) continue;
        if (!from || res_.runs[i].shape.role == "widest") from = &res_.runs[i];
      }
      if (!from) continue;
      PlannedShape last = from->shape;
      double per_case = from->seconds / static_cast<double>(from->result.cases.size());
      for (int step = 0; step < 3 && !stopped(); ++step) {
        const double l = share - (clock_() - set_start);
        auto big = largest_within(*sets_state_[k].program, last, per_case, cases, l, pinned_);
        if (!big) break;
        ++res_.planned;
        // (predicted from `last`'s own time, as largest_within chose it)
        const double per =
            predicted_seconds(*sets_state_[k].program, last.params, big->params, per_case);
        const size_t i = start_run(k, *big, cases, set_start + share, per);
        if (res_.runs[i].result.cases.empty()) {
          res_.runs.pop_back();
          run_set_.pop_back();
          break;
        }
        per_case = res_.runs[i].seconds / static_cast<double>(res_.runs[i].result.cases.size());
        last = *big;
      }
    }
  }

  const Variant& v_;
  const std::vector<Options>& sets_;
  const std::function<Program(const Options&)>& build_;
  const ParamValues& pinned_;
  const SweepOptions& opts_;
  std::function<double()> clock_;
  std::function<CheckResult(const Program&, const Options&, const ParamValues&,
                            const CheckOptions&)>
      run_case_;
  std::vector<SetState> sets_state_;
  std::vector<Measure> measures_;
  std::vector<size_t> run_set_;  // per run, its option set
  SweepResult res_;
  int cases_run_ = 0;
  bool failed_ = false;
  std::optional<std::string> unknown_;  // the first case that needed spills (CheckResult::unknown)
  bool no_shape_everywhere_ = true;
};

}  // namespace

SweepResult check_sweep(const Variant& v, const std::vector<Options>& option_sets,
                        const std::function<Program(const Options&)>& build,
                        const ParamValues& pinned, const SweepOptions& opts) {
  return Sweep(v, option_sets, build, pinned, opts).run();
}

int SweepResult::cases() const {
  int n = 0;
  for (const SweepRun& r : runs) n += static_cast<int>(r.result.cases.size());
  return n;
}

namespace {

// How bad a verdict is: a failure before an unknown before a pass.
int badness(bool pass, bool unknown) {
  return pass ? 0 : unknown ? 1 : 2;
}

}  // namespace

const SweepRun* SweepResult::worst_run() const {
  const SweepRun* worst = nullptr;
  const auto bad = [](const SweepRun& r) {
    return badness(r.result.pass, r.result.unknown.has_value());
  };
  for (const SweepRun& r : runs) {
    const bool worse =
        worst == nullptr || bad(r) > bad(*worst) ||
        (bad(r) == bad(*worst) && r.result.worst_normalized > worst->result.worst_normalized);
    if (worse) worst = &r;
  }
  return worst;
}

const CaseResult* worst_case_of(const CheckResult& r) {
  auto ratio = [](const CaseResult& c) {
    return c.run_error ? std::numeric_limits<double>::infinity() : c.comparison.max_normalized;
  };
  const auto bad = [](const CaseResult& c) { return badness(c.pass, c.unknown.has_value()); };
  const CaseResult* worst = nullptr;
  for (const CaseResult& c : r.cases) {
    if (worst == nullptr || bad(c) > bad(*worst) ||
        (bad(c) == bad(*worst) && ratio(c) > ratio(*worst))) {
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
  char line[512];
  for (const SweepRun& r : runs) {
    int not_passed = 0;  // failing and unknown cases, each listed with its verdict line
    for (const CaseResult& c : r.result.cases) not_passed += c.pass ? 0 : 1;
    std::snprintf(line, sizeof line, "  %-4s %-44s %-28s %-22s %2zu cases  worst %.3g  %.2f s\n",
                  r.result.verdict(), options_text(r.options).c_str(),
                  params_text(r.shape.params).c_str(), r.shape.role.c_str(), r.result.cases.size(),
                  r.result.worst_normalized, r.seconds);
    s += line;
    if (not_passed > 0) {
      for (const CaseResult& c : r.result.cases) {
        if (!c.pass) s += "      " + case_recipe(c) + ": " + c.verdict_line() + "\n";
      }
    }
    if (r.result.unknown) s += "      unknown: " + *r.result.unknown + "\n";
  }
  // The skipped items, one line per option set and reason (in the order they were passed over):
  // an option set skipped whole is one line, not five.
  std::vector<std::pair<std::string, std::string>> groups;  // (options, reason)
  for (const SkippedShape& k : skipped) {
    const std::pair<std::string, std::string> g{k.options, k.reason};
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  for (const auto& [options, reason] : groups) {
    std::string roles;
    double predicted = -1, left = std::numeric_limits<double>::infinity();
    for (const SkippedShape& k : skipped) {
      if (k.options != options || k.reason != reason) continue;
      roles += (roles.empty() ? "" : ", ") + k.shape.role +
               (k.shape.params.empty() ? "" : " " + params_text(k.shape.params));
      predicted = std::max(predicted, k.predicted_s);
      left = std::min(left, k.left_s);
    }
    std::string why = reason;
    if (why == "budget") {
      why = predicted < 0 ? "budget: spent"
                          : "budget: one case predicted up to " + seconds_text(predicted) + ", " +
                                seconds_text(left) + " left";
    }
    std::snprintf(line, sizeof line, "  SKIP %-44s ", options.empty() ? "-" : options.c_str());
    s += line + roles + " (" + why + ")\n";
  }
  if (!note.empty()) s += "  note: " + note + "\n";
  std::snprintf(line, sizeof line,
                "%zu shapes x option sets run, %zu skipped, %d cases, %.1f s (budget %.0f s, "
                "longest case %.2f s)\n",
                runs.size(), skipped.size(), cases(), seconds, budget_s, max_case_s);
  return s + line;
}

nlohmann::json SweepResult::to_json() const {
  nlohmann::json j;
  j["pass"] = pass;
  j["verdict"] = pass ? "pass" : unknown ? "unknown" : "fail";
  if (unknown) j["unknown"] = *unknown;
  j["seconds"] = seconds;
  j["budget_s"] = budget_s;
  j["max_case_s"] = max_case_s;
  j["planned"] = planned;
  j["cases"] = cases();
  if (!note.empty()) j["note"] = note;
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
                  {"predicted_s", k.predicted_s >= 0 ? nlohmann::json(k.predicted_s) : nullptr},
                  {"left_s", k.left_s},
                  {"reason", k.reason}});
  }
  j["skipped"] = std::move(sk);
  return j;
}

}  // namespace ncv::kernels
