#include "equiv/reorder.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "model/ir/printer.h"

namespace ncv::equiv {

namespace {

using ir::Program;
using ir::Stmt;

// One access of a statement to a tensor key, kept to tell whether two statements' accesses stay
// apart across the iterations of a loop around them (no access: a declaration, an index tensor).
struct Touch {
  std::string key;
  bool write = false;
  std::optional<ir::Access> access;
};

// What a statement touches: tensor keys read and written, or everything (a barrier); its accesses,
// the tensors it declares and the loop variables bound inside it.
struct Effects {
  std::set<std::string> reads, writes;
  bool barrier = false;
  std::vector<Touch> touches;
  std::set<ir::TensorId> declares;
  std::set<std::string> bound;

  void merge(const Effects& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
    barrier = barrier || o.barrier;
    touches.insert(touches.end(), o.touches.begin(), o.touches.end());
    declares.insert(o.declares.begin(), o.declares.end());
    bound.insert(o.bound.begin(), o.bound.end());
  }
  bool conflicts(const Effects& o) const {
    if (barrier || o.barrier) return true;
    auto meets = [](const std::set<std::string>& x, const std::set<std::string>& y) {
      return std::any_of(x.begin(), x.end(), [&](const std::string& k) { return y.count(k); });
    };
    return meets(writes, o.writes) || meets(writes, o.reads) || meets(reads, o.writes);
  }
};

// A statement with its effects and its name-independent key.
struct Item {
  Stmt stmt;
  Effects effects;
  std::string key;
};

// Identifiers of `text` that name an enclosing loop's variable replaced by its nesting depth
// (`__d0` the outermost): names that differ only by an alpha-renaming give one text.
std::string with_depth_names(const std::string& text, const std::map<std::string, int>& depth) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c == '_') {
      size_t j = i + 1;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      const std::string word = text.substr(i, j - i);
      const auto it = depth.find(word);
      out += it == depth.end() ? word : "__d" + std::to_string(it->second);
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// e as coefficient * v + rest, rest free of v; nullopt when v appears otherwise (under a division,
// a modulus, a min or max, or times another variable).
std::optional<std::pair<int64_t, Expr>> split_linear(const Expr& e, SymbolId v) {
  if (!e.mentions(v)) return std::pair<int64_t, Expr>{0, e};
  switch (e.kind()) {
    case ExprKind::Var:
      return std::pair<int64_t, Expr>{1, Expr(0)};
    case ExprKind::Add: {
      const auto a = split_linear(e.lhs(), v), b = split_linear(e.rhs(), v);
      if (!a || !b) return std::nullopt;
      return std::pair<int64_t, Expr>{a->first + b->first, a->second + b->second};
    }
    case ExprKind::Mul: {
      const Expr& c = e.lhs().is_const() ? e.lhs() : e.rhs();
      const Expr& x = e.lhs().is_const() ? e.rhs() : e.lhs();
      if (!c.is_const()) return std::nullopt;
      const auto a = split_linear(x, v);
      if (!a) return std::nullopt;
      return std::pair<int64_t, Expr>{a->first * c.const_value(), a->second * c};
    }
    default:
      return std::nullopt;
  }
}

// Whether two accesses of one tensor touch disjoint elements in any two different iterations of
// loop l: in some dim both start at c * var + r (the same c != 0 and r, r free of the variables
// `inner` loops bind) and span at most |c * step| elements there.
bool apart_across_iterations(const Touch& x, const Touch& y, const ir::Loop& l,
                             const std::set<std::string>& inner) {
  if (!x.access || !y.access || x.access->dims.size() != y.access->dims.size()) return false;
  const SymbolId v = intern_symbol(l.var);
  const int64_t stride = l.step;
  for (size_t d = 0; d < x.access->dims.size(); ++d) {
    const ir::AccessDim &a = x.access->dims[d], &b = y.access->dims[d];
    const auto la = split_linear(a.start, v), lb = split_linear(b.start, v);
    if (!la || !lb || la->first == 0 || la->first != lb->first || !(la->second == lb->second)) {
      continue;
    }
    const std::vector<SymbolId> used = la->second.symbols();
    if (std::any_of(used.begin(), used.end(),
                    [&](SymbolId s) { return inner.count(symbol_name(s)) > 0; })) {
      continue;
    }
    if (!a.size.is_const() || !b.size.is_const() || a.step <= 0 || b.step <= 0) continue;
    const int64_t span =
        std::max((a.size.const_value() - 1) * a.step + 1, (b.size.const_value() - 1) * b.step + 1);
    if (span <= std::abs(la->first * stride)) return true;
  }
  return false;
}

// The pairwise conflict checks cost the square of a block's length: a longer block (an unrolled
// traced kernel) keeps its order and its loops stay whole (less canonical, never unsound; 4000
// statements took about 3 s).
constexpr size_t kMaxBlockStatements = 1000;

class Canonicaliser {
 public:
  explicit Canonicaliser(const Program& p) : p_(p), named_(p) {
    // Keys print tensors by id, so that buffer names do not order statements.
    for (ir::Tensor& t : named_.tensors) t.name = "t" + std::to_string(t.id);
    for (const ir::Tensor& t : p.tensors) {
      if (t.on_chip() && t.placement) placed_memory_.insert(t.memory);
    }
  }

  std::vector<Stmt> block(const std::vector<Stmt>& body, const std::map<std::string, int>& depth) {
    std::vector<Stmt> out;
    for (Item& it : items_in_order(body, depth)) out.push_back(std::move(it.stmt));
    return out;
  }

 private:
  // A block's statements as items in canonical order (a loop may have become several).
  std::vector<Item> items_in_order(const std::vector<Stmt>& body,
                                   const std::map<std::string, int>& depth) {
    std::vector<Item> items;
    for (const Stmt& s : body) {
      for (Item& it : items_of(s, depth)) items.push_back(std::move(it));
    }
    least_order(items);
    return items;
  }

  std::string tensor_key(ir::TensorId id) const {
    const ir::Tensor& t = p_.tensors.at(id);
    if (t.on_chip() && placed_memory_.count(t.memory)) {
      return "memory " + std::to_string(static_cast<int>(t.memory));
    }
    return "t" + std::to_string(id);
  }
  // An access's tensor, and the index tensors of its indirect offsets (read).
  void access(const ir::Access& a, bool written, Effects& e) const {
    (written ? e.writes : e.reads).insert(tensor_key(a.tensor));
    e.touches.push_back(
        {tensor_key(a.tensor), written, a.indirect ? std::nullopt : std::optional<ir::Access>(a)});
    if (a.core) e.barrier = true;  // another core's memory
    for (const ir::Access* x = &a; x->indirect; x = x->indirect->offsets.get()) {
      if (!x->indirect->offsets) break;
      e.reads.insert(tensor_key(x->indirect->offsets->tensor));
      e.touches.push_back({tensor_key(x->indirect->offsets->tensor), false, std::nullopt});
      if (x->indirect->offsets->core) e.barrier = true;
    }
  }
  static bool touches_run_state(const ir::Instruction& ins) {
    if (ir::draws_random_values(ins)) return true;
    if (const auto* a = std::get_if<ir::Activation>(&ins)) {
      return a->reduce_cmd != ir::ReduceCmd::idle || a->reduce_res.has_value();
    }
    return std::holds_alternative<ir::TensorScalarCumulative>(ins);
  }

  std::vector<Item> items_of(const Stmt& s, const std::map<std::string, int>& depth) {
    Item it{s, {}, {}};
    if (const auto* d = std::get_if<ir::DeclStmt>(&s.node)) {
      it.effects.writes.insert(tensor_key(d->tensor));
      it.effects.touches.push_back({tensor_key(d->tensor), true, std::nullopt});
      it.effects.declares.insert(d->tensor);
      it.key = "decl t" + std::to_string(d->tensor);
    } else if (const auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
      for (const ir::Access* a : ir::written_accesses(i->ins)) access(*a, true, it.effects);
      for (const ir::Access* a : ir::read_accesses(i->ins)) access(*a, false, it.effects);
      if (touches_run_state(i->ins)) it.effects.barrier = true;
      ir::Instruction ins = i->ins;
      if (auto* dma = std::get_if<ir::DmaCopy>(&ins)) dma->queue = 0;  // layer 0 ignores queues
      it.key = with_depth_names(ir::print_instruction(named_, ins), depth);
    } else {
      const auto& l = std::get<ir::Loop>(s.node);
      const int level = static_cast<int>(depth_size_++);
      const std::string head = with_depth_names(
          "for [" + l.start.str() + ", " + l.stop.str() + ") step " + std::to_string(l.step) +
              (l.kind == ir::LoopKind::affine ? " affine" : " sequential"),
          depth);
      std::map<std::string, int> inner = depth;  // the loop's variable shadows an outer one's
      inner[l.var] = level;
      std::vector<Item> body = items_in_order(l.body, inner);
      --depth_size_;
      // One loop per group of its statements that may run as loops of their own (fission).
      std::vector<Item> out;
      for (const std::vector<size_t>& group : fission_groups(body, l)) {
        Item part{s, {}, {}};
        ir::Loop copy = l;
        copy.body.clear();
        std::string body_key;
        for (size_t k : group) {
          copy.body.push_back(body[k].stmt);
          body_key += body[k].key + "\n";
          part.effects.merge(body[k].effects);
        }
        part.effects.bound.insert(l.var);
        part.stmt.node = std::move(copy);
        part.key = head + " __d" + std::to_string(level) + " {\n" + body_key + "}";
        out.push_back(std::move(part));
      }
      return out;
    }
    return {it};
  }

  // Loop l's body (items in canonical order) in groups that may each run as a loop of their own,
  // in an order the groups allow: the loop split into one loop per group computes what l
  // computes. Statements stay together when one declares a buffer the other touches (the buffer
  // lives one iteration), when either touches engine or run state, and when they touch one tensor,
  // one writing, in ways that may meet across iterations (apart_across_iterations). Within an
  // iteration the groups keep their order; groups ordered both ways are one.
  std::vector<std::vector<size_t>> fission_groups(const std::vector<Item>& body,
                                                  const ir::Loop& l) const {
    const size_t n = body.size();
    if (n > kMaxBlockStatements) {  // kept whole
      std::vector<size_t> all(n);
      std::iota(all.begin(), all.end(), size_t{0});
      return {all};
    }
    std::vector<size_t> up(n);
    std::iota(up.begin(), up.end(), size_t{0});
    auto find = [&](size_t x) {
      while (up[x] != x) x = up[x] = up[up[x]];
      return x;
    };
    auto unite = [&](size_t a, size_t b) { up[find(a)] = find(b); };
    std::set<std::string> inner;
    for (const Item& it : body) inner.insert(it.effects.bound.begin(), it.effects.bound.end());
    if (inner.count(l.var)) {  // an inner loop rebinds the variable: its accesses are not l's
      std::vector<size_t> all(n);
      std::iota(all.begin(), all.end(), size_t{0});
      return {all};
    }
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        if (together(body[a].effects, body[b].effects, l, inner)) unite(a, b);
      }
    }
    // Groups ordered both ways within an iteration merge, until none are.
    for (bool merged = true; merged;) {
      merged = false;
      std::set<std::pair<size_t, size_t>> before;  // (group of a, group of b): a runs first
      for (size_t a = 0; a < n; ++a) {
        for (size_t b = a + 1; b < n; ++b) {
          if (find(a) != find(b) && body[a].effects.conflicts(body[b].effects)) {
            before.insert({find(a), find(b)});
          }
        }
      }
      for (const auto& [g, h] : before) {
        if (before.count({h, g}) && find(g) != find(h)) unite(g, h), merged = true;
      }
      // A longer cycle (g before h before k before g) merges as a whole: by the transitive
      // closure over the few groups.
      if (!merged) {
        std::map<size_t, std::set<size_t>> reach;
        for (const auto& [g, h] : before) reach[g].insert(h);
        for (bool grew = true; grew;) {
          grew = false;
          for (auto& [g, hs] : reach) {
            for (size_t h : std::set<size_t>(hs)) {
              for (size_t k : reach[h]) grew = hs.insert(k).second || grew;
            }
          }
        }
        for (auto& [g, hs] : reach) {
          if (hs.count(g)) {
            for (size_t h : hs) {
              if (reach[h].count(g) && find(h) != find(g)) unite(h, g), merged = true;
            }
          }
        }
      }
    }
    // The groups in an order their conflicts within an iteration allow (Kahn's algorithm, the
    // group with the earliest first statement first among those ready).
    std::map<size_t, std::vector<size_t>> by_root;
    std::vector<size_t> roots;  // in order of first statement
    for (size_t i = 0; i < n; ++i) {
      if (!by_root.count(find(i))) roots.push_back(find(i));
      by_root[find(i)].push_back(i);
    }
    std::map<size_t, std::set<size_t>> after;
    std::map<size_t, size_t> preds;
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        const size_t g = find(a), h = find(b);
        if (g != h && body[a].effects.conflicts(body[b].effects) && after[g].insert(h).second) {
          ++preds[h];
        }
      }
    }
    std::vector<std::vector<size_t>> out;
    std::set<size_t> done;
    while (out.size() < roots.size()) {
      const auto next = std::find_if(roots.begin(), roots.end(),
                                     [&](size_t r) { return !done.count(r) && preds[r] == 0; });
      if (next == roots.end()) {  // a cycle the merging missed: keep the loop whole
        std::vector<size_t> all(n);
        std::iota(all.begin(), all.end(), size_t{0});
        return {all};
      }
      done.insert(*next);
      out.push_back(by_root[*next]);
      for (size_t h : after[*next]) --preds[h];
    }
    return out;
  }
  bool together(const Effects& x, const Effects& y, const ir::Loop& l,
                const std::set<std::string>& inner) const {
    if (x.barrier || y.barrier) return true;
    for (const auto* decl : {&x, &y}) {
      const Effects& other = decl == &x ? y : x;
      for (ir::TensorId t : decl->declares) {
        const std::string k = tensor_key(t);
        if (other.reads.count(k) || other.writes.count(k)) return true;
      }
    }
    for (const Touch& a : x.touches) {
      for (const Touch& b : y.touches) {
        if (a.key == b.key && (a.write || b.write) && !apart_across_iterations(a, b, l, inner)) {
          return true;
        }
      }
    }
    return false;
  }

  // Kahn's algorithm over "i before j" (i < j, conflicting), the least key ready first (the
  // earlier statement among equal keys).
  static void least_order(std::vector<Item>& items) {
    const size_t n = items.size();
    if (n > kMaxBlockStatements) return;  // kept as written
    std::vector<std::vector<size_t>> after(n);
    std::vector<size_t> preds(n, 0);
    for (size_t j = 0; j < n; ++j) {
      for (size_t i = 0; i < j; ++i) {
        if (items[i].effects.conflicts(items[j].effects)) {
          after[i].push_back(j);
          ++preds[j];
        }
      }
    }
    auto later = [&items](size_t a, size_t b) {
      return items[a].key != items[b].key ? items[a].key > items[b].key : a > b;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> ready(later);
    for (size_t j = 0; j < n; ++j) {
      if (preds[j] == 0) ready.push(j);
    }
    std::vector<Item> ordered;
    while (!ready.empty()) {
      const size_t i = ready.top();
      ready.pop();
      ordered.push_back(items[i]);
      for (size_t j : after[i]) {
        if (--preds[j] == 0) ready.push(j);
      }
    }
    items = std::move(ordered);
  }

  const Program& p_;
  Program named_;
  std::set<Memory> placed_memory_;
  size_t depth_size_ = 0;
};

void renumber(std::vector<Stmt>& body, uint32_t& next) {
  for (Stmt& s : body) {
    if (auto* l = std::get_if<ir::Loop>(&s.node)) {
      renumber(l->body, next);
    } else if (auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
      i->id = next++;
    }
  }
}

}  // namespace

Program with_canonical_statement_order(const Program& p) {
  Canonicaliser c(p);
  const std::map<std::string, int> depth;
  Program out = p;
  out.body = c.block(p.body, depth);
  uint32_t next = 0;
  renumber(out.body, next);
  return out;
}

}  // namespace ncv::equiv
