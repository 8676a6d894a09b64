// Walking a Program: each core steps through its loops and scopes to its next instruction
// instance (Interpreter::walk runs the cores in lockstep), with the step budget, buffer
// lifetimes and placements checked on scope entry, and affine-loop iteration serials for the
// carried-dependency check.
#include <algorithm>

#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

// splitmix64: a well-mixed 64-bit hash of the seed and the step, for the per-step permutation.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void schedule_order(uint64_t seed, uint64_t step, int grid, std::vector<int>& order) {
  order.resize(static_cast<size_t>(grid));
  for (int c = 0; c < grid; ++c) order[static_cast<size_t>(c)] = c;
  if (seed == 0 || grid < 2) return;
  if (seed == 1) {
    std::reverse(order.begin(), order.end());
    return;
  }
  // Fisher-Yates driven by a hash chain seeded from (seed, step).
  uint64_t h = mix(seed ^ mix(step));
  for (int i = grid - 1; i > 0; --i) {
    h = mix(h);
    std::swap(order[static_cast<size_t>(i)], order[h % static_cast<uint64_t>(i + 1)]);
  }
}

void Interpreter::count_step() {
  if (++steps_ > opts_.max_steps) {
    throw InputError("kernel '" + p_.name + "' takes more than " + std::to_string(opts_.max_steps) +
                     " loop iterations and instruction instances with these params: over the "
                     "step budget (--max-steps N raises it)");
  }
}

const InstrStmt* Interpreter::advance(int core) {
  auto& frames = frames_[core];
  CoreState& cs = m_.cores[core];
  current_core_ = core;
  current_ = nullptr;
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.next < f.body->size()) {
      const Stmt& s = (*f.body)[f.next++];
      if (auto* i = std::get_if<InstrStmt>(&s.node)) {
        count_step();
        return i;
      }
      if (auto* l = std::get_if<Loop>(&s.node)) {
        int64_t start = eval(l->start, cs.env), stop = eval(l->stop, cs.env);
        // Python would run range(start, stop) with stop < start zero times; a negative trip
        // count means the kernel's tile arithmetic went wrong at these params, so it is a
        // failure rather than a silently skipped loop (prove has the same obligation).
        if (stop < start) {
          fail(CheckKind::well_formed, "loop '" + l->var + "' has a negative trip count: range(" +
                                           std::to_string(start) + ", " + std::to_string(stop) +
                                           ") from range(" + l->start.str() + ", " + l->stop.str() +
                                           ")");
        }
        if (start == stop) continue;
        count_step();
        SymbolId v = intern_symbol(l->var);
        cs.env.set(v, start);
        cs.scope_iteration.at(l->scope) = 0;
        Frame nf{&l->body, 0, l, start, stop, 0, v};
        nf.serial = nf.outer_serial = f.serial;
        if (l->kind == LoopKind::affine && shadows_) {
          nf.instance = shadows_->new_loop_instance();
          nf.serial = shadows_->new_iteration(nf.instance, 0, nf.outer_serial, l);
        }
        frames.push_back(nf);  // invalidates f
        enter_scope(core, l->scope);
      }
      continue;
    }
    // End of a body.
    exit_scope(core, *f.body);
    if (!f.loop) {
      frames.pop_back();
      continue;
    }
    int64_t nv;
    if (__builtin_add_overflow(f.value, f.loop->step, &nv) || nv >= f.stop) {
      cs.env.unset(f.var);
      frames.pop_back();
      continue;
    }
    count_step();
    f.value = nv;
    f.iteration++;
    f.next = 0;
    if (f.instance != 0) {
      f.serial = shadows_->new_iteration(f.instance, f.iteration, f.outer_serial, f.loop);
    }
    cs.env.set(f.var, nv);
    cs.scope_iteration.at(f.loop->scope) = f.iteration;
    enter_scope(core, f.loop->scope);
  }
  return nullptr;
}

// The buffers of the scope come alive on this core: each placement lies inside the memory
// (capacity), and each gets a new lifetime.
void Interpreter::enter_scope(int core, ScopeId scope) {
  CoreState& cs = m_.cores[core];
  cs.load_at_iteration.at(scope) = cs.load;
  for (TensorId id : scope_buffers_.at(scope)) {
    const Tensor& t = p_.tensor(id);
    const BufferPlacement& bp = *m_.alloc.placements.at(id);
    int64_t part = eval(bp.partition, cs.env);
    int64_t off = m_.copy_offset(core, bp, t);
    int64_t bytes = eval(bp.bytes_per_copy, cs.env);
    int64_t cap = t.memory == Memory::SBUF ? hw_.sbuf_usable_bytes_per_partition()
                                           : hw_.psum_bytes_per_partition;
    int64_t rows = m_.shapes[id][0];
    // An auto-placed buffer's offset is the model's layout, not an address (allocator.h): the
    // requirement checked in setup_memory is its capacity rule. Explicit placements are checked
    // here, as written.
    const bool placed = bp.explicit_placement;
    if (part < 0 || part > hw_.partitions - rows ||
        (placed && (off < 0 || bytes > cap || off > cap - bytes))) {
      fail(CheckKind::capacity,
           std::string(memory_name(t.memory)) + " buffer '" + t.name + "' placed at partition " +
               std::to_string(part) + ", " + std::to_string(bytes) + " bytes from byte " +
               std::to_string(off) + " of each partition, outside " + hw_.name + "'s " +
               std::to_string(hw_.partitions) + " x " + std::to_string(cap) + " bytes");
    }
    m_.set_live(core, id, true);
    if (shadows_) shadows_->begin_lifetime(core, id);
  }
}

void Interpreter::exit_scope(int core, const std::vector<Stmt>& body) {
  for (const Stmt& s : body) {
    if (auto* d = std::get_if<DeclStmt>(&s.node)) {
      m_.set_live(core, d->tensor, false);
      if (shadows_) shadows_->end_lifetime(core, d->tensor);
    }
  }
}

}  // namespace interp
}  // namespace ncv
