#include "solver/well_formed.h"

#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "model/ir/allocator.h"
#include "model/ir/printer.h"
#include "solver/expr_interval.h"
#include "solver/program_solver.h"

namespace ncv::solver {

namespace {

// The sums and products inside e, each once: what eval checks for overflow.
void arithmetic_nodes(const Expr& e, std::unordered_set<const ExprNode*>& seen,
                      std::vector<Expr>& out) {
  if (!seen.insert(e.node()).second) return;
  switch (e.kind()) {
    case ExprKind::Const:
    case ExprKind::Var:
      return;
    case ExprKind::Add:
    case ExprKind::Mul:
      out.push_back(e);
      [[fallthrough]];
    case ExprKind::Min:
    case ExprKind::Max:
      arithmetic_nodes(e.lhs(), seen, out);
      arithmetic_nodes(e.rhs(), seen, out);
      return;
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      arithmetic_nodes(e.lhs(), seen, out);
      return;
  }
}

std::string decimal(const z3::model& m, const z3::expr& e) {
  return m.eval(e, true).get_decimal_string(0);
}

class WellFormedProver {
 public:
  WellFormedProver(const Program& p, const ProveOptions& o)
      : p_(p),
        options_(o),
        alloc_(allocate(p, hw_of(o))),
        cutoff_(ObligationClass::well_formed, "statements", options_) {}

  std::vector<Obligation> run() {
    bind_params();
    grid();
    for (const Tensor& t : p_.tensors) tensor(t);
    hbm_total();
    {
      Obligation o = make("arithmetic fits int64", "allocation peaks (SBUF, PSUM)");
      arithmetic(o, {alloc_.sbuf_peak_bytes, alloc_.psum_peak_bytes});
    }
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      if (cutoff_.skip()) return;
      enter(loops);
      if (const auto* l = std::get_if<Loop>(&s.node)) loop(*l);
      if (const auto* d = std::get_if<DeclStmt>(&s.node)) placement(p_.tensor(d->tensor));
      if (const auto* i = std::get_if<InstrStmt>(&s.node)) instruction(*i);
      leave();
    });
    cutoff_.report(out_);
    return std::move(out_);
  }

 private:
  Obligation make(std::string rule, std::string subject) const {
    Obligation o;
    o.cls = ObligationClass::well_formed;
    o.rule = std::move(rule);
    o.subject = std::move(subject);
    return o;
  }

  // --- contexts: the params' box, then the loops around a statement ---------------------------

  void bind_params() {
    for (const Param& prm : p_.params) {
      box_.bind(intern_symbol(prm.name), {prm.lo, prm.hi});
    }
    const Interval g = box_.of(p_.grid);
    box_.bind(intern_symbol(kProgramIdParam),
              {0, std::max<Int128>(0, std::min<Int128>(g.hi, kMaxGrid) - 1)});
    box_.forget();
  }

  // The loops around the next statement: their variables' ranges in the box at once, their Z3
  // constraints only when an obligation needs Z3 (z()): most are proved by the box alone.
  void enter(const std::vector<const Loop*>& loops) {
    loops_ = loops;
    z3_entered_ = false;
    // A statement's expressions use only the params and its enclosing loops' variables, so
    // rebinding those (outermost first, each from the ones outside it) and forgetting the cached
    // intervals is enough; no copy of the params' box per statement.
    box_.forget();
    for (const Loop* l : loops) {
      const Interval start = box_.of(l->start), stop = box_.of(l->stop);
      // The interpreter binds a loop variable only inside int64 (its start and stop evaluated).
      constexpr Int128 lo64 = std::numeric_limits<int64_t>::min();
      constexpr Int128 hi64 = std::numeric_limits<int64_t>::max();
      const Int128 lo = std::max(start.lo, lo64);
      box_.bind(symbol_of(l), {lo, std::max(lo, std::min(stop.hi - 1, hi64))});
    }
    in_loops_ = true;
  }

  void leave() {
    if (z3_entered_) z_->leave_loops();
    z3_entered_ = false;
    in_loops_ = false;
  }

  SymbolId symbol_of(const Loop* l) {
    auto it = loop_symbols_.find(l);
    if (it == loop_symbols_.end()) it = loop_symbols_.emplace(l, intern_symbol(l->var)).first;
    return it->second;
  }

  // The Z3 state, made on first use (most programs need none) and entered into the current
  // statement's loops.
  ProgramSolver& z() {
    if (!z_) z_.emplace(p_, options_);
    if (!z3_entered_) {
      z_->enter_loops(loops_);
      z3_entered_ = true;
    }
    return *z_;
  }

  // --- the rules ------------------------------------------------------------------------------

