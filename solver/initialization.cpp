#include "solver/initialization.h"

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "model/ir/printer.h"
#include "solver/affine_in.h"
#include "solver/program_solver.h"

namespace ncv::solver {

namespace {

// One instruction's write of an on-chip tensor, with the loops around it (outermost first).
struct WriteSite {
  const InstrStmt* stmt = nullptr;
  std::vector<const Loop*> loops;
  const Access* access = nullptr;
};

// Index e lies in one dim of an access: e = start + k * step for some 0 <= k < size.
z3::expr in_dim(z3::context& ctx, const z3::expr& e, const z3::expr& start, const z3::expr& size,
                int64_t step) {
  if (step == 0) return size >= 1 && e == start;
  const z3::expr magnitude = step > 0 ? ctx.int_val(step) : -ctx.int_val(step);
  const z3::expr offset = step > 0 ? e - start : start - e;
  z3::expr r = size >= 1 && offset >= 0 && offset <= (size - 1) * magnitude;
  if (step != 1 && step != -1) r = r && z3::mod(offset, magnitude) == 0;
  return r;
}

// A one-element dim whose start is (v + rest) mod m with rest free of v: the slot of a rotating
// buffer indexed by the loop variable.
struct RotatingSlot {
  Expr rest;
  int64_t modulus = 0;
};
std::optional<RotatingSlot> rotating_slot(const AccessDim& ad, SymbolId v) {
  if (!(ad.size == Expr(1)) || ad.start.kind() != ExprKind::Mod) return std::nullopt;
  const std::optional<AffineIn> f = affine_in(ad.start.lhs(), v);
  if (!f || f->coeff != 1) return std::nullopt;
  return RotatingSlot{f->rest, ad.start.divisor()};
}

size_t common_prefix(const std::vector<const Loop*>& a, const std::vector<const Loop*>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// How many of `loops` (the loops around an access of t) hold one lifetime of t fixed: the loop
// that declares t and the loops around it. A buffer of the kernel body lives for the whole run.
size_t lifetime_depth(const std::vector<const Loop*>& loops, const Tensor& t) {
  if (t.scope == 0) return 0;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (loops[i]->scope == t.scope) return i + 1;
  }
  throw std::logic_error("buffer '" + t.name + "' is accessed outside the loop that declares it");
}

// Whether one write writes the read element before the read, in one way program order allows.
struct Cover {
  z3::expr covers;
  z3::expr exact;  // no other iteration of the write's loops could write the element
};

class InitializationProver {
 public:
  InitializationProver(const Program& p, const ProveOptions& o)
      : p_(p), z_(p, o), cutoff_(ObligationClass::initialization, "instructions", o) {
    for (const Param& prm : p.params) param_symbols_.insert(intern_symbol(prm.name));
  }

