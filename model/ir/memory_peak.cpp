#include "model/ir/memory_peak.h"

#include <algorithm>

namespace ncv {
inline namespace ir {

namespace {

// Walks the scope tree the way the allocator builds it: a scope's buffers are stacked on its
// ancestors' buffers and its child loops start above them, so the peak is reached at the end of
// some scope and the buffers live there are those of that scope and its ancestors.
class PeakFinder {
 public:
  PeakFinder(const Program& p, const Allocation& a, const Env& env, Memory m)
      : p_(p), a_(a), env_(env), m_(m) {}

  MemoryPeak run(int64_t capacity) {
    std::vector<const Loop*> chain;
    visit(p_.body, 0, chain);
    MemoryPeak out;
    out.memory = m_;
    out.capacity = capacity;
    out.peak_bytes = best_end_;
    out.explicitly_placed = std::move(explicit_);
    // The peak's scopes: the buffers declared directly in each of them are live there.
    std::vector<std::pair<const std::vector<Stmt>*, std::string>> scopes{{&p_.body, ""}};
    for (const Loop* l : best_chain_) {
      scopes.emplace_back(&l->body, l->var);
      out.at_loops.push_back(l->var);
    }
    for (const auto& [body, var] : scopes) {
      for (const Stmt& s : *body) {
        const auto* d = std::get_if<DeclStmt>(&s.node);
        if (!d) continue;
        const auto& bp = a_.placements.at(d->tensor);
        if (!bp || bp->memory != m_ || bp->explicit_placement) continue;
        const Tensor& t = p_.tensors.at(d->tensor);
        out.live.push_back(LiveBuffer{t.id, t.name, eval(bp->copy_stride, env_) * t.bufs,
                                      eval(bp->bytes_per_copy, env_), t.bufs, var});
      }
    }
    largest_first(out.live);
    largest_first(out.explicitly_placed);
    return out;
  }

 private:
  // Largest first; ties in declaration order, so the output is stable.
  static void largest_first(std::vector<LiveBuffer>& v) {
    std::stable_sort(v.begin(), v.end(), [](const LiveBuffer& x, const LiveBuffer& y) {
      return x.bytes_per_partition > y.bytes_per_partition;
    });
  }

  void visit(const std::vector<Stmt>& body, ScopeId id, std::vector<const Loop*>& chain) {
    const auto& ends = m_ == Memory::SBUF ? a_.sbuf_scope_end : a_.psum_scope_end;
    // The first scope (in program order, outer before inner) reaching the maximum: an inner
    // scope that only ties its parent adds no buffers of this memory.
    const int64_t end = eval(ends.at(id), env_);
    if (end > best_end_) {
      best_end_ = end;
      best_chain_ = chain;
    }
    for (const Stmt& s : body) {
      if (const auto* d = std::get_if<DeclStmt>(&s.node)) {
        const Tensor& t = p_.tensors.at(d->tensor);
        if (t.memory == m_ && t.placement) {
          // An explicit placement's copies are packed back to back (copy stride = copy bytes).
          const int64_t copy = eval(t.bytes_per_partition(), env_);
          explicit_.push_back(LiveBuffer{t.id, t.name, copy * t.bufs, copy, t.bufs,
                                         chain.empty() ? "" : chain.back()->var});
        }
      } else if (const auto* l = std::get_if<Loop>(&s.node)) {
        chain.push_back(l);
        visit(l->body, l->scope, chain);
        chain.pop_back();
      }
    }
  }

  const Program& p_;
  const Allocation& a_;
  const Env& env_;
  Memory m_;
  int64_t best_end_ = 0;
  std::vector<const Loop*> best_chain_;
  std::vector<LiveBuffer> explicit_;
};

}  // namespace

MemoryPeaks memory_peaks(const Program& p, const HwConfig& hw,
                         const std::map<std::string, int64_t>& params) {
  const Allocation a = allocate(p, hw);
  Env env;
  for (const auto& [name, v] : params) env.set(name, v);
  env.set(kProgramIdParam, 0);
  MemoryPeaks out{PeakFinder(p, a, env, Memory::SBUF).run(hw.sbuf_usable_bytes_per_partition()),
                  PeakFinder(p, a, env, Memory::PSUM).run(hw.psum_bytes_per_partition)};
  return out;
}

}  // namespace ir
}  // namespace ncv
