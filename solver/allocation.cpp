#include "solver/allocation.h"

#include <algorithm>
#include <stdexcept>

#include "model/isa/rules.h"
#include "solver/expr_interval.h"
#include "solver/monomial_bound.h"
#include "solver/program_solver.h"

namespace ncv::solver {

namespace {

// Where each scope sits in the program: its loop, its parent scope and, for every top-level
// statement of its body, the tensors that statement touches (its own accesses or those of the
// loops nested in it). Liveness and the enclosing loops of a buffer come from here.
struct ScopeInfo {
  const Loop* loop = nullptr;  // nullptr for the kernel body (scope 0)
  ScopeId parent = 0;
  size_t index_in_parent = 0;  // position of `loop` in the parent's body
  std::vector<std::vector<TensorId>> touched;
};

void add_access(const Access& a, std::vector<TensorId>& out) {
  out.push_back(a.tensor);
  if (a.indirect) add_access(*a.indirect->offsets, out);
}

class Scopes {
 public:
  explicit Scopes(const Program& p) : info_(p.num_scopes) { walk(p.body, 0); }

  const ScopeInfo& at(ScopeId s) const { return info_.at(s); }

  // The loops around a declaration in scope s, outermost first (the scope's own loop last).
  std::vector<const Loop*> loops(ScopeId s) const {
    std::vector<const Loop*> out;
    for (; s != 0; s = info_.at(s).parent) out.push_back(info_.at(s).loop);
    std::reverse(out.begin(), out.end());
    return out;
  }

  // The position, in `outer`'s body, of the statement that contains scope `inner`; nullopt when
  // `outer` does not strictly enclose `inner`.
  std::optional<size_t> position_in(ScopeId outer, ScopeId inner) const {
    while (inner != 0) {
      const ScopeInfo& i = info_.at(inner);
      if (i.parent == outer) return i.index_in_parent;
      inner = i.parent;
    }
    return std::nullopt;
  }

 private:
  // Records scope s (whose body is `body`) and its nested scopes; returns the tensors touched
  // anywhere in `body`.
  std::vector<TensorId> walk(const std::vector<Stmt>& body, ScopeId s) {
    // info_ is sized once, so references into it stay valid across the recursion.
    ScopeInfo& info = info_.at(s);
    info.touched.assign(body.size(), {});
    std::vector<TensorId> all;
    for (size_t k = 0; k < body.size(); ++k) {
      std::vector<TensorId>& here = info.touched[k];
      if (const auto* i = std::get_if<InstrStmt>(&body[k].node)) {
        for (const Access* a : written_accesses(i->ins)) add_access(*a, here);
        for (const Access* a : read_accesses(i->ins)) add_access(*a, here);
      } else if (const auto* l = std::get_if<Loop>(&body[k].node)) {
        ScopeInfo& child = info_.at(l->scope);
        child.loop = l;
        child.parent = s;
        child.index_in_parent = k;
        here = walk(l->body, l->scope);
      }
      all.insert(all.end(), here.begin(), here.end());
    }
    return all;
  }

