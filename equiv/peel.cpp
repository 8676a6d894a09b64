#include "equiv/peel.h"

#include <z3++.h>

#include <set>
#include <variant>
#include <vector>

#include "solver/domain.h"
#include "solver/z3_expr.h"
#include "solver/z3_query.h"

namespace ncv::equiv {

namespace {

using ir::Loop;
using ir::Program;
using ir::Stmt;

// A Z3 query's budget: a loop bound's sign or two index expressions' equality is a small linear
// (or floor-division) question; one that does not answer in time leaves the loop as it is.
constexpr unsigned kQueryMs = 2000;

// Calls f on every index expression of s (access starts and sizes, another core's index, the
// offsets of affine_select, iota and range_select, nested loops' bounds), in a fixed order.
// False when s has what the fold does not handle: a declaration or an indirect access.
template <class F>
bool for_each_expr(Stmt& s, F& f) {
  if (std::holds_alternative<ir::DeclStmt>(s.node)) return false;
  if (auto* l = std::get_if<Loop>(&s.node)) {
    f(l->start);
    f(l->stop);
    for (Stmt& c : l->body) {
      if (!for_each_expr(c, f)) return false;
    }
    return true;
  }
  auto& ins = std::get<ir::InstrStmt>(s.node).ins;
  std::vector<const ir::Access*> accesses = ir::read_accesses(ins);
  for (const ir::Access* a : ir::written_accesses(ins)) accesses.push_back(a);
  std::set<const ir::Access*> seen;
  for (const ir::Access* ca : accesses) {
    if (!seen.insert(ca).second) continue;
    // The pointers are into `ins`, which is ours to change.
    auto* a = const_cast<ir::Access*>(ca);
    if (a->indirect) return false;
    for (ir::AccessDim& d : a->dims) f(d.start), f(d.size);
    if (a->core) f(*a->core);
  }
  if (auto* x = std::get_if<ir::AffineSelect>(&ins)) f(x->offset);
  if (auto* x = std::get_if<ir::Iota>(&ins)) f(x->offset);
  if (auto* x = std::get_if<ir::RangeSelect>(&ins)) f(x->range_start);
  return true;
}

// Whether a loop in s binds v (then v inside it is another variable).
bool rebinds(const Stmt& s, SymbolId v) {
  const auto* l = std::get_if<Loop>(&s.node);
  if (!l) return false;
  if (intern_symbol(l->var) == v) return true;
  for (const Stmt& c : l->body) {
    if (rebinds(c, v)) return true;
  }
  return false;
}

// Instruction ids in program order again.
void renumber(std::vector<Stmt>& body, uint32_t& next) {
  for (Stmt& s : body) {
    if (auto* l = std::get_if<Loop>(&s.node)) {
      renumber(l->body, next);
    } else if (auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
      i->id = next++;
    }
  }
}

void clear_ids(Stmt& s) {
  if (auto* l = std::get_if<Loop>(&s.node)) {
    for (Stmt& c : l->body) clear_ids(c);
  } else if (auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
    i->id = 0;
  }
}

class Folder {
 public:
  explicit Folder(const Program& p) : p_(p), symbols_(solver::declare_params(ctx_, p)) {}

  // Folds the peeled iterations of `body` (inside `outer`, outermost first); true if any.
  bool fold(std::vector<Stmt>& body, std::vector<const Loop*>& outer) {
    bool changed = false;
    for (size_t k = 0; k < body.size(); ++k) {
      auto* l = std::get_if<Loop>(&body[k].node);
      if (!l) continue;
      outer.push_back(l);
      changed = fold(l->body, outer) || changed;
      outer.pop_back();
      const size_t m = l->body.size();
      if (m == 0 || l->step <= 0) continue;
      // The first iteration, before the loop.
      if (k >= m && matches(body, k - m, *l, l->start - Expr(l->step), outer) &&
          holds({l->stop - l->start + Expr(l->step), Expr(1)}, outer)) {
        l->start = l->start - Expr(l->step);
        body.erase(body.begin() + static_cast<std::ptrdiff_t>(k - m),
                   body.begin() + static_cast<std::ptrdiff_t>(k));
        k -= m;
        changed = true;
        l = std::get_if<Loop>(&body[k].node);
      }
      // The last iteration, after the loop (step 1: the next value is stop).
      if (l->step == 1 && k + m < body.size() && matches(body, k + 1, *l, l->stop, outer) &&
          holds({l->stop, l->start}, outer)) {
        l->stop = l->stop + Expr(1);
        body.erase(body.begin() + static_cast<std::ptrdiff_t>(k + 1),
                   body.begin() + static_cast<std::ptrdiff_t>(k + 1 + m));
        changed = true;
      }
    }
    return changed;
  }

 private:
  // A claim about index expressions: lhs >= rhs (ge) or lhs == rhs.
  struct Claim {
    Expr lhs, rhs;
    bool equal = false;
  };

  // Whether body[at, at + loop.body.size()) is loop's body with its variable := value.
  bool matches(const std::vector<Stmt>& body, size_t at, const Loop& loop, const Expr& value,
               const std::vector<const Loop*>& outer) {
    const SymbolId v = intern_symbol(loop.var);
    std::vector<Claim> equal;
    for (size_t j = 0; j < loop.body.size(); ++j) {
      if (rebinds(loop.body[j], v)) return false;
      Stmt want = loop.body[j], got = body[at + j];
      std::vector<Expr> ew, eg;
      auto take_want = [&](Expr& e) {
        ew.push_back(substitute(e, Expr::var(v), value));
        e = Expr(0);
      };
      auto take_got = [&](Expr& e) {
        eg.push_back(e);
        e = Expr(0);
      };
      if (!for_each_expr(want, take_want) || !for_each_expr(got, take_got)) return false;
      clear_ids(want);
      clear_ids(got);
      if (!(want == got) || ew.size() != eg.size()) return false;
      for (size_t i = 0; i < ew.size(); ++i) {
        if (!(ew[i] == eg[i])) equal.push_back({ew[i], eg[i], true});
      }
    }
    for (const Claim& c : equal) {
      if (!holds(c, outer)) return false;
    }
    return true;
  }

  bool holds(const Claim& c, const std::vector<const Loop*>& outer) {
    try {
      solver::SymbolTerms symbols = symbols_;
      z3::solver s(ctx_);
      s.add(solver::param_domain(ctx_, p_, symbols));
      s.add(solver::loop_iterations(ctx_, outer, symbols));
      const z3::expr a = solver::to_z3(ctx_, c.lhs, symbols);
      const z3::expr b = solver::to_z3(ctx_, c.rhs, symbols);
      s.add(c.equal ? a != b : a < b);
      return solver::check_within(s, kQueryMs).result == z3::unsat;
    } catch (const std::exception&) {
      return false;  // an expression Z3 does not take, a variable not bound: not shown
    }
  }

  const Program& p_;
  z3::context ctx_;
  solver::SymbolTerms symbols_;
};

}  // namespace

ir::Program without_peeled_iterations(const ir::Program& p) {
  Program out = p;
  Folder folder(p);
  std::vector<const Loop*> outer;
  bool changed = false;
  for (int round = 0; round < 64 && folder.fold(out.body, outer); ++round) changed = true;
  if (changed) {
    uint32_t next = 0;
    renumber(out.body, next);
    out.num_instructions = next;
  }
  return out;
}

}  // namespace ncv::equiv
