#include "model/ir/allocator.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace ncv {
inline namespace ir {

namespace {

class AllocatorImpl {
 public:
  AllocatorImpl(const Program& p, const HwConfig& hw) : p_(p), hw_(hw) {
    out_.placements.resize(p.tensors.size());
    out_.sbuf_scope_base.resize(p.num_scopes);
    out_.sbuf_scope_end.resize(p.num_scopes);
    out_.psum_scope_base.resize(p.num_scopes);
    out_.psum_scope_end.resize(p.num_scopes);
  }

  Allocation run() {
    auto [s, ps] = scope(p_.body, 0, Expr(0), Expr(0));
    out_.sbuf_layout_bytes = s;
    out_.psum_layout_bytes = ps;
    out_.regions = live_regions(p_, hw_);
    for (const auto& rs : out_.regions) {
      for (const LiveRegion& r : rs) {
        if (!p_.tensors.at(r.tensor).placement) by_body_[r.body].push_back(&r);
      }
    }
    out_.sbuf_peak_terms = requirement(p_.body, Memory::SBUF);
    out_.psum_peak_terms = requirement(p_.body, Memory::PSUM);
    out_.sbuf_peak_bytes = max_of(out_.sbuf_peak_terms);
    out_.psum_peak_bytes = max_of(out_.psum_peak_terms);
    return std::move(out_);
  }

 private:
  std::pair<Expr, Expr> scope(const std::vector<Stmt>& body, ScopeId id, Expr sbuf_top,
                              Expr psum_top) {
    if (id < out_.sbuf_scope_base.size()) {
      out_.sbuf_scope_base[id] = sbuf_top;
      out_.psum_scope_base[id] = psum_top;
    }
    // Every buffer of the scope is live for the whole scope (allocated at scope entry), so a
    // scope's own buffers are stacked first and its child scopes start above them.
    for (const Stmt& s : body) {
      auto* d = std::get_if<DeclStmt>(&s.node);
      if (!d) continue;
      const Tensor& t = p_.tensors.at(d->tensor);
      BufferPlacement bp;
      bp.tensor = t.id;
      bp.memory = t.memory;
      bp.bytes_per_copy = t.bytes_per_partition();
      if (t.placement) {
        bp.explicit_placement = true;
        bp.partition = t.placement->partition;
        bp.byte_offset = t.placement->byte_offset;
        bp.copy_stride = bp.bytes_per_copy;
      } else if (t.memory == Memory::SBUF) {
        bp.partition = Expr(0);
        bp.byte_offset = align_up(sbuf_top, kSbufAlignBytes);
        bp.copy_stride = align_up(bp.bytes_per_copy, kSbufAlignBytes);
        sbuf_top = bp.byte_offset + bp.copy_stride * Expr(t.bufs);
      } else {
        // PSUM: each copy starts on a bank boundary and takes whole banks (ALLOC: "one tile
        // per bank"), so an auto-placed tile of at most one bank never crosses a bank.
        bp.partition = Expr(0);
        bp.byte_offset = align_up(psum_top, hw_.psum_bank_bytes);
        bp.copy_stride = align_up(bp.bytes_per_copy, hw_.psum_bank_bytes);
        psum_top = bp.byte_offset + bp.copy_stride * Expr(t.bufs);
      }
      out_.placements.at(t.id) = bp;
    }
    if (id < out_.sbuf_scope_end.size()) {
      out_.sbuf_scope_end[id] = sbuf_top;
      out_.psum_scope_end[id] = psum_top;
    }
    Expr sbuf_peak = sbuf_top, psum_peak = psum_top;
    for (const Stmt& s : body) {
      auto* l = std::get_if<Loop>(&s.node);
      if (!l) continue;
      auto [cs, cp] = scope(l->body, l->scope, sbuf_top, psum_top);
      sbuf_peak = Expr::max(sbuf_peak, cs);
      psum_peak = Expr::max(psum_peak, cp);
    }
    return {sbuf_peak, psum_peak};
  }

  // The largest load of one iteration of `body`: at each statement, the auto-placed regions of
  // this body spanning it, plus the requirement of a loop's body there (the regions of the
  // enclosing bodies are live around the whole statement and are added by the caller). The load
  // only rises where a region starts or at a loop, so only those statements are candidates.
  static Expr max_of(const std::vector<Expr>& terms) {
    std::optional<Expr> out;
    for (const Expr& t : terms) out = out ? Expr::max(*out, t) : t;
    return out ? *out : Expr(0);
  }

  std::vector<Expr> requirement(const std::vector<Stmt>& body, Memory m) {
    std::vector<const LiveRegion*> here;
    if (auto it = by_body_.find(&body); it != by_body_.end()) {
      for (const LiveRegion* r : it->second) {
        if (p_.tensors.at(r->tensor).memory == m) here.push_back(r);
      }
    }
    // Candidate points: the regions spanning each, and the loop's requirement there. A point
    // without a loop whose regions are a subset of another point's is never larger: it is left
    // out, and so are repeats, which keeps the Expr small for the solver.
    struct Point {
      std::vector<const LiveRegion*> live;  // in `here` order
      std::vector<Expr> inner;              // the loop's terms (none: no loop, or nothing in it)
    };
    std::vector<Point> points;
    for (size_t k = 0; k < body.size(); ++k) {
      const auto* l = std::get_if<Loop>(&body[k].node);
      const bool starts =
          std::any_of(here.begin(), here.end(), [&](const LiveRegion* r) { return r->first == k; });
      if (!l && !starts) continue;
      Point pt;
      if (l) pt.inner = requirement(l->body, m);
      for (const LiveRegion* r : here) {
        if (r->first <= k && k <= r->last) pt.live.push_back(r);
      }
      points.push_back(std::move(pt));
    }
    // `here` order (declaration, then span), so the Expr is the same on every run.
    auto before = [](const LiveRegion* x, const LiveRegion* y) {
      return std::tie(x->tensor, x->scope, x->first) < std::tie(y->tensor, y->scope, y->first);
    };
    auto subset = [&](const Point& a, const Point& b) {
      return std::includes(b.live.begin(), b.live.end(), a.live.begin(), a.live.end(), before);
    };
    for (Point& pt : points) std::sort(pt.live.begin(), pt.live.end(), before);
    std::vector<Expr> terms;
    for (size_t i = 0; i < points.size(); ++i) {
      const Point& pt = points[i];
      bool dominated = false;
      for (size_t j = 0; j < points.size() && !dominated; ++j) {
        if (i == j || !subset(pt, points[j])) continue;
        const bool same = pt.live == points[j].live && pt.inner == points[j].inner;
        // a point without a loop below any superset; of two equal points, the first is kept
        dominated = (pt.inner.empty() && !same) || (same && j < i);
      }
      if (dominated) continue;
      Expr live(0);
      for (const LiveRegion* r : pt.live) live = live + r->bytes;
      if (pt.inner.empty()) terms.push_back(live);
      for (const Expr& t : pt.inner) terms.push_back(t + live);
    }
    std::vector<Expr> unique;
    for (const Expr& t : terms) {
      if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
    }
    return unique;
  }

  const Program& p_;
  const HwConfig& hw_;
  Allocation out_;
  std::map<const std::vector<Stmt>*, std::vector<const LiveRegion*>> by_body_;
};

}  // namespace

Allocation allocate(const Program& p, const HwConfig& hw) {
  return AllocatorImpl(p, hw).run();
}

}  // namespace ir
}  // namespace ncv
