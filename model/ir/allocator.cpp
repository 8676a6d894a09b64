#include "model/ir/allocator.h"

#include <numeric>

namespace ncv {
inline namespace ir {

namespace {

// A positive integer that provably divides every value of e (1 when nothing better is known).
int64_t known_divisor(const Expr& e) {
  constexpr int64_t kCap = int64_t{1} << 40;
  switch (e.kind()) {
    case ExprKind::Const: {
      int64_t v = e.const_value();
      return v == 0 ? kCap : std::min(kCap, v < 0 ? -v : v);
    }
    case ExprKind::Mul: {
      int64_t a = known_divisor(e.lhs()), b = known_divisor(e.rhs());
      return (a > kCap / std::max<int64_t>(b, 1)) ? kCap : a * b;
    }
    case ExprKind::Add:
    case ExprKind::Min:
    case ExprKind::Max:
      return std::gcd(known_divisor(e.lhs()), known_divisor(e.rhs()));
    default:
      return 1;
  }
}

Expr align_up(const Expr& x, int64_t a) {
  if (known_divisor(x) % a == 0) return x;
  return Expr::floordiv(x + Expr(a - 1), a) * Expr(a);
}

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
    out_.sbuf_peak_bytes = s;
    out_.psum_peak_bytes = ps;
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

  const Program& p_;
  const HwConfig& hw_;
  Allocation out_;
};

}  // namespace

Allocation allocate(const Program& p, const HwConfig& hw) {
  return AllocatorImpl(p, hw).run();
}

}  // namespace ir
}  // namespace ncv
