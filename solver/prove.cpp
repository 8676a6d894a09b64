#include "solver/prove.h"

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

void refuse_empty_domain(const Program& p, const ProveOptions& options) {
  // Without relations every range holds a multiple (validate_program checks it): no Z3 needed,
  // and a solver per program would cost more than some programs' proofs.
  if (p.relations.empty() || past_deadline(options)) return;  // unknown: the obligations decide
  z3::context& ctx = shared_context();
  z3::solver s(ctx);
  z3::params prm(ctx);
  prm.set("timeout", query_timeout_ms(options));
  s.set(prm);
  s.add(param_constraints(ctx, p, declare_params(ctx, p)));
  std::string ignored;  // unknown: the domain may hold params, so the obligations decide
  if (check_or_unknown(s, ignored) == z3::unsat) {
    throw std::invalid_argument("kernel '" + p.name +
                                "': no params satisfy its declared domain (the ranges, multiple_of "
                                "and relations exclude every value), so there is nothing to prove");
  }
}

}  // namespace

std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options) {
  refuse_empty_domain(p, options);
  std::vector<Obligation> all = prove_well_formed(p, options);
  for (auto* prove : {&prove_bounds, &prove_isa_rules, &prove_allocation, &prove_initialization}) {
    std::vector<Obligation> more = prove(p, options);
    all.insert(all.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  }
  return all;
}

}  // namespace ncv::solver
