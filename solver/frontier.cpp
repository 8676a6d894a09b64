#include "solver/frontier.h"

#include <stdexcept>
#include <vector>

#include "model/ir/allocator.h"
#include "solver/allocation.h"
#include "solver/domain.h"
#include "solver/int128.h"
#include "solver/z3_context.h"
#include "solver/z3_query.h"

namespace ncv::solver {

namespace {

// `p` with q.param ranging over [lo, searched_hi] and every other param pinned to its fixed value
// (which must lie in its declared domain): the domain the search quantifies over.
Program widened_program(const Program& p, const FrontierQuery& q, int64_t searched_hi) {
  Program w = p;
  bool found = false;
  for (Param& prm : w.params) {
    if (prm.name == q.param) {
      found = true;
      prm.hi = searched_hi;
      continue;
    }
    const auto it = q.fixed.find(prm.name);
    if (it == q.fixed.end()) {
      throw std::invalid_argument("frontier: no fixed value for param '" + prm.name + "'");
    }
    const int64_t v = it->second;
    if (v < prm.lo || v > prm.hi || v % prm.multiple_of != 0) {
      throw std::invalid_argument("frontier: " + prm.name + " = " + std::to_string(v) +
                                  " is outside its declared domain");
    }
    prm.lo = prm.hi = v;
  }
  if (!found) throw std::invalid_argument("frontier: kernel has no param '" + q.param + "'");
  return w;
}

// One capacity rule as a Z3 disjunct: its loop iterations and a failing bound, with the symbols
// its loop variables are bound to (to explain a model).
struct RuleTerm {
  const CapacityRule* rule;
  SymbolTerms symbols;
  z3::expr fails;
};

class FrontierSearch {
 public:
  FrontierSearch(const Program& w, const HwConfig& hw, const FrontierQuery& q)
      : w_(w),
        rules_(capacity_rules(w, allocate(w, hw), hw)),
        solver_(ctx_),
        timeout_ms_(q.timeout_ms) {
    // No `timeout` parameter: check() bounds each query itself (solver/z3_query.h says why).
    if (q.resource_limit > 0) {
      z3::params limit(ctx_);
      limit.set("rlimit", q.resource_limit);
      solver_.set(limit);
    }
    params_ = declare_params(ctx_, w_);
    // The pinned params as numerals: products with the searched param stay linear for Z3.
    for (const Param& prm : w_.params) {
      if (prm.name != q.param)
        params_.insert_or_assign(intern_symbol(prm.name), ctx_.int_val(prm.lo));
    }
    v_ = params_.at(intern_symbol(q.param));
    z3::expr any = ctx_.bool_val(false);
    for (const CapacityRule& r : rules_) {
      terms_.push_back(rule_term(r));
      any = any || terms_.back().fails;
    }
    // A value where some tensor dimension is below 1 does not fit either: the program cannot run
    // there. (Assumed away, as the obligations do, it made "everything searched fits" the answer
    // for a fixed d_head of -2^63, where no value runs at all.) Dimensions that are numerals
    // of at least 1 once the other params are pinned add nothing, and are left out: with a
    // disjunct for each, Z3 4.8.12 overran the 1 ms timeout of
    // Frontier.UndecidedQueryIsUnknownNeverAFrontier by more than 20 minutes.
    for (const Tensor& t : w_.tensors) {
      for (const Expr& d : t.shape) {
        const z3::expr term = to_z3(ctx_, d, params_).simplify();
        if (term.is_numeral() && (term >= 1).simplify().is_true()) continue;
        dims_.push_back({&t, d, term});
        any = any || term < 1;
      }
    }
    solver_.add(param_domain(ctx_, w_, params_) && any);
  }

  // Is there a violating value <= m? nullopt: Z3 could not tell. When there is, `witness` is
  // one such value.
  std::optional<bool> violates_up_to(int64_t m, FrontierResult& res, int64_t& witness) {
    const auto r = check(v_ <= ctx_.int_val(m), res.queries, res.unknown_reason);
    if (r == std::optional<bool>(true)) witness = last_model_.eval(v_, true).get_numeral_int64();
    return r;
  }

  // The rule the least failing value breaks, from a model at exactly that value. (The value is
  // decided already, so a timeout here leaves only the explanation out.)
  std::string why(int64_t value, FrontierResult& res) {
    std::string reason;
    const auto r = check(v_ == ctx_.int_val(value), res.queries, reason);
    if (!r) return "not explained: " + reason;
    if (!*r) return {};
    const z3::model m = last_model_;
    for (const DimTerm& d : dims_) {
      const z3::expr v = m.eval(d.term, true);
      if (!(v < 1).simplify().is_true()) continue;
      res.first_failing_ill_formed = true;
      return "dimensions >= 1: tensor '" + d.tensor->name + "' gets dimension " + d.dim.str() +
             " = " + v.get_decimal_string(0) + " (the program cannot run there)";
    }
    for (const RuleTerm& t : terms_) {
      if (!m.eval(t.fails, true).is_true()) continue;
      return t.rule->rule + ": " + describe_violation(*t.rule, [&](const Expr& e) {
               return m.eval(to_z3(ctx_, e, t.symbols), true).get_numeral_int64();
             });
    }
    return {};
  }

