#include "model/ir/liveness.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <unordered_map>

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

// Accesses made up by loop_writes (unions of a loop's writes), kept alive while the rules run.
thread_local std::vector<std::shared_ptr<Access>> summaries_;

// The accesses of one instruction, each marked read or written.
template <class F>
void each_access(const Instruction& ins, F&& f) {
  for (const Access* a : read_accesses(ins)) {
    f(*a, false);
    if (a->indirect) f(*a->indirect->offsets, false);
  }
  for (const Access* a : written_accesses(ins)) {
    f(*a, true);
    if (a->indirect) f(*a->indirect->offsets, false);
  }
}

// The tensors statement s accesses (in nested loops too), appended to out with repeats.
void touched_tensors(const Stmt& s, std::vector<TensorId>& out) {
  if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
    each_access(i->ins, [&](const Access& a, bool) { out.push_back(a.tensor); });
  } else if (const auto* l = std::get_if<Loop>(&s.node)) {
    for (const Stmt& c : l->body) touched_tensors(c, out);
  }
}

// The accesses an instruction writes in full. nc_stream_shuffle with a 255 entry leaves those
// partitions of dst as they are: it writes none of dst in full, so a read after it may still need
// the values of an earlier write.
std::vector<const Access*> full_writes(const Instruction& ins) {
  if (const auto* sh = std::get_if<StreamShuffle>(&ins)) {
    const auto& m = sh->shuffle_mask;
    if (std::find(m.begin(), m.end(), kShuffleKeep) != m.end()) return {};
  }
  return written_accesses(ins);
}

// Every access of t under `body`, in program order.
void accesses_of(const std::vector<Stmt>& body, TensorId t, std::vector<const Access*>& out) {
  for (const Stmt& s : body) {
    if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
      for (const Access* a : read_accesses(i->ins)) {
        if (a->tensor == t) out.push_back(a);
      }
      for (const Access* a : written_accesses(i->ins)) {
        if (a->tensor == t) out.push_back(a);
      }
    } else if (const auto* l = std::get_if<Loop>(&s.node)) {
      accesses_of(l->body, t, out);
    }
  }
}

bool whole(const Access& a, const Tensor& t) {
  if (a.indirect || a.core || a.dims.size() != t.shape.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const AccessDim& ad = a.dims[d];
    if (!(ad.start == Expr(0)) || !(ad.size == t.shape[d]) || ad.step != 1) return false;
  }
  return true;
}

// `start` as var * c (+ rest not mentioning var): c and rest (nullopt when absent).
std::optional<std::pair<int64_t, std::optional<Expr>>> linear_in(const Expr& start, SymbolId var) {
  auto term = [&](const Expr& e) -> std::optional<int64_t> {
    if (e.kind() != ExprKind::Mul) return std::nullopt;
    if (e.lhs().kind() == ExprKind::Var && e.lhs().symbol() == var && e.rhs().is_const()) {
      return e.rhs().const_value();
    }
    if (e.rhs().kind() == ExprKind::Var && e.rhs().symbol() == var && e.lhs().is_const()) {
      return e.lhs().const_value();
    }
    return std::nullopt;
  };
  if (auto c = term(start)) return std::make_pair(*c, std::optional<Expr>{});
  if (start.kind() == ExprKind::Add) {
    if (auto c = term(start.lhs()); c && !start.rhs().mentions(var)) {
      return std::make_pair(*c, std::optional<Expr>{start.rhs()});
    }
    if (auto c = term(start.rhs()); c && !start.lhs().mentions(var)) {
      return std::make_pair(*c, std::optional<Expr>{start.lhs()});
    }
  }
  return std::nullopt;
}

// What a loop of constant trip count >= 1 leaves written once it ends: each write of t at the
// top level of its body that does not depend on the loop variable, and each that tiles one dim
// with the variable (start var * size + rest, step 1): the union over the iterations, one
// access. Other writes are forgotten (a conservative rule only loses reuse).
void loop_writes(const Loop& l, const Tensor& t, std::vector<const Access*>& written) {
  if (!l.start.is_const() || !l.stop.is_const() || l.step != 1) return;
  const int64_t a = l.start.const_value(), n = l.stop.const_value() - a;
  if (n < 1) return;
  const SymbolId v = intern_symbol(l.var);
  for (const Stmt& s : l.body) {
    const auto* i = std::get_if<InstrStmt>(&s.node);
    if (!i) continue;
    for (const Access* w : full_writes(i->ins)) {
      if (w->tensor != t.id || w->indirect || w->core) continue;
      std::optional<size_t> dim;
      bool ok = true;
      for (size_t d = 0; d < w->dims.size(); ++d) {
        if (w->dims[d].size.mentions(v)) ok = false;
        if (!w->dims[d].start.mentions(v)) continue;
        if (dim) ok = false;
        dim = d;
      }
      if (!ok) continue;
      if (!dim) {
        written.push_back(w);
        continue;
      }
      const AccessDim& ad = w->dims[*dim];
      const auto lin = linear_in(ad.start, v);
      if (!lin || ad.step != 1 || !ad.size.is_const() || lin->first != ad.size.const_value()) {
        continue;
      }
      const int64_t c = lin->first;
      auto whole_range = std::make_shared<Access>(*w);
      Expr start = Expr(a * c);
      if (lin->second) start = a * c == 0 ? *lin->second : *lin->second + Expr(a * c);
      whole_range->dims[*dim] = AccessDim{start, Expr(n * c), 1};
      summaries_.push_back(whole_range);
      written.push_back(whole_range.get());
    }
  }
}