  std::vector<Obligation> run() {
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
        for (const Access* a : written_accesses(i->ins)) {
          // quantize_mx writes 4 rows per quadrant of its scale access, not all of it: counting
          // it as a write of the whole access could prove reads of rows it never writes.
          if (const auto* q = std::get_if<QuantizeMx>(&i->ins); q && a == &q->dst_scale) continue;
          if (p_.tensor(a->tensor).on_chip()) writes_[a->tensor].push_back({i, loops, a});
        }
      }
    });
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      const auto* i = std::get_if<InstrStmt>(&s.node);
      if (i && !cutoff_.skip()) {
        text_ = print_instruction(p_, i->ins);
        for (const Access* a : read_accesses(i->ins)) {
          // nc_matmul_mx reads 4 rows per quadrant of each scale access (mx_scale_row): not an
          // access the obligations can state; the interpreter checks those rows (prove.h).
          if (const auto* m = std::get_if<MatmulMx>(&i->ins);
              m && (a == &m->stationary_scale || a == &m->moving_scale)) {
            continue;
          }
          read(loops, *i, *a, "read");
        }
        // A written access reads only its indirect offsets.
        for (const Access* a : written_accesses(i->ins)) {
          if (a->indirect) read(loops, *i, *a->indirect->offsets, "indirect offsets of write");
        }
      }
    });
    cutoff_.report(out_);
    return std::move(out_);
  }

 private:
  void read(const std::vector<const Loop*>& loops, const InstrStmt& s, const Access& a,
            const std::string& role) {
    if (a.indirect) read(loops, s, *a.indirect->offsets, "indirect offsets of " + role);
    const Tensor& t = p_.tensor(a.tensor);
    if (!t.on_chip()) return;
    Obligation o;
    o.cls = ObligationClass::initialization;
    o.rule = "read after write";
    o.instruction = s.id;
    o.instruction_text = text_;
    o.role = role;
    o.tensor = t.name;
    o.subject = role + " " + print_access(p_, a) + " (tensor '" + t.name + "')";
    if (a.core) {
      o.verdict = Verdict::unknown;
      o.unknown_reason =
          "it reads the buffer of another core, whose writes by that core are not modelled";
    } else if (a.indirect) {
      o.verdict = Verdict::unknown;
      o.unknown_reason = "the rows it reads are chosen by offsets read at run time";
    } else {
      decide(o, loops, s, a);
    }
    out_.push_back(std::move(o));
  }

  void decide(Obligation& o, const std::vector<const Loop*>& loops, const InstrStmt& s,
              const Access& a) {
    // Out of time: skip building the disjunction over every earlier write, which grows with the
    // program (its cost over all reads is quadratic in a straight-line program's length).
    if (z_.out_of_budget()) {
      mark_out_of_budget(o);
      return;
    }
    z3::context& ctx = z_.ctx();
    const Tensor& t = p_.tensor(a.tensor);
    z_.enter_loops(loops);
    // The element read: an index per dim, inside the access and the tensor (bounds are the
    // bounds class's obligation, and the interpreter raises out_of_bounds first).
    std::vector<z3::expr> element;
    z3::expr assumed = ctx.bool_val(true);
    for (size_t d = 0; d < a.rank(); ++d) {
      element.push_back(z_.extra(t.name + " index " + std::to_string(d)));
      const z3::expr shape = z_.term(t.shape.at(d));
      assumed = assumed && element[d] >= 0 && element[d] < shape &&
                in_dim(ctx, element[d], z_.term(a.dims[d].start), z_.term(a.dims[d].size),
                       a.dims[d].step);
    }
    z3::expr holds = ctx.bool_val(false), exact = ctx.bool_val(true);
    std::vector<std::string> unmodelled, considered;
    const size_t fixed = lifetime_depth(loops, t);
    for (const WriteSite& w : writes_[a.tensor]) {
      const size_t common = common_prefix(loops, w.loops);
      if (common < fixed) continue;  // another lifetime of t (never: both are in its scope)
      auto consider = [&](size_t k, bool earlier_iteration) {
        std::string why;
        if (auto c = cover(w, loops, k, earlier_iteration, element, why)) {
          holds = holds || c->covers;
          exact = exact && c->exact;
        } else {
          unmodelled.push_back("instruction " + std::to_string(w.stmt->id) + " (" + why + ")");
        }
      };
      // The same iterations of every loop around both, the write first in program order ...
      if (w.stmt->id < s.id) consider(common, false);
      // ... or an earlier iteration of a loop inside the lifetime around both.
      for (size_t k = fixed; k < common; ++k) consider(k, true);
      considered.push_back(std::to_string(w.stmt->id));
    }

    auto explain = [&, element](const z3::model& m) {
      std::string at;
      for (const z3::expr& e : element)
        at += (at.empty() ? "" : ", ") + std::to_string(z_.value(m, e));
      std::string writes;
      for (const std::string& c : considered) writes += (writes.empty() ? "" : ", ") + c;
      return "element [" + at + "] of '" + t.name + "' is read before anything writes it in " +
             "this lifetime of the buffer" +
             (writes.empty() ? " (no instruction writes it)"
                             : " (its writes: instruction " + writes + ")");
    };
    std::string why;
    const z3::check_result r = z_.satisfiable(assumed && !holds, why);
    if (r == z3::unsat) {
      o.verdict = Verdict::proved;
    } else if (r == z3::unknown && z_.unknown_for_budget()) {
      mark_out_of_budget(o);
    } else if (r == z3::unknown) {
      o.verdict = Verdict::unknown;
      o.unknown_reason = why;
    } else if (!unmodelled.empty()) {
      o.verdict = Verdict::unknown;
      o.unknown_reason =
          "some element is written by none of the writes modelled, and these are not: ";
      for (size_t i = 0; i < unmodelled.size(); ++i) {
        o.unknown_reason += (i ? "; " : "") + unmodelled[i];
      }
    } else {
      z_.settle(
          o, assumed && exact, holds, explain,
          {.kind = CheckKind::uninitialized_read, .data_dependent = false, .needs_values = true});
      if (o.verdict == Verdict::proved) {
        o.verdict = Verdict::unknown;
        o.unknown_reason =
            "an element is uncovered only where a write's tiles overlap (size * step above the "
            "coefficient of its loop variable), where another iteration of that write may cover "
            "it: not modelled";
      }
    }
    z_.leave_loops();
  }

  // The core that wrote the reading core's buffer through `w`, a write into another core's
  // buffer (nki.isa.sendrecv: Access::core), and when that write is ordered like one of the
  // reader's own. The interpreter makes such a transfer a rendezvous (Interpreter::walk in
  // model/interp/interpreter.cpp): a core executes it only while every core it names has reached
  // the same statement, and then both execute it in the same step. When the reader's execution of
  // the statement names the writer back (a pairwise exchange: `paired`) and no loop around it
  // depends on the program id, both cores run the statement at the same sequence of iterations and
  // the n-th execution of one meets the n-th of the other: the writer's write at iteration I lands
  // while the reader executes the statement at I, before anything the reader runs after that. So
  // the write counts in the reader's program order exactly as one of its own, with the writer's
  // program id in its indices. The writer is solved from the core it names, `c = ±program_id +
  // rest` (rest over params), as `program_id = ±(c - rest)`: the only core naming c there.
  struct PeerWriter {
    z3::expr writer;   // the writer's program id
    z3::expr on_grid;  // it is a core of the grid
    z3::expr paired;   // the reader's execution names the writer
  };
  std::optional<PeerWriter> peer_writer(const WriteSite& w, std::string& why) {
    const SymbolId pid = intern_symbol(kProgramIdParam);
    for (const Loop* l : w.loops) {
      if (l->start.mentions(pid) || l->stop.mentions(pid)) {
        why = "it writes another core's buffer inside loop '" + l->var +
              "', whose iterations depend on the program id, so the rendezvous need not pair the "
              "same iterations of the two cores";
        return std::nullopt;
      }
    }
    const Expr& core = *w.access->core;
    for (SymbolId s : core.symbols()) {
      if (s != pid && !param_symbols_.contains(s)) {
        why = "the core it writes depends on loop variable '" + symbol_name(s) + "'";
        return std::nullopt;
      }
    }
    const std::optional<AffineIn> f = affine_in(core, pid);
    if (!f || (f->coeff != 1 && f->coeff != -1)) {
      why =
          "the core it writes is not program_id or -program_id plus params, so the writing "
          "core is not solved";
      return std::nullopt;
    }
    const z3::expr reader = z_.symbols().at(pid);
    // coeff is +1 or -1, its own inverse.
    const z3::expr writer = (reader - z_.term(f->rest)) * z_.ctx().int_val(f->coeff);
    return PeerWriter{writer, writer >= 0 && writer < z_.term(p_.grid), z_.term(core) == writer};
  }

  // The write `w` writes element `element` of the read at the loops `read_loops` before it: its
  // loops [0, k) at the read's iterations, and (earlier_iteration) loop k at an earlier one. The
  // write's other loop variables are solved from its indices. Nullopt, with the reason, when a
  // variable cannot be solved that way.
  std::optional<Cover> cover(const WriteSite& w, const std::vector<const Loop*>& read_loops,
                             size_t k, bool earlier_iteration, const std::vector<z3::expr>& element,
                             std::string& why) {
    z3::context& ctx = z_.ctx();
    const Access& wa = *w.access;
    if (wa.indirect) {
      why = "the rows it writes are chosen by offsets read at run time";
      return std::nullopt;
    }
    if (const auto* dma = std::get_if<DmaCopy>(&w.stmt->ins); dma && dma->oob_skip) {
      why = "it skips the rows whose offsets, read at run time, leave the tensor (oob_skip)";
      return std::nullopt;
    }
    SymbolTerms sym = z_.symbols();
    for (size_t i = k; i < read_loops.size(); ++i) sym.erase(intern_symbol(read_loops[i]->var));
    z3::expr exact = ctx.bool_val(true);
    std::optional<PeerWriter> peer;
    if (wa.core) {
      peer = peer_writer(w, why);
      if (!peer) return std::nullopt;
      // The write's indices are the writing core's: its program id is the writer's.
      sym.insert_or_assign(intern_symbol(kProgramIdParam), peer->writer);
      exact = !peer->on_grid || peer->paired;
    }
    const auto bound = [&](const Expr& e) {
      for (SymbolId s : e.symbols()) {
        if (!sym.contains(s)) return false;
      }
      return true;
    };
    const auto bound_but = [&](const Expr& e, SymbolId v) {
      for (SymbolId s : e.symbols()) {
        if (s != v && !sym.contains(s)) return false;
      }
      return true;
    };
    const std::vector<const Loop*> free(w.loops.begin() + static_cast<std::ptrdiff_t>(k),
                                        w.loops.end());
    std::vector<bool> solved(free.size(), false);
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t i = 0; i < free.size(); ++i) {
        if (solved[i]) continue;
        const SymbolId v = intern_symbol(free[i]->var);
        bool mentioned = false;
        for (const AccessDim& ad : wa.dims)
          mentioned = mentioned || ad.start.mentions(v) || ad.size.mentions(v);
        std::optional<z3::expr> value;
        if (!mentioned) {
          // Every iteration writes the same elements: the first one is valid whenever any is
          // (also below the read's iteration).
          if (bound(free[i]->start)) value = to_z3(ctx, free[i]->start, sym);
        }
        for (size_t d = 0; d < wa.rank() && mentioned && !value; ++d) {
          const AccessDim& ad = wa.dims[d];
          if (auto slot = rotating_slot(ad, v); slot && bound(slot->rest) && bound(free[i]->stop)) {
            // A one-element rotating slot (v + rest) mod m, as a software-pipelined stage writes
            // the double buffer of the tile ahead: the last iteration writing the element before
            // the read (before the read's own iteration when this loop encloses both, else
            // before the loop ends). Every other iteration writing it is earlier still, so when
            // this one is out of range, all are (exact), for a loop of step 1.
            const z3::expr last = i == 0 && earlier_iteration ? z_.symbols().at(v) - 1
                                                              : to_z3(ctx, free[i]->stop, sym) - 1;
            value = last - z3::mod(last + to_z3(ctx, slot->rest, sym) - element[d],
                                   ctx.int_val(slot->modulus));
            if (free[i]->step != 1) exact = ctx.bool_val(false);
            continue;
          }
          const std::optional<AffineIn> f = affine_in(ad.start, v);
          if (!f || f->coeff <= 0 || !bound(f->rest) || !bound_but(ad.size, v)) continue;
          // The last iteration whose tile starts at or before the element: the only one that can
          // write it when tiles do not overlap ((size - 1) * |step| < coeff). A size that varies
          // with v (a partial last tile) is not compared: such a counterexample is unknown.
          const z3::expr coeff = ctx.int_val(f->coeff);
          value = z3::expr(ctx, Z3_mk_div(ctx, element[d] - to_z3(ctx, f->rest, sym), coeff));
          if (ad.size.mentions(v)) {
            exact = ctx.bool_val(false);
          } else {
            const z3::expr magnitude = ad.step >= 0 ? ctx.int_val(ad.step) : -ctx.int_val(ad.step);
            exact = exact && (to_z3(ctx, ad.size, sym) - 1) * magnitude < coeff;
          }
        }
        if (value) {
          sym.insert_or_assign(v, *value);
          solved[i] = true;
          progress = true;
        }
      }
    }
    for (size_t i = 0; i < free.size(); ++i) {
      if (!solved[i]) {
        why = "its loop variable '" + free[i]->var +
              "' is not a constant positive multiple plus a rest of one start index it writes, "
              "nor the slot (v + rest) mod m of a one-element dim";
        return std::nullopt;
      }
    }
    z3::expr covers = peer ? peer->on_grid && peer->paired : ctx.bool_val(true);
    for (const Loop* l : free) {
      const z3::expr v = sym.at(intern_symbol(l->var));
      const z3::expr start = to_z3(ctx, l->start, sym), stop = to_z3(ctx, l->stop, sym);
      covers = covers && v >= start && v < stop;
      if (l->step != 1) covers = covers && z3::mod(v - start, ctx.int_val(l->step)) == 0;
    }
    if (earlier_iteration) {
      const SymbolId v = intern_symbol(free.front()->var);
      covers = covers && sym.at(v) < z_.symbols().at(v);
    }
    for (size_t d = 0; d < wa.rank(); ++d) {
      const AccessDim& ad = wa.dims[d];
      covers = covers && in_dim(ctx, element[d], to_z3(ctx, ad.start, sym),
                                to_z3(ctx, ad.size, sym), ad.step);
    }
    // nc_stream_shuffle leaves a partition of dst as it is where its lane's mask entry is 255
    // (exec_gather.cpp marks only the others written): it covers partition start + r only when
    // lane r % 32 copies.
    if (const auto* sh = std::get_if<StreamShuffle>(&w.stmt->ins)) {
      const AccessDim& rows = wa.dims[0];
      const z3::expr lane =
          z3::mod(element[0] - to_z3(ctx, rows.start, sym), ctx.int_val(kShuffleQuadrant));
      for (int64_t r = 0; r < kShuffleQuadrant; ++r) {
        if (sh->shuffle_mask[static_cast<size_t>(r)] != kShuffleKeep) continue;
        if (rows.step != 1) {
          why = "a stream shuffle with 255 entries into partitions at a step of " +
                std::to_string(rows.step);
          return std::nullopt;
        }
        covers = covers && lane != ctx.int_val(r);
      }
    }
    return Cover{covers, exact};
  }

  const Program& p_;
  ProgramSolver z_;
  std::set<SymbolId> param_symbols_;
  std::map<TensorId, std::vector<WriteSite>> writes_;
  std::string text_;
  BudgetCutoff cutoff_;
  std::vector<Obligation> out_;
};

}  // namespace

std::vector<Obligation> prove_initialization(const Program& p, const ProveOptions& options) {
  return InitializationProver(p, options).run();
}

}  // namespace ncv::solver