  void grid() {
    Obligation o = make("grid in [1, " + std::to_string(kMaxGrid) + "]", "grid " + p_.grid.str());
    arithmetic(make("arithmetic fits int64", "grid " + p_.grid.str()), {p_.grid});
    const Interval g = box_.of(p_.grid);
    if (g.lo >= 1 && g.hi <= kMaxGrid) return proved(std::move(o));
    enter({});
    const z3::expr t = z().term(p_.grid);
    decide(o, z().ctx().bool_val(true), t >= 1 && t <= z().ctx().int_val(kMaxGrid),
           [&, t](const z3::model& m) { return "grid " + p_.grid.str() + " = " + decimal(m, t); });
    leave();
  }

  void tensor(const Tensor& t) {
    const std::string who = std::string(t.on_chip() ? "buffer" : "tensor") + " '" + t.name + "'";
    enter({});
    arithmetic(make("arithmetic fits int64", "shape of " + who), t.shape);
    // Dimensions.
    Obligation dims = make("dimensions >= 1", "shape of " + who);
    dims.tensor = t.name;
    bool boxed = true;
    for (const Expr& d : t.shape) boxed = boxed && box_.of(d).lo >= 1;
    if (boxed) {
      proved(std::move(dims));
    } else {
      std::vector<z3::expr> terms;
      for (const Expr& d : t.shape) terms.push_back(z().term(d));
      decide(dims, z().ctx().bool_val(true), positive(terms), [&, terms](const z3::model& m) {
        for (size_t i = 0; i < terms.size(); ++i) {
          int64_t v = 0;
          if (m.eval(terms[i], true).is_numeral_i64(v) && v < 1) {
            return "dim " + std::to_string(i) + " " + t.shape[i].str() + " = " + std::to_string(v);
          }
        }
        return std::string("a dimension below 1");
      });
    }
    // Size in bytes (assuming the dims are >= 1: concrete_shapes refuses the rest first).
    Obligation size = make("size fits int64", "bytes of " + who);
    size.tensor = t.name;
    Int128 hi = static_cast<Int128>(dtype_size(t.dtype));
    for (const Expr& d : t.shape) {
      hi = std::min<Int128>(hi * std::max<Int128>(box_.of(d).hi, 1), kLimit);
    }
    if (!t.on_chip()) {
      hbm_hi_ += hi;
      hbm_tensors_.push_back(&t);
    }
    if (hi < kLimit) {
      proved(std::move(size));
    } else {
      std::vector<z3::expr> terms;
      for (const Expr& d : t.shape) terms.push_back(z().term(d));
      const z3::expr bytes = bytes_of(t);
      decide(size, positive(terms), bytes <= kInt64Max(), [&, bytes](const z3::model& m) {
        return "bytes of " + who + " = " + decimal(m, bytes);
      });
    }
    leave();
  }

  // Every term >= 1.
  z3::expr positive(const std::vector<z3::expr>& terms) {
    z3::expr all = z().ctx().bool_val(true);
    for (const z3::expr& t : terms) all = all && t >= 1;
    return all;
  }

  // The size of t in bytes as a Z3 term (product of its dims and the element size).
  z3::expr bytes_of(const Tensor& t) {
    z3::expr bytes = z().ctx().int_val(static_cast<int64_t>(dtype_size(t.dtype)));
    for (const Expr& d : t.shape) bytes = bytes * z().term(d);
    return bytes;
  }

  void hbm_total() {
    Obligation o = make("size fits int64", "bytes of all HBM tensors together");
    if (hbm_hi_ < kLimit) return proved(std::move(o));
    enter({});
    z3::expr total = z().ctx().int_val(0), assumed = z().ctx().bool_val(true);
    for (const Tensor* t : hbm_tensors_) {
      const z3::expr b = bytes_of(*t);
      total = total + b;
      assumed = assumed && b >= 1 && b <= kInt64Max();
    }
    decide(o, assumed, total <= kInt64Max(),
           [total](const z3::model& m) { return "HBM bytes = " + decimal(m, total); });
    leave();
  }

  void loop(const Loop& l) {
    const std::string what = "loop " + l.var + " in range(" + l.start.str() + ", " + l.stop.str() +
                             ", " + std::to_string(l.step) + ")";
    arithmetic(make("arithmetic fits int64", "bounds of " + what), {l.start, l.stop});
    Obligation o = make("trip count >= 0", what);
    if (box_.of(l.stop).lo >= box_.of(l.start).hi) return proved(std::move(o));
    const z3::expr start = z().term(l.start), stop = z().term(l.stop);
    decide(o, z().ctx().bool_val(true), stop >= start, [start, stop](const z3::model& m) {
      return "range(" + decimal(m, start) + ", " + decimal(m, stop) + ")";
    });
  }