// Rule 2: walking one iteration of `body` in program order, every read of t reads what this
// iteration wrote before (an identical access, or after a write of the whole buffer). Writes in a
// nested loop cover reads in the same iteration of that loop only (the loop may run no
// iteration, and its writes differ between iterations).
bool reads_own_writes(std::span<const Stmt> body, const Tensor& t,
                      std::vector<const Access*> written, bool all_written) {
  for (const Stmt& s : body) {
    if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
      for (const Access* a : read_accesses(i->ins)) {
        if (a->tensor != t.id || all_written) continue;
        if (std::none_of(written.begin(), written.end(),
                         [&](const Access* w) { return *w == *a; })) {
          return false;
        }
      }
      for (const Access* a : full_writes(i->ins)) {
        if (a->tensor != t.id) continue;
        if (whole(*a, t)) all_written = true;
        written.push_back(a);
      }
    } else if (const auto* l = std::get_if<Loop>(&s.node)) {
      if (!reads_own_writes(l->body, t, written, all_written)) return false;
      loop_writes(*l, t, written);
    }
  }
  return true;
}

// The tensors with accesses the rules cannot see through: another core's memory, or offsets read
// at run time. One pass for every tensor (a pass per tensor made the liveness of a traced kernel
// with 70000 tensors quadratic: minutes).
std::vector<bool> opaque_tensors(const Program& p) {
  std::vector<bool> out(p.tensors.size(), false);
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
      each_access(i->ins, [&](const Access& a, bool) {
        if ((a.core || a.indirect) && a.tensor < out.size()) out[a.tensor] = true;
      });
    }
  });
  return out;
}

bool binds(const std::vector<Stmt>& body, SymbolId v) {
  for (const Stmt& s : body) {
    if (const auto* l = std::get_if<Loop>(&s.node)) {
      if (intern_symbol(l->var) == v || binds(l->body, v)) return true;
    }
  }
  return false;
}

class RegionFinder {
 public:
  RegionFinder(const Program& p, const HwConfig& hw) : p_(p), hw_(hw) {}

  std::vector<std::vector<LiveRegion>> run() {
    out_.resize(p_.tensors.size());
    opaque_ = opaque_tensors(p_);
    scope(p_.body, 0);
    return std::move(out_);
  }

 private:
  void scope(const std::vector<Stmt>& body, ScopeId id) {
    for (size_t k = 0; k < body.size(); ++k) {
      if (const auto* d = std::get_if<DeclStmt>(&body[k].node)) {
        const Tensor& t = p_.tensors.at(d->tensor);
        if (t.on_chip()) out_.at(t.id) = regions(t, body, id, k);
      } else if (const auto* l = std::get_if<Loop>(&body[k].node)) {
        scope(l->body, l->scope);
      }
    }
  }

  std::vector<LiveRegion> regions(const Tensor& t, const std::vector<Stmt>& decl_body,
                                  ScopeId decl_scope, size_t decl_pos) {
    LiveRegion base;
    base.tensor = t.id;
    base.body = &decl_body;
    base.scope = decl_scope;
    base.first = base.last = decl_pos;
    std::vector<LiveRegion> out;
    segments(t, base, !opaque_.at(t.id), out);
    if (out.empty()) out.push_back(finish(t, base));  // unused: live at its declaration only
    return out;
  }