  std::vector<ScopeInfo> info_;
};

// The copy of t in use where its placement is evaluated: the iteration count of its scope's
// loop modulo bufs (Interpreter::copy_offset); nullopt for copy 0 (bufs 1, or the kernel body,
// whose iteration count is always 0).
std::optional<Expr> copy_in_use(const Tensor& t, const Scopes& scopes) {
  const Loop* l = scopes.at(t.scope).loop;
  if (t.bufs <= 1 || !l) return std::nullopt;
  return Expr::mod(Expr::floordiv(l->var_expr() - l->start, l->step), t.bufs);
}

std::string buffer_subject(const Tensor& t, const Scopes& scopes) {
  const Loop* l = scopes.at(t.scope).loop;
  return "buffer '" + t.name + "' (" + (l ? "scope of loop " + l->var : "kernel body") + ")";
}

// Copy c's first byte: byte_offset + c * copy_stride.
Expr copy_offset(const BufferPlacement& bp, const std::optional<Expr>& copy) {
  return copy ? bp.byte_offset + *copy * bp.copy_stride : bp.byte_offset;
}

int64_t capacity_of(Memory m, const HwConfig& hw) {
  return m == Memory::SBUF ? hw.sbuf_usable_bytes_per_partition() : hw.psum_bytes_per_partition;
}

// One bound per term of the requirement (allocator.h): the peak is their maximum.
CapacityRule peak_rule(const std::string& mem, const std::vector<Expr>& terms, int64_t cap,
                       const HwConfig& hw) {
  CapacityRule r;
  r.rule = mem + " capacity";
  r.subject = "live " + mem + " buffers at their peak";
  r.core_zero = true;
  r.spillable = true;
  for (const Expr& t : terms.empty() ? std::vector<Expr>{Expr(0)} : terms) {
    r.bounds.push_back({t, Expr(cap), "live " + mem + " bytes per partition at the peak",
                        hw.name + "'s usable " + mem + " bytes per partition"});
  }
  return r;
}

CapacityRule partition_rule(const Tensor& t, const Scopes& scopes, const HwConfig& hw) {
  CapacityRule r;
  // Rule::buffer_partitions (model/isa/rules.h) as a capacity bound: rows <= partitions.
  r.rule = rule_label(Rule::buffer_partitions, hw.partitions);
  r.subject = buffer_subject(t, scopes);
  r.tensor = t.name;
  r.replay = rule_info(Rule::buffer_partitions).kind;
  r.bounds.push_back({t.shape.at(0), Expr(hw.partitions), "partitions of '" + t.name + "'",
                      hw.name + "'s partitions"});
  return r;
}

// Interpreter::enter_scope: 0 <= partition, partition + rows <= partitions, 0 <= offset and
// offset + bytes <= capacity (which implies bytes <= capacity).
CapacityRule placement_rule(const Tensor& t, const BufferPlacement& bp, const Scopes& scopes,
                            const HwConfig& hw) {
  const std::string mem(t.memory == Memory::SBUF ? "SBUF" : "PSUM");
  CapacityRule r;
  r.rule = "placement inside " + mem;
  r.subject = buffer_subject(t, scopes);
  r.tensor = t.name;
  r.loops = scopes.loops(t.scope);
  r.copy = copy_in_use(t, scopes);
  const Expr off = copy_offset(bp, r.copy);
  const std::string partitions = std::to_string(hw.partitions);
  r.bounds.push_back({Expr(0), bp.partition, "0", "first partition"});
  r.bounds.push_back({bp.partition + t.shape.at(0), Expr(hw.partitions),
                      "first partition + partitions", hw.name + "'s " + partitions});
  r.bounds.push_back({Expr(0), off, "0", "first byte of the copy"});
  r.bounds.push_back({off + bp.bytes_per_copy, Expr(capacity_of(t.memory, hw)),
                      "end byte of the copy", hw.name + "'s usable " + mem + " bytes"});
  return r;
}

bool on_chip_buffer(const Tensor& t) {
  return t.kind == TensorKind::Buffer && t.on_chip();
}

}  // namespace

std::vector<CapacityRule> capacity_rules(const Program& p, const Allocation& a,
                                         const HwConfig& hw) {
  const Scopes scopes(p);
  std::vector<CapacityRule> out;
  for (const Tensor& t : p.tensors) {
    if (t.on_chip()) out.push_back(partition_rule(t, scopes, hw));
  }
  out.push_back(peak_rule("SBUF", a.sbuf_peak_terms, hw.sbuf_usable_bytes_per_partition(), hw));
  out.push_back(peak_rule("PSUM", a.psum_peak_terms, hw.psum_bytes_per_partition, hw));
  for (const Tensor& t : p.tensors) {
    const auto& bp = a.placements.at(t.id);
    if (on_chip_buffer(t) && bp && bp->explicit_placement) {
      out.push_back(placement_rule(t, *bp, scopes, hw));
    }
  }
  return out;
}

std::string describe_violation(const CapacityRule& r,
                               const std::function<int64_t(const Expr&)>& value) {
  // A side beyond int64 (EvalError from eval, z3::exception from a model's numeral) is named as
  // such: a placement at 2^63 - 1 plus its bytes is past every capacity, not a crash.
  const auto value_of = [&](const Expr& e) -> std::optional<int64_t> {
    try {
      return value(e);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  const auto text = [](const std::optional<int64_t>& v) {
    return v ? std::to_string(*v) : std::string("beyond int64");
  };
  // Bounds saying the same thing (the terms of a peak) are reported once, at the largest side.
  struct Failing {
    const CapacityBound* b;
    std::optional<int64_t> lhs, rhs;
  };
  std::vector<Failing> failing;
  for (const CapacityBound& b : r.bounds) {
    const std::optional<int64_t> lhs = value_of(b.lhs), rhs = value_of(b.rhs);
    if (lhs && rhs && *lhs <= *rhs) continue;
    auto same = std::find_if(failing.begin(), failing.end(), [&](const Failing& f) {
      return f.b->lhs_what == b.lhs_what && f.b->rhs_what == b.rhs_what;
    });
    if (same == failing.end()) {
      failing.push_back({&b, lhs, rhs});
    } else if (same->lhs && (!lhs || *lhs > *same->lhs)) {
      *same = {&b, lhs, rhs};
    }
  }
  std::string out;
  for (const Failing& f : failing) {
    if (!out.empty()) out += "; ";
    out += f.b->lhs_what + " " + text(f.lhs) + (f.lhs && f.rhs ? " > " : " vs ") + f.b->rhs_what +
           " " + text(f.rhs);
  }
  if (r.copy) out += " (copy " + text(value_of(*r.copy)) + ")";
  return r.subject + ": " + out;
}

namespace {

class AllocationProver {
 public:
  AllocationProver(const Program& p, const ProveOptions& o)
      : p_(p),
        hw_(hw_of(o)),
        alloc_(allocate(p, hw_)),
        scopes_(p),
        z_(p, o),
        cutoff_(ObligationClass::allocation, "capacity rules and buffer checks", o) {}

  std::vector<Obligation> run() {
    for (const CapacityRule& r : capacity_rules(p_, alloc_, hw_)) {
      if (!cutoff_.skip()) capacity(r);
    }
    for (const Tensor& x : p_.tensors) {
      if (!explicit_buffer(x)) continue;
      for (const Tensor& y : p_.tensors) {
        // Pairs of two explicit placements are checked once.
        const bool checked = explicit_buffer(y) && y.id < x.id;
        if (y.id != x.id && !checked && on_chip_buffer(y) && y.memory == x.memory &&
            !cutoff_.skip()) {
          overlap(x, y);
        }
      }
    }
    for (const Tensor& t : p_.tensors) {
      if (on_chip_buffer(t) && t.bufs > 1 && !cutoff_.skip()) copies(t);
    }
    cutoff_.report(out_);
    return std::move(out_);
  }

 private:
  bool explicit_buffer(const Tensor& t) const {
    const auto& bp = alloc_.placements.at(t.id);
    return on_chip_buffer(t) && bp && bp->explicit_placement;
  }

  Obligation base(const std::string& rule, const std::string& subject, const std::string& tensor) {
    Obligation o;
    o.cls = ObligationClass::allocation;
    o.rule = rule;
    o.subject = subject;
    o.tensor = tensor;
    return o;
  }

  // The interpreter refuses params that give a tensor a dimension below 1 before any allocation
  // check, so the rules are only claimed where every dimension is at least 1.
  z3::expr dims_positive() {
    z3::expr all = z_.ctx().bool_val(true);
    for (const Tensor& t : p_.tensors) {
      for (const Expr& d : t.shape) all = all && z_.term(d) >= 1;
    }
    return all;
  }

  // Ranges of the params, the program id (0 where only core 0 is checked) and the loops of `r`
  // over the params' box, for the monomial fast path; nullopt when a loop may run no iteration
  // (its range would be empty: Z3 decides).
  std::optional<IntervalBounds> ranges(const CapacityRule& r) const {
    IntervalBounds b;
    for (const Param& prm : p_.params) b.bind(intern_symbol(prm.name), {prm.lo, prm.hi});
    const Interval grid = b.of(p_.grid);
    const Int128 last_core = std::min<Int128>(grid.hi, 64) - 1;
    if (last_core < 0) return std::nullopt;
    b.bind(intern_symbol(kProgramIdParam), {0, r.core_zero ? Int128(0) : last_core});
    for (const Loop* l : r.loops) {
      const Interval start = b.of(l->start), stop = b.of(l->stop);
      if (!start.within_int64() || !stop.within_int64() || stop.hi - 1 < start.lo) {
        return std::nullopt;
      }
      b.forget();
      b.bind(intern_symbol(l->var), {start.lo, stop.hi - 1});
    }
    return b;
  }

  // Every bound of r holds by the monomial fast path (solver/monomial_bound.h).
  bool holds_by_monomials(const CapacityRule& r) const {
    std::optional<IntervalBounds> b = ranges(r);
    if (!b) return false;
    MonomialBounds m(p_, std::move(*b));
    return std::all_of(r.bounds.begin(), r.bounds.end(),
                       [&](const CapacityBound& cb) { return m.proves_le(cb.lhs, cb.rhs); });
  }

  void capacity(const CapacityRule& r) {
    Obligation o = base(r.rule, r.subject, r.tensor);
    o.spillable = r.spillable;
    if (holds_by_monomials(r)) {
      o.verdict = Verdict::proved;
      out_.push_back(std::move(o));
      return;
    }
    z_.enter_loops(r.loops);
    z3::expr assumed = dims_positive();
    if (r.core_zero) assumed = assumed && z_.term(Expr::var(kProgramIdParam)) == 0;
    z3::expr holds = z_.ctx().bool_val(true);
    for (const CapacityBound& b : r.bounds) holds = holds && z_.term(b.lhs) <= z_.term(b.rhs);
    auto explain = [&](const z3::model& m) {
      return describe_violation(r, [&](const Expr& e) { return z_.value(m, z_.term(e)); });
    };
    z_.settle(o, assumed, holds, explain, {r.replay, false});
    z_.leave_loops();
    out_.push_back(std::move(o));
  }

  // Live together (rules 1 and 2 of model/ir/liveness.h): the regions' bodies are the same and
  // their spans of use intersect, or one region's body encloses the other's and the statement
  // holding the inner body lies inside the outer span. A buffer holds nothing before its first
  // access and nothing needed after its last one, and an iteration-local buffer nothing between
  // iterations, so reusing its bytes for a buffer used strictly outside its region clobbers
  // nothing (sd_attention_allocated reuses PSUM banks that way; the FlashAttention tutorial's v9
  // and v10 put qk and scores_psum_t in the same banks, each live within one loop of a q tile).
  // Regions in sibling bodies are never live together.
  // The first pair of regions of x and y live together, if any.
  std::optional<std::pair<const LiveRegion*, const LiveRegion*>> live_together(
      const Tensor& x, const Tensor& y) const {
    for (const LiveRegion& rx : alloc_.regions.at(x.id)) {
      for (const LiveRegion& ry : alloc_.regions.at(y.id)) {
        if (regions_meet(rx, ry)) return std::make_pair(&rx, &ry);
      }
    }
    return std::nullopt;
  }

  bool regions_meet(const LiveRegion& rx, const LiveRegion& ry) const {
    if (!rx.used || !ry.used) return false;  // an untouched buffer holds nothing
    if (rx.scope == ry.scope) return rx.first <= ry.last && ry.first <= rx.last;
    if (auto k = scopes_.position_in(rx.scope, ry.scope)) return rx.first <= *k && *k <= rx.last;
    if (auto k = scopes_.position_in(ry.scope, rx.scope)) return ry.first <= *k && *k <= ry.last;
    return false;
  }

  // The partition and byte ranges of t's copy in use, as Z3 terms under the current loops.
  struct Footprint {
    z3::expr part, rows, off, bytes;
  };
  Footprint footprint(const Tensor& t) {
    const BufferPlacement& bp = *alloc_.placements.at(t.id);
    return {z_.term(bp.partition), z_.term(t.shape.at(0)),
            z_.term(copy_offset(bp, copy_in_use(t, scopes_))), z_.term(bp.bytes_per_copy)};
  }

  std::string footprint_text(const z3::model& m, const Tensor& t, const Footprint& f) {
    const int64_t part = z_.value(m, f.part), off = z_.value(m, f.off);
    std::string s = "'" + t.name + "' partitions [" + std::to_string(part) + ", " +
                    std::to_string(part + z_.value(m, f.rows)) + ") bytes [" + std::to_string(off) +
                    ", " + std::to_string(off + z_.value(m, f.bytes)) + ")";
    if (auto c = copy_in_use(t, scopes_)) {
      s += " (copy " + std::to_string(z_.value(m, z_.term(*c))) + ")";
    }
    return s;
  }

  void overlap(const Tensor& x, const Tensor& y) {
    const auto live = live_together(x, y);
    if (!live) return;
    // The deeper scope's loops bind every variable either placement mentions.
    const ScopeId rx = live->first->scope, ry = live->second->scope;
    const ScopeId inner = scopes_.position_in(rx, ry) ? ry : rx;
    Obligation o =
        base("placements disjoint", "buffers '" + x.name + "' and '" + y.name + "'", x.name);
    z_.enter_loops(scopes_.loops(inner));
    const Footprint a = footprint(x), b = footprint(y);
    const z3::expr holds = a.part + a.rows <= b.part || b.part + b.rows <= a.part ||
                           a.off + a.bytes <= b.off || b.off + b.bytes <= a.off;
    auto explain = [&](const z3::model& m) {
      return footprint_text(m, x, a) + " overlaps " + footprint_text(m, y, b) +
             " while both are live";
    };
    z_.settle(o, dims_positive(), holds, explain, {CheckKind::clobbered_read, true});
    z_.leave_loops();
    out_.push_back(std::move(o));
  }

  // Copy c occupies [offset + c * stride, + bytes): consecutive copies are disjoint iff the
  // stride covers a copy.
  void copies(const Tensor& t) {
    const BufferPlacement& bp = *alloc_.placements.at(t.id);
    Obligation o = base("bufs copies disjoint", buffer_subject(t, scopes_), t.name);
    z_.enter_loops(scopes_.loops(t.scope));
    const z3::expr stride = z_.term(bp.copy_stride), bytes = z_.term(bp.bytes_per_copy);
    auto explain = [&](const z3::model& m) {
      return "copy stride " + std::to_string(z_.value(m, stride)) + " < " +
             std::to_string(z_.value(m, bytes)) + " bytes per copy (" + std::to_string(t.bufs) +
             " copies)";
    };
    z_.settle(o, dims_positive(), stride >= bytes, explain, {CheckKind::clobbered_read, true});
    z_.leave_loops();
    out_.push_back(std::move(o));
  }

  const Program& p_;
  const HwConfig& hw_;
  Allocation alloc_;
  Scopes scopes_;
  ProgramSolver z_;
  BudgetCutoff cutoff_;
  std::vector<Obligation> out_;
};

// Calls f(env) for every iteration of `loops` (outermost first) the interpreter runs, with the
// loop variables bound in env; stops and returns f's first non-empty answer.
std::optional<std::string> each_iteration(
    const std::vector<const Loop*>& loops, size_t depth, Env& env,
    const std::function<std::optional<std::string>(const Env&)>& f) {
  if (depth == loops.size()) return f(env);
  const Loop& l = *loops[depth];
  const int64_t start = eval(l.start, env), stop = eval(l.stop, env);
  const SymbolId v = intern_symbol(l.var);
  // The last step may pass int64's end (a loop up to 2^63 - 1): that ends the loop, as in
  // Interpreter::advance.
  for (int64_t i = start; i < stop;) {
    env.set(v, i);
    if (auto why = each_iteration(loops, depth + 1, env, f)) return why;
    if (__builtin_add_overflow(i, l.step, &i)) break;
  }
  env.unset(v);
  return std::nullopt;
}

std::optional<std::string> rule_violation(const CapacityRule& r, Env env) {
  auto check = [&](const Env& at) -> std::optional<std::string> {
    for (const CapacityBound& b : r.bounds) {
      bool fails = false;
      try {
        fails = eval(b.lhs, at) > eval(b.rhs, at);
      } catch (const EvalError&) {
        // A side beyond int64: an end address past every capacity (the interpreter, comparing
        // offset > capacity - bytes, reports capacity), or arithmetic the interpreter fails as
        // well_formed. Either way the program does not fit at these params.
        fails = true;
      }
      if (fails) return describe_violation(r, [&](const Expr& e) { return eval(e, at); });
    }
    return std::nullopt;
  };
  return each_iteration(r.loops, 0, env, check);
}

}  // namespace

std::vector<Obligation> prove_allocation(const Program& p, const ProveOptions& options) {
  return AllocationProver(p, options).run();
}

CapacityChecker::CapacityChecker(const Program& p, const HwConfig& hw)
    : p_(p), rules_(capacity_rules(p, allocate(p, hw), hw)) {}

std::optional<std::string> CapacityChecker::violation(const ParamValues& values) const {
  Env env;
  for (const auto& [name, v] : values) env.set(name, v);
  try {
    for (const Tensor& t : p_.tensors) {
      for (const Expr& d : t.shape) {
        if (eval(d, env) < 1) {
          throw std::invalid_argument("tensor '" + t.name + "' gets dimension " + d.str() + " < 1");
        }
      }
    }
    env.set(kProgramIdParam, 0);
    // The interpreter runs 1 to kMaxGrid cores and refuses any other grid before running; here
    // a grid of 10^12 would have checked each placement 10^12 times.
    const int64_t grid = eval(p_.grid, env);
    if (grid < 1 || grid > kMaxGrid) {
      throw std::invalid_argument("grid " + p_.grid.str() + " = " + std::to_string(grid) +
                                  " is outside [1, " + std::to_string(kMaxGrid) + "]");
    }
    for (const CapacityRule& r : rules_) {
      // The peaks are evaluated for core 0 (setup_memory), placements on every core.
      for (int64_t core = 0; core < (r.core_zero ? 1 : grid); ++core) {
        env.set(kProgramIdParam, core);
        if (auto why = rule_violation(r, env)) return why;
      }
    }
  } catch (const EvalError& e) {
    // Outside a capacity bound (the grid, a loop's bounds): the interpreter fails well_formed.
    throw std::invalid_argument("arithmetic beyond int64 at these params: " + e.message);
  }
  return std::nullopt;
}

std::optional<std::string> capacity_violation(const Program& p, const HwConfig& hw,
                                              const ParamValues& values) {
  return CapacityChecker(p, hw).violation(values);
}

}  // namespace ncv::solver