  void placement(const Tensor& t) {
    const auto& bp = alloc_.placements.at(t.id);
    if (!bp) return;
    const std::string who = "placement of buffer '" + t.name + "'";
    arithmetic(make("arithmetic fits int64", who),
               {bp->partition, bp->byte_offset, bp->bytes_per_copy, bp->copy_stride});
    if (t.bufs < 2) return;
    // Copy c in [0, bufs - 1] starts at byte_offset + c * copy_stride (Machine::copy_offset).
    Obligation o = make("arithmetic fits int64", "byte offsets of the " + std::to_string(t.bufs) +
                                                     " copies of buffer '" + t.name + "'");
    const Interval off = box_.of(bp->byte_offset), stride = box_.of(bp->copy_stride);
    const Int128 c = t.bufs - 1;
    if (off.within_int64() && stride.within_int64() &&
        Interval{std::min(off.lo + c * stride.lo, off.lo), std::max(off.hi + c * stride.hi, off.hi)}
            .within_int64()) {
      return proved(std::move(o));
    }
    const z3::expr copy = z().extra("copy of '" + t.name + "'");
    const z3::expr step = copy * z().term(bp->copy_stride);
    const z3::expr at = z().term(bp->byte_offset) + step;
    decide(o, copy >= 0 && copy <= z().ctx().int_val(t.bufs - 1),
           step >= kInt64Min() && step <= kInt64Max() && at >= kInt64Min() && at <= kInt64Max(),
           [at](const z3::model& m) { return "byte offset " + decimal(m, at) + ", beyond int64"; });
  }

  void instruction(const InstrStmt& s) {
    std::vector<Expr> exprs;
    std::vector<const Access*> accesses = written_accesses(s.ins);
    for (const Access* a : read_accesses(s.ins)) accesses.push_back(a);
    for (size_t k = 0; k < accesses.size(); ++k) {
      const Access& a = *accesses[k];
      for (const AccessDim& d : a.dims) {
        exprs.push_back(d.start);
        exprs.push_back(d.size);
      }
      if (a.core) exprs.push_back(*a.core);
      if (a.indirect) accesses.push_back(a.indirect->offsets.get());
    }
    if (const auto* i = std::get_if<AffineSelect>(&s.ins)) exprs.push_back(i->offset);
    if (const auto* i = std::get_if<Iota>(&s.ins)) exprs.push_back(i->offset);
    Obligation o = make("arithmetic fits int64", "indices and offsets");
    o.instruction = s.id;
    arithmetic(o, exprs, &s);
  }

  // Every sum and product inside `exprs` lies within int64. The instruction's text is printed
  // only for an obligation the box does not prove (printing every one cost more than proving).
  void arithmetic(Obligation o, const std::vector<Expr>& exprs, const InstrStmt* s = nullptr) {
    bool boxed = true;
    for (const Expr& e : exprs) boxed = boxed && box_.evaluates_within_int64(e);
    if (boxed) return proved(std::move(o));
    if (s != nullptr) o.instruction_text = print_instruction(p_, s->ins);
    std::unordered_set<const ExprNode*> seen;
    std::vector<Expr> nodes;
    for (const Expr& e : exprs) arithmetic_nodes(e, seen, nodes);
    const bool outside = !in_loops_;
    if (outside) enter({});
    z3::expr holds = z().ctx().bool_val(true);
    std::vector<z3::expr> terms;
    for (const Expr& n : nodes) {
      terms.push_back(z().term(n));
      holds = holds && terms.back() >= kInt64Min() && terms.back() <= kInt64Max();
    }
    decide(o, z().ctx().bool_val(true), holds, [nodes, terms](const z3::model& m) {
      for (size_t i = 0; i < terms.size(); ++i) {
        const z3::expr v = m.eval(terms[i], true);
        if (!v.is_numeral()) continue;
        int64_t ignored = 0;
        if (!v.is_numeral_i64(ignored)) {
          return "`" + nodes[i].str() + "` = " + v.get_decimal_string(0) + ", beyond int64";
        }
      }
      return std::string("an intermediate result beyond int64");
    });
    if (outside) leave();
  }

  void proved(Obligation o) {
    o.verdict = Verdict::proved;
    out_.push_back(std::move(o));
  }

  void decide(Obligation& o, const z3::expr& assumed, const z3::expr& holds,
              const ProgramSolver::Explain& explain) {
    z().settle(o, assumed, holds, explain, {CheckKind::well_formed, false});
    out_.push_back(std::move(o));
  }

  z3::expr kInt64Max() { return z().ctx().int_val(std::numeric_limits<int64_t>::max()); }
  z3::expr kInt64Min() { return z().ctx().int_val(std::numeric_limits<int64_t>::min()); }
  static constexpr Int128 kLimit = static_cast<Int128>(std::numeric_limits<int64_t>::max());

  const Program& p_;
  ProveOptions options_;
  Allocation alloc_;
  std::optional<ProgramSolver> z_;
  IntervalBounds box_;  // the params, then the loops around the current statement
  std::vector<const Loop*> loops_;
  std::unordered_map<const Loop*, SymbolId> loop_symbols_;
  bool in_loops_ = false, z3_entered_ = false;
  Int128 hbm_hi_ = 0;
  std::vector<const Tensor*> hbm_tensors_;
  BudgetCutoff cutoff_;
  std::vector<Obligation> out_;
};

}  // namespace

std::vector<Obligation> prove_well_formed(const Program& p, const ProveOptions& options) {
  return WellFormedProver(p, options).run();
}

}  // namespace ncv::solver