  // Rules 1 and 2 over one body: its statements touching t split into segments. A statement that
  // reads no value of t from before it (a loop whose every iteration reads only what it wrote, an
  // instruction that only writes t) starts a segment; any other statement continues the current
  // one when the segment's own writes cover its reads, and otherwise joins every segment since the
  // first use (a value from an earlier segment may be read). A segment that is one such loop
  // moves into its body; any other is a span of this body.
  void segments(const Tensor& t, const LiveRegion& at, bool see_through,
                std::vector<LiveRegion>& out) {
    struct Segment {
      size_t first = 0, last = 0;
      const Loop* loop = nullptr;  // a segment that is one iteration-local loop
    };
    std::vector<Segment> segs;
    std::vector<const Access*> written;
    bool all_written = false;
    for (size_t k : touching(*at.body, t.id)) {
      const Stmt& s = (*at.body)[k];
      const auto* l = std::get_if<Loop>(&s.node);
      const std::span<const Stmt> one(&s, 1);  // a view: a copy of a loop copies its body
      if (see_through && l && reads_own_writes(l->body, t, {}, false)) {
        segs.push_back({k, k, l});  // nothing read from before, nothing visible after
        written.clear();
        all_written = false;
        continue;
      }
      if (see_through && !l && reads_own_writes(one, t, {}, false)) {
        segs.push_back({k, k, nullptr});  // writes only
        written.clear();
        all_written = false;
      } else if (!segs.empty() && see_through && reads_own_writes(one, t, written, all_written)) {
        segs.back().last = k;
        segs.back().loop = nullptr;
      } else {
        const size_t first = segs.empty() ? k : segs.front().first;
        segs.assign(1, {first, k, nullptr});
        see_through = false;  // the value may come from anywhere before: one span from here on
      }
      if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
        for (const Access* a : full_writes(i->ins)) {
          if (a->tensor != t.id) continue;
          if (whole(*a, t)) all_written = true;
          written.push_back(a);
        }
      }
    }
    for (const Segment& g : segs) {
      LiveRegion r = at;
      r.used = true;
      if (g.loop) {
        r.within.push_back(g.loop);
        r.body = &g.loop->body;
        r.scope = g.loop->scope;
        const size_t before = out.size();
        segments(t, r, true, out);
        if (out.size() > before) continue;
      }
      r.first = g.first;
      r.last = g.last;
      out.push_back(finish(t, r));
    }
  }

  LiveRegion finish(const Tensor& t, LiveRegion r) {
    std::vector<Expr> dims(t.shape.begin() + 1, t.shape.end());
    if (!r.within.empty()) reduce_blocks(t, r, dims);
    Expr elems(1);
    for (const Expr& e : dims) elems = elems * e;
    r.bytes_per_copy = elems * Expr(static_cast<int64_t>(dtype_size(t.dtype)));
    r.bytes = rounded_copy_bytes(r.bytes_per_copy, t.memory, hw_) * Expr(t.bufs);
    return r;
  }

  // Rule 3: storage dim d (>= 1) holds one block per iteration when every access takes one
  // element of it at the same index, and that index varies with a loop the region moved into
  // (no loop inside the region rebinding that variable).
  void reduce_blocks(const Tensor& t, LiveRegion& r, std::vector<Expr>& dims) {
    std::vector<const Access*> acc;
    accesses_of(r.within.back()->body, t.id, acc);
    if (acc.empty()) return;
    for (size_t d = 1; d < t.shape.size(); ++d) {
      const Expr& start = acc.front()->dims.at(d).start;
      bool same = std::all_of(acc.begin(), acc.end(), [&](const Access* a) {
        return a->dims.size() == t.shape.size() && a->dims[d].start == start &&
               a->dims[d].size == Expr(1);
      });
      if (!same) continue;
      bool varies = false;
      for (const Loop* l : r.within) {
        const SymbolId v = intern_symbol(l->var);
        if (start.mentions(v) && !binds(*r.body, v)) varies = true;
      }
      if (!varies) continue;
      r.block_dims.push_back(static_cast<int>(d));
      dims[d - 1] = Expr(1);
    }
  }

  // The positions of body's statements that access tensor t, ascending. Indexed once per body:
  // asking every statement of a body about every tensor declared in it was quadratic (half of
  // `check`'s time on a traced kernel of 10,000 statements).
  const std::vector<size_t>& touching(const std::vector<Stmt>& body, TensorId t) {
    auto [it, fresh] = touching_.try_emplace(&body);
    if (fresh) {
      std::vector<TensorId> ts;
      for (size_t k = 0; k < body.size(); ++k) {
        ts.clear();
        touched_tensors(body[k], ts);
        std::sort(ts.begin(), ts.end());
        ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
        for (TensorId x : ts) it->second[x].push_back(k);
      }
    }
    static const std::vector<size_t> none;
    const auto hit = it->second.find(t);
    return hit == it->second.end() ? none : hit->second;
  }

  const Program& p_;
  const HwConfig& hw_;
  std::vector<bool> opaque_;  // by TensorId: opaque_tensors
  std::unordered_map<const std::vector<Stmt>*, std::unordered_map<TensorId, std::vector<size_t>>>
      touching_;
  std::vector<std::vector<LiveRegion>> out_;
};

}  // namespace

Expr align_up(const Expr& x, int64_t a) {
  if (known_divisor(x) % a == 0) return x;
  return Expr::floordiv(x + Expr(a - 1), a) * Expr(a);
}

Expr rounded_copy_bytes(const Expr& bytes, Memory m, const HwConfig& hw) {
  return align_up(bytes, m == Memory::PSUM ? hw.psum_bank_bytes : kSbufAlignBytes);
}

std::vector<std::vector<LiveRegion>> live_regions(const Program& p, const HwConfig& hw) {
  auto out = RegionFinder(p, hw).run();
  summaries_.clear();  // the regions keep no access of their own
  return out;
}

}  // namespace ir
}  // namespace ncv
