#include "solver/bounds.h"

#include "model/ir/printer.h"
#include "solver/program_solver.h"

namespace ncv::solver {

namespace {

// One obligation's inequality: lo <= first and last <= hi, where the interpreter's error names
// the first and last index.
struct Goal {
  z3::expr first, last, lo, hi;
  std::string what;  // "start i * 128 + 1, size 128, step 1"
};

class BoundsProver {
 public:
  BoundsProver(const Program& p, const ProveOptions& o)
      : p_(p), z_(p, o), cutoff_(ObligationClass::bounds, "instructions", o) {}

  std::vector<Obligation> run() {
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      const auto* i = std::get_if<InstrStmt>(&s.node);
      if (i && !cutoff_.skip()) instruction(loops, *i);
    });
    cutoff_.report(out_);
    return std::move(out_);
  }

 private:
  void instruction(const std::vector<const Loop*>& loops, const InstrStmt& s) {
    z_.enter_loops(loops);
    current_ = &s;
    text_ = print_instruction(p_, s.ins);
    for (const Access* a : written_accesses(s.ins)) access(*a, "write");
    for (const Access* a : read_accesses(s.ins)) access(*a, "read");
    z_.leave_loops();
  }

  void access(const Access& a, const std::string& role) {
    z3::context& ctx = z_.ctx();
    const Tensor& t = p_.tensor(a.tensor);
    Obligation base;
    base.cls = ObligationClass::bounds;
    base.rule = "index bounds";
    base.instruction = current_->id;
    base.instruction_text = text_;
    base.role = role;
    base.tensor = t.name;
    const std::string access_text = print_access(p_, a);
    // resolve() rejects a size below 1 (shape_rule) and concrete_shape a tensor dim below 1
    // before any bounds check, so bounds are only claimed where both hold.
    z3::expr assumed = ctx.bool_val(true);
    std::vector<z3::expr> start, last, shape;
    for (size_t d = 0; d < a.rank(); ++d) {
      const AccessDim& ad = a.dims[d];
      start.push_back(z_.term(ad.start));
      const z3::expr size = z_.term(ad.size);
      last.push_back(start.back() + (size - 1) * ctx.int_val(ad.step));
      shape.push_back(z_.term(t.shape.at(d)));
      assumed = assumed && size >= 1 && shape.back() >= 1;
    }
    if (a.core) {
      Obligation o = base;
      o.dim = -1;
      o.subject = role + " " + access_text + " (tensor '" + t.name + "', core index)";
      const z3::expr c = z_.term(*a.core);
      decide(o, assumed, Goal{c, c, ctx.int_val(0), z_.term(p_.grid) - 1, a.core->str()});
    }
    for (size_t d = 0; d < a.rank(); ++d) {
      Obligation o = base;
      o.dim = static_cast<int>(d);
      o.subject =
          role + " " + access_text + " (tensor '" + t.name + "', dim " + std::to_string(d) + ")";
      std::string what = "start " + a.dims[d].start.str() + ", size " + a.dims[d].size.str() +
                         ", step " + std::to_string(a.dims[d].step);
      Goal g{start[d], last[d], ctx.int_val(0), shape[d] - 1, what};
      if (a.indirect && a.indirect->dim == static_cast<int>(d)) {
        // oob_mode.skip: a row whose offset leaves the tensor is not transferred, so no index
        // of the indirect dim is an obligation (the interpreter checks only the declared range).
        if (skips_out_of_bounds_rows()) continue;
        // Any offset of the declared range may be read (Indirect: what the solver may assume).
        o.indirect_dim = true;
        g.first = g.first + ctx.int_val(a.indirect->lo);
        g.last = g.last + ctx.int_val(a.indirect->hi);
        g.what += ", indirect offsets in [" + std::to_string(a.indirect->lo) + ", " +
                  std::to_string(a.indirect->hi) + "]";
      }
      decide(o, assumed, g);
    }
    if (a.indirect) access(*a.indirect->offsets, "indirect offsets of " + role);
  }

  bool skips_out_of_bounds_rows() const {
    const auto* dma = std::get_if<DmaCopy>(&current_->ins);
    return dma && dma->oob_skip;
  }

  void decide(Obligation& o, const z3::expr& assumed, const Goal& g) {
    auto explain = [&](const z3::model& m) {
      const int64_t first = z_.value(m, g.first), last = z_.value(m, g.last);
      const int64_t lo = z_.value(m, g.lo), hi = z_.value(m, g.hi);
      return (first < lo ? "first index " + std::to_string(first) + " < " + std::to_string(lo)
                         : "last index " + std::to_string(last) + " > " + std::to_string(hi) +
                               " (the dim has " + std::to_string(hi + 1) + " entries)") +
             " (" + g.what + ")";
    };
    z_.settle(o, assumed, g.first >= g.lo && g.last <= g.hi, explain,
              {CheckKind::out_of_bounds, o.indirect_dim});
    out_.push_back(std::move(o));
  }

  const Program& p_;
  ProgramSolver z_;
  const InstrStmt* current_ = nullptr;
  std::string text_;
  BudgetCutoff cutoff_;
  std::vector<Obligation> out_;
};

}  // namespace

std::vector<Obligation> prove_bounds(const Program& p, const ProveOptions& options) {
  return BoundsProver(p, options).run();
}

}  // namespace ncv::solver
