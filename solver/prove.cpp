#include "solver/prove.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "solver/allocation.h"
#include "solver/bounds.h"
#include "solver/domain.h"
#include "solver/initialization.h"
#include "solver/isa_rules.h"
#include "solver/well_formed.h"
#include "solver/z3_context.h"
#include "solver/z3_query.h"

namespace ncv::solver {

namespace {

// Throws when Z3 shows that no params satisfy the domain: every obligation would hold vacuously.
// When Z3 cannot tell within the query's time, the answer is an unknown obligation of its own:
// the others may then hold only because there is nothing to prove, so they cannot add up to
// "every obligation proved".
std::optional<Obligation> refuse_empty_domain(const Program& p, const ProveOptions& options) {
  // Without relations every range holds a multiple (validate_program checks it): no Z3 needed,
  // and a solver per program would cost more than some programs' proofs. Past the deadline every
  // class reports what it did not examine, so the verdict is unknown already.
  if (p.relations.empty() || past_deadline(options)) return std::nullopt;
  z3::context& ctx = shared_context();
  // Z3's incremental solver, not a logic's tactic (what a first check without push runs): the
  // same solver as the obligations', and no try_for timers (solver/z3_query.h).
  z3::solver s(ctx, z3::solver::simple());
  if (options.resource_limit > 0) {
    z3::params prm(ctx);
    prm.set("rlimit", options.resource_limit);
    s.set(prm);
  }
  s.add(param_constraints(ctx, p, declare_params(ctx, p)));
  const auto deadline = query_deadline(options);
  const QueryResult r = check_until(s, deadline);
  if (r.result == z3::unsat) {
    throw std::invalid_argument("kernel '" + p.name +
                                "': no params satisfy its declared domain (the ranges, multiple_of "
                                "and relations exclude every value), so there is nothing to prove");
  }
  if (r.result == z3::sat) return std::nullopt;
  Obligation undecided;
  undecided.cls = ObligationClass::well_formed;
  undecided.rule = "non-empty domain";
  undecided.subject = "the params' ranges, multiples and relations";
  if (past_deadline(options) || (r.timed_out && budget_bounds_query(options, deadline))) {
    mark_out_of_budget(undecided);
  } else {
    undecided.verdict = Verdict::unknown;
    undecided.unknown_reason = "Z3 returned unknown (" + r.why + ", timeout " +
                               std::to_string(options.timeout_ms) +
                               " ms) on whether any params satisfy the domain";
  }
  undecided.unknown_reason +=
      "; every other obligation may hold only because there is nothing to prove";
  return undecided;
}

}  // namespace

std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options) {
  const std::optional<Obligation> domain = refuse_empty_domain(p, options);
  std::vector<Obligation> all = prove_well_formed(p, options);
  if (domain) all.insert(all.begin(), *domain);
  for (auto* prove : {&prove_bounds, &prove_isa_rules, &prove_allocation, &prove_initialization}) {
    std::vector<Obligation> more = prove(p, options);
    all.insert(all.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  }
  return all;
}

}  // namespace ncv::solver
