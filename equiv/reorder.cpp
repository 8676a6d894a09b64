#include "equiv/reorder.h"

#include <algorithm>
#include <cctype>
#include <map>
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

// What a statement touches: tensor keys read and written, or everything (a barrier).
struct Effects {
  std::set<std::string> reads, writes;
  bool barrier = false;

  void merge(const Effects& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
    barrier = barrier || o.barrier;
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

class Canonicaliser {
 public:
  explicit Canonicaliser(const Program& p) : p_(p), named_(p) {
    // Keys print tensors by id, so that buffer names do not order statements.
    for (ir::Tensor& t : named_.tensors) t.name = "t" + std::to_string(t.id);
    for (const ir::Tensor& t : p.tensors) {
      if (t.on_chip() && t.placement) placed_memory_.insert(t.memory);
    }
  }

  std::vector<Stmt> block(const std::vector<Stmt>& body, const std::map<std::string, int>& depth,
                          std::string& key, Effects& effects) {
    std::vector<Item> items;
    for (const Stmt& s : body) items.push_back(item(s, depth));
    const std::vector<Stmt> out = least_order(items);
    for (const Item& it : items) {
      key += it.key + "\n";
      effects.merge(it.effects);
    }
    return out;
  }

 private:
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
    if (a.core) e.barrier = true;  // another core's memory
    for (const ir::Access* x = &a; x->indirect; x = x->indirect->offsets.get()) {
      if (!x->indirect->offsets) break;
      e.reads.insert(tensor_key(x->indirect->offsets->tensor));
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

  Item item(const Stmt& s, const std::map<std::string, int>& depth) {
    Item it{s, {}, {}};
    if (const auto* d = std::get_if<ir::DeclStmt>(&s.node)) {
      it.effects.writes.insert(tensor_key(d->tensor));
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
      std::string body_key;
      ir::Loop copy = l;
      copy.body = block(l.body, inner, body_key, it.effects);
      --depth_size_;
      it.stmt.node = std::move(copy);
      it.key = head + " __d" + std::to_string(level) + " {\n" + body_key + "}";
    }
    return it;
  }

  // Kahn's algorithm over "i before j" (i < j, conflicting), the least key ready first (the
  // earlier statement among equal keys).
  static std::vector<Stmt> least_order(std::vector<Item>& items) {
    const size_t n = items.size();
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
    std::vector<Stmt> out;
    std::vector<Item> ordered;
    while (!ready.empty()) {
      const size_t i = ready.top();
      ready.pop();
      out.push_back(items[i].stmt);
      ordered.push_back(items[i]);
      for (size_t j : after[i]) {
        if (--preds[j] == 0) ready.push(j);
      }
    }
    items = std::move(ordered);  // the block's key is read in the new order
    return out;
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
  std::string key;
  Effects effects;
  Program out = p;
  out.body = c.block(p.body, depth, key, effects);
  uint32_t next = 0;
  renumber(out.body, next);
  return out;
}

}  // namespace ncv::equiv
