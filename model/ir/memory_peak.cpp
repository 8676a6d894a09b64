#include "model/ir/memory_peak.h"

#include <algorithm>

namespace ncv {
inline namespace ir {

namespace {

// Walks the program the way the allocator sums the requirement (allocator.cpp): at each
// statement of a body, the auto-placed live regions of that body spanning it plus, at a loop,
// the largest load inside it. The first point (in program order) reaching the maximum is the
// peak, and the regions spanning it are the buffers live there.
class PeakFinder {
 public:
  PeakFinder(const Program& p, const Allocation& a, const Env& env, Memory m)
      : p_(p), a_(a), env_(env), m_(m) {
    for (const auto& rs : a_.regions) {
      for (const LiveRegion& r : rs) {
        const Tensor& t = p_.tensors.at(r.tensor);
        if (t.memory == m_ && !t.placement) by_body_[r.body].push_back(&r);
      }
    }
  }

  MemoryPeak run(int64_t capacity) {
    std::vector<const Loop*> chain;
    Point best = visit(p_.body, chain);
    collect_explicit(p_.body, chain);
    MemoryPeak out;
    out.memory = m_;
    out.capacity = capacity;
    out.peak_bytes = best.load;
    for (const Loop* l : best.chain) out.at_loops.push_back(l->var);
    out.live = std::move(best.live);
    out.explicitly_placed = std::move(explicit_);
    largest_first(out.live);
    largest_first(out.explicitly_placed);
    return out;
  }

 private:
  struct Point {
    int64_t load = 0;
    std::vector<LiveBuffer> live;
    std::vector<const Loop*> chain;
  };

  // Largest first; ties in declaration order, so the output is stable.
  static void largest_first(std::vector<LiveBuffer>& v) {
    std::stable_sort(v.begin(), v.end(), [](const LiveBuffer& x, const LiveBuffer& y) {
      return x.bytes_per_partition > y.bytes_per_partition;
    });
  }

  Point visit(const std::vector<Stmt>& body, std::vector<const Loop*>& chain) {
    std::vector<const LiveRegion*> here;
    if (auto it = by_body_.find(&body); it != by_body_.end()) here = it->second;
    Point best;
    best.chain = chain;
    for (size_t k = 0; k < body.size(); ++k) {
      const auto* l = std::get_if<Loop>(&body[k].node);
      const bool starts =
          std::any_of(here.begin(), here.end(), [&](const LiveRegion* r) { return r->first == k; });
      if (!l && !starts) continue;
      Point p;
      p.chain = chain;
      if (l) {
        chain.push_back(l);
        p = visit(l->body, chain);
        chain.pop_back();
      }
      for (const LiveRegion* r : here) {
        if (r->first > k || k > r->last) continue;
        const Tensor& t = p_.tensors.at(r->tensor);
        const int64_t bytes = eval(r->bytes, env_);
        p.load += bytes;
        p.live.push_back(LiveBuffer{t.id, t.name, bytes, eval(r->bytes_per_copy, env_), t.bufs,
                                    chain.empty() ? "" : chain.back()->var});
      }
      if (p.load > best.load) best = std::move(p);
    }
    return best;
  }

  void collect_explicit(const std::vector<Stmt>& body, std::vector<const Loop*>& chain) {
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
        collect_explicit(l->body, chain);
        chain.pop_back();
      }
    }
  }

  const Program& p_;
  const Allocation& a_;
  const Env& env_;
  Memory m_;
  std::map<const std::vector<Stmt>*, std::vector<const LiveRegion*>> by_body_;
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
