#include "solver/domain.h"

#include <limits>

namespace ncv::solver {

SymbolTerms declare_params(z3::context& ctx, const Program& p) {
  SymbolTerms symbols;
  for (const Param& prm : p.params) {
    symbols.emplace(intern_symbol(prm.name), ctx.int_const(prm.name.c_str()));
  }
  const std::string pid(kProgramIdParam);
  symbols.emplace(intern_symbol(pid), ctx.int_const(pid.c_str()));
  return symbols;
}

z3::expr param_domain(z3::context& ctx, const Program& p, const SymbolTerms& symbols) {
  const z3::expr& pid = symbols.at(intern_symbol(kProgramIdParam));
  // The interpreter runs at most 64 instances ("grid in [1, 64]" is an obligation).
  return param_constraints(ctx, p, symbols) && pid >= 0 && pid < to_z3(ctx, p.grid, symbols) &&
         pid < 64;
}

z3::expr param_constraints(z3::context& ctx, const Program& p, const SymbolTerms& symbols) {
  z3::expr all = ctx.bool_val(true);
  for (const Param& prm : p.params) {
    const z3::expr& v = symbols.at(intern_symbol(prm.name));
    all = all && v >= ctx.int_val(prm.lo) && v <= ctx.int_val(prm.hi);
    if (prm.multiple_of > 1) all = all && z3::mod(v, ctx.int_val(prm.multiple_of)) == 0;
  }
  for (const Relation& r : p.relations) {
    const z3::expr a = to_z3(ctx, r.lhs, symbols), b = to_z3(ctx, r.rhs, symbols);
    switch (r.kind) {
      case RelationKind::LE:
        all = all && a <= b;
        break;
      case RelationKind::LT:
        all = all && a < b;
        break;
      case RelationKind::EQ:
        all = all && a == b;
        break;
      case RelationKind::NE:
        all = all && a != b;
        break;
      case RelationKind::Divides:
        // Relation::holds: a != 0 && b % a == 0. C++ truncating % and SMT-LIB Euclidean mod agree
        // on whether the remainder is zero.
        all = all && a != 0 && z3::mod(b, a) == 0;
        break;
    }
  }
  return all;
}

z3::expr loop_iterations(z3::context& ctx, const std::vector<const Loop*>& loops,
                         SymbolTerms& symbols) {
  z3::expr all = ctx.bool_val(true);
  for (const Loop* l : loops) {
    // Start and stop are evaluated before the loop's own variable is bound.
    const z3::expr start = to_z3(ctx, l->start, symbols), stop = to_z3(ctx, l->stop, symbols);
    z3::expr v = ctx.int_const(l->var.c_str());
    symbols.insert_or_assign(intern_symbol(l->var), v);
    // The interpreter binds a loop variable only to int64 values (its start and stop evaluated
    // without overflow; "arithmetic fits int64" is their obligation).
    all = all && v >= start && v < stop && v >= ctx.int_val(std::numeric_limits<int64_t>::min()) &&
          v <= ctx.int_val(std::numeric_limits<int64_t>::max());
    if (l->step != 1) all = all && z3::mod(v - start, ctx.int_val(l->step)) == 0;
  }
  return all;
}

}  // namespace ncv::solver
