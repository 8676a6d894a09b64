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

namespace ncv::solver {

namespace {

// Throws when no params satisfy the domain (a proof over it would be vacuous). When Z3 cannot
// decide that within the query timeout, the answer is an unknown well-formedness obligation: the
// other obligations may then hold only because there is nothing to prove, so the verdict cannot
// be "every obligation proved".
std::optional<Obligation> refuse_empty_domain(const Program& p, const ProveOptions& options) {
  // Without relations every range holds a multiple (validate_program checks it): no Z3 needed,
  // and a solver per program would cost more than some programs' proofs.
  // Past the deadline every other class reports what it left undecided (out of budget).
  if (p.relations.empty() || past_deadline(options)) return std::nullopt;
  z3::context& ctx = shared_context();
  z3::solver s(ctx);
  z3::params prm(ctx);
  prm.set("timeout", query_timeout_ms(options));
  s.set(prm);
  s.add(param_constraints(ctx, p, declare_params(ctx, p)));
  std::string error;
  const z3::check_result r = check_or_unknown(s, error);
  if (r == z3::unsat) {
    throw std::invalid_argument("kernel '" + p.name +
                                "': no params satisfy its declared domain (the ranges, multiple_of "
                                "and relations exclude every value), so there is nothing to prove");
  }
  if (r == z3::sat) return std::nullopt;
  Obligation undecided;
  undecided.cls = ObligationClass::well_formed;
  undecided.rule = "non-empty domain";
  undecided.subject = "the params' ranges, multiples and relations";
  undecided.verdict = Verdict::unknown;
  undecided.unknown_reason =
      "Z3 did not decide within the query timeout whether any params satisfy the domain" +
      (error.empty() ? std::string() : " (" + error + ")") +
      ": the other obligations may hold only because there is nothing to prove";
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
