#include "model/ir/allocator.h"

#include <algorithm>
#include <map>

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
    out_.sbuf_peak_bytes = requirement(p_.body, Memory::SBUF);
    out_.psum_peak_bytes = requirement(p_.body, Memory::PSUM);
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
  Expr requirement(const std::vector<Stmt>& body, Memory m) {
    std::vector<const LiveRegion*> here;
    if (auto it = by_body_.find(&body); it != by_body_.end()) {
      for (const LiveRegion* r : it->second) {
        if (p_.tensors.at(r->tensor).memory == m) here.push_back(r);
      }
    }
    std::optional<Expr> peak;
    for (size_t k = 0; k < body.size(); ++k) {
      const auto* l = std::get_if<Loop>(&body[k].node);
      const bool starts =
          std::any_of(here.begin(), here.end(), [&](const LiveRegion* r) { return r->first == k; });
      if (!l && !starts) continue;
      Expr load = l ? requirement(l->body, m) : Expr(0);
      for (const LiveRegion* r : here) {
        if (r->first <= k && k <= r->last) load = load + r->bytes;
      }
      peak = peak ? Expr::max(*peak, load) : load;
    }
    return peak ? *peak : Expr(0);
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
