#include "solver/bounds.h"

#include <stdexcept>

#include "model/text_form.h"
#include "solver/domain.h"
#include "solver/replay.h"
#include "solver/z3_expr.h"

namespace ncv::solver {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::proved:
      return "proved";
    case Verdict::counterexample:
      return "counterexample";
    case Verdict::unknown:
      return "unknown";
  }
  return "?";
}

std::string BoundsObligation::describe() const {
  std::string s = std::string(verdict_name(verdict)) + ": instruction " +
                  std::to_string(instruction) + " `" + instruction_text + "`, " + role + " " +
                  access_text + " (tensor '" + tensor + "', " +
                  (dim < 0 ? std::string("core index") : "dim " + std::to_string(dim)) + ")";
  if (verdict == Verdict::unknown) s += ": " + unknown_reason;
  if (counterexample) {
    s += ": " + counterexample->violated + " with params";
    for (const auto& [name, value] : counterexample->params) {
      s += " " + name + "=" + std::to_string(value);
    }
    if (!counterexample->loop_indices.empty()) {
      s += ", loop indices";
      for (const auto& [name, value] : counterexample->loop_indices) {
        s += " " + name + "=" + std::to_string(value);
      }
    }
  }
  if (replay) {
    s += std::string(replay->reproduced     ? "; replay: reproduced, "
                     : replay->disagreement ? "; replay: SOLVER/INTERPRETER DISAGREEMENT, "
                                            : "; replay: not reproduced, ") +
         replay->detail;
  }
  return s;
}

namespace {

int64_t value_of(const z3::model& m, const z3::expr& e) {
  return m.eval(e, true).get_numeral_int64();
}

// One obligation's inequality: lo <= first and last <= hi, where the interpreter's error names
// the first and last index.
struct Goal {
  z3::expr first, last, lo, hi;
  std::string what;  // "start i * 128 + 1, size 128, step 1"
};

class BoundsProver {
 public:
  BoundsProver(const Program& p, const ProveOptions& o) : p_(p), opts_(o), solver_(ctx_) {
    z3::params prm(ctx_);
    prm.set("timeout", opts_.timeout_ms);
    solver_.set(prm);
    params_ = declare_params(ctx_, p_);
    solver_.add(param_domain(ctx_, p_, params_));
  }

