#include "solver/prove.h"

#include "solver/allocation.h"
#include "solver/bounds.h"
#include "solver/isa_rules.h"

namespace ncv::solver {

std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options) {
  std::vector<Obligation> all = prove_bounds(p, options);
  for (auto* prove : {&prove_isa_rules, &prove_allocation}) {
    std::vector<Obligation> more = prove(p, options);
    all.insert(all.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  }
  return all;
}

}  // namespace ncv::solver