 private:
  RuleTerm rule_term(const CapacityRule& r) {
    SymbolTerms symbols = params_;
    z3::expr fails = loop_iterations(ctx_, r.loops, symbols);
    if (r.core_zero) fails = fails && params_.at(intern_symbol(kProgramIdParam)) == 0;
    z3::expr holds = ctx_.bool_val(true);
    for (const CapacityBound& b : r.bounds) {
      holds = holds && to_z3(ctx_, b.lhs, symbols) <= to_z3(ctx_, b.rhs, symbols);
    }
    return RuleTerm{&r, symbols, fails && !holds};
  }

  // sat: true, unsat: false, unknown: nullopt with `reason` set (if still empty).
  std::optional<bool> check(const z3::expr& bound, int& queries, std::string& reason) {
    solver_.push();  // so Z3 answers with its incremental solver, never a logic's tactic
    solver_.add(bound);
    ++queries;
    const QueryResult q = check_within(solver_, timeout_ms_);
    const z3::check_result r = q.result;
    if (r == z3::sat) last_model_ = solver_.get_model();
    if (r == z3::unknown && reason.empty()) {
      reason = "Z3 returned unknown (" + q.why + ", timeout " + std::to_string(timeout_ms_) +
               " ms per query)";
    }
    solver_.pop();
    if (r == z3::unknown) return std::nullopt;
    return r == z3::sat;
  }

  const Program& w_;
  std::vector<CapacityRule> rules_;
  z3::context& ctx_ = shared_context();
  z3::solver solver_;
  unsigned timeout_ms_;
  SymbolTerms params_;
  z3::expr v_{ctx_};
  std::vector<RuleTerm> terms_;
  // Every tensor dimension, which must be at least 1 for a value to fit.
  struct DimTerm {
    const Tensor* tensor;
    Expr dim;
    z3::expr term;
  };
  std::vector<DimTerm> dims_;
  z3::model last_model_{ctx_};
};

// The least multiple of step that is >= lo, in 128 bits: a declared range may reach the ends of
// int64, where the 64-bit arithmetic would overflow.
Int128 first_multiple(int64_t lo, int64_t step) {
  const Int128 r = ((static_cast<Int128>(lo) % step) + step) % step;
  return r == 0 ? lo : lo + (step - r);
}

}  // namespace

FrontierResult capacity_frontier(const Program& p, const FrontierQuery& q) {
  const HwConfig& hw = q.hw ? *q.hw : hw_config_trn1();
  const Param* prm = p.find_param(q.param);
  if (!prm) throw std::invalid_argument("frontier: kernel has no param '" + q.param + "'");
  FrontierResult res;
  res.lo = prm->lo;
  res.step = prm->multiple_of;
  res.declared_hi = prm->hi;
  res.searched_hi = q.search_hi ? q.search_hi : prm->hi;
  const Int128 first = first_multiple(res.lo, res.step);
  if (first > res.searched_hi) {
    throw std::invalid_argument("frontier: no value of " + q.param + " in [" +
                                std::to_string(res.lo) + ", " + std::to_string(res.searched_hi) +
                                "]");
  }
  const Program w = widened_program(p, q, res.searched_hi);
  FrontierSearch search(w, hw, q);
  // Values first + k * step, k in [0, last]; the least k whose prefix holds a violation.
  // A violating model's value bounds the least one from above, which often saves steps. The
  // indices are 128-bit: a range of int64 values may hold more than 2^63 of them.
  const auto value_at = [&](Int128 k) { return static_cast<int64_t>(first + k * res.step); };
  Int128 lo_k = 0, hi_k = (res.searched_hi - first) / res.step;
  int64_t witness = 0;
  const auto any = search.violates_up_to(value_at(hi_k), res, witness);
  if (!any) return res;  // status unknown
  if (!*any) {
    res.status = FrontierResult::Status::fits;
    res.largest_fitting = value_at(hi_k);
    return res;
  }
  hi_k = (witness - first) / res.step;
  while (lo_k < hi_k) {
    const Int128 mid = lo_k + (hi_k - lo_k) / 2;
    const auto v = search.violates_up_to(value_at(mid), res, witness);
    if (!v) return res;
    if (*v) {
      hi_k = (witness - first) / res.step;
    } else {
      lo_k = mid + 1;
    }
  }
  res.first_failing = value_at(lo_k);
  res.why_failing = search.why(*res.first_failing, res);
  if (lo_k == 0) {
    res.status = FrontierResult::Status::fits_nowhere;
  } else {
    res.status = FrontierResult::Status::fits;
    res.largest_fitting = *res.first_failing - res.step;
  }
  return res;
}

}  // namespace ncv::solver