  std::vector<BoundsObligation> run() {
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      if (const auto* i = std::get_if<InstrStmt>(&s.node)) instruction(loops, *i);
    });
    return std::move(out_);
  }

 private:
  void instruction(const std::vector<const Loop*>& loops, const InstrStmt& s) {
    solver_.push();
    symbols_ = params_;
    solver_.add(loop_iterations(ctx_, loops, symbols_));
    loops_ = &loops;
    current_ = &s;
    text_ = print_instruction(p_, s.ins);
    for (const Access* a : written_accesses(s.ins)) access(*a, "write");
    for (const Access* a : read_accesses(s.ins)) access(*a, "read");
    solver_.pop();
  }

  void access(const Access& a, const std::string& role) {
    const Tensor& t = p_.tensor(a.tensor);
    BoundsObligation base;
    base.instruction = current_->id;
    base.instruction_text = text_;
    base.role = role;
    base.access_text = print_access(p_, a);
    base.tensor = t.name;
    // resolve() rejects a size below 1 (shape_rule) and concrete_shape a tensor dim below 1
    // before any bounds check, so bounds are only claimed where both hold.
    z3::expr assumed = ctx_.bool_val(true);
    std::vector<z3::expr> start, last, shape;
    for (size_t d = 0; d < a.rank(); ++d) {
      const AccessDim& ad = a.dims[d];
      start.push_back(to_z3(ctx_, ad.start, symbols_));
      const z3::expr size = to_z3(ctx_, ad.size, symbols_);
      last.push_back(start.back() + (size - 1) * ctx_.int_val(ad.step));
      shape.push_back(to_z3(ctx_, t.shape.at(d), symbols_));
      assumed = assumed && size >= 1 && shape.back() >= 1;
    }
    if (a.core) {
      BoundsObligation o = base;
      o.dim = -1;
      const z3::expr c = to_z3(ctx_, *a.core, symbols_);
      decide(o, assumed,
             Goal{c, c, ctx_.int_val(0), to_z3(ctx_, p_.grid, symbols_) - 1, a.core->str()});
    }
    for (size_t d = 0; d < a.rank(); ++d) {
      BoundsObligation o = base;
      o.dim = static_cast<int>(d);
      std::string what = "start " + a.dims[d].start.str() + ", size " + a.dims[d].size.str() +
                         ", step " + std::to_string(a.dims[d].step);
      Goal g{start[d], last[d], ctx_.int_val(0), shape[d] - 1, what};
      if (a.indirect && a.indirect->dim == static_cast<int>(d)) {
        // Any offset of the declared range may be read (Indirect: what the solver may assume).
        o.indirect_dim = true;
        g.first = g.first + ctx_.int_val(a.indirect->lo);
        g.last = g.last + ctx_.int_val(a.indirect->hi);
        g.what += ", indirect offsets in [" + std::to_string(a.indirect->lo) + ", " +
                  std::to_string(a.indirect->hi) + "]";
      }
      decide(o, assumed, g);
    }
    if (a.indirect) access(*a.indirect->offsets, "indirect offsets of " + role);
  }

  void decide(BoundsObligation& o, const z3::expr& assumed, const Goal& g) {
    solver_.push();
    solver_.add(assumed && !(g.first >= g.lo && g.last <= g.hi));
    z3::check_result r = z3::unknown;
    std::string error;
    try {
      r = solver_.check();
    } catch (const z3::exception& e) {
      error = e.msg();
    }
    if (r == z3::unsat) {
      o.verdict = Verdict::proved;
    } else if (r == z3::sat) {
      o.verdict = Verdict::counterexample;
      o.counterexample = extract(solver_.get_model(), g);
    } else {
      o.verdict = Verdict::unknown;
      o.unknown_reason = "Z3 returned unknown (" +
                         (error.empty() ? solver_.reason_unknown() : error) + ", timeout " +
                         std::to_string(opts_.timeout_ms) + " ms)";
    }
    solver_.pop();
    if (o.counterexample && opts_.replay) {
      o.replay = replay_counterexample(p_, *o.counterexample, CheckKind::out_of_bounds,
                                       o.instruction, o.indirect_dim, opts_.hw);
    }
    out_.push_back(std::move(o));
  }

  Counterexample extract(const z3::model& m, const Goal& g) {
    Counterexample c;
    for (const Param& prm : p_.params) {
      c.params[prm.name] = value_of(m, params_.at(intern_symbol(prm.name)));
    }
    // With more than one core, the core an obligation fails on is part of the counterexample
    // (the interpreter runs every core, so the replay needs no separate input for it).
    if (!p_.grid.is_const()) {
      c.loop_indices.emplace_back(std::string(kProgramIdParam),
                                  value_of(m, params_.at(intern_symbol(kProgramIdParam))));
    }
    for (const Loop* l : *loops_) {
      c.loop_indices.emplace_back(l->var, value_of(m, symbols_.at(intern_symbol(l->var))));
    }
    const int64_t first = value_of(m, g.first), last = value_of(m, g.last);
    const int64_t lo = value_of(m, g.lo), hi = value_of(m, g.hi);
    c.violated = first < lo ? "first index " + std::to_string(first) + " < " + std::to_string(lo)
                            : "last index " + std::to_string(last) + " > " + std::to_string(hi) +
                                  " (the dim has " + std::to_string(hi + 1) + " entries)";
    c.violated += " (" + g.what + ")";
    return c;
  }

  const Program& p_;
  ProveOptions opts_;
  z3::context ctx_;
  z3::solver solver_;
  SymbolTerms params_, symbols_;
  const std::vector<const Loop*>* loops_ = nullptr;
  const InstrStmt* current_ = nullptr;
  std::string text_;
  std::vector<BoundsObligation> out_;
};

}  // namespace

std::vector<BoundsObligation> prove_bounds(const Program& p, const ProveOptions& options) {
  return BoundsProver(p, options).run();
}

}  // namespace ncv::solver
