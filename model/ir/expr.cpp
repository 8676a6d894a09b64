#include "model/ir/expr.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace ncv {
inline namespace ir {

struct ExprNode {
  ExprKind kind;
  int64_t value;  // Const: the value; FloorDiv/Mod: the divisor
  SymbolId sym;   // Var
  std::shared_ptr<const ExprNode> a, b;
  size_t hash;
};

namespace {

struct SymbolTable {
  std::mutex mu;
  std::vector<std::unique_ptr<std::string>> names;  // stable addresses: symbol_name returns refs
  std::unordered_map<std::string, SymbolId> ids;
};
SymbolTable& symbols_table() {
  static SymbolTable* t = new SymbolTable();  // never destroyed: Exprs may outlive static dtors
  return *t;
}

struct NodeKey {
  ExprKind kind;
  int64_t value;
  SymbolId sym;
  const ExprNode* a;
  const ExprNode* b;
  bool operator==(const NodeKey&) const = default;
};
struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const noexcept {
    size_t h = static_cast<size_t>(k.kind) * 0x9E3779B97F4A7C15ull;
    auto mix = [&h](size_t v) { h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); };
    mix(static_cast<size_t>(k.value));
    mix(k.sym);
    mix(reinterpret_cast<size_t>(k.a));
    mix(reinterpret_cast<size_t>(k.b));
    return h;
  }
};

// Hash-consing table. Entries are weak so that expressions no program uses any more are freed;
// expired entries are swept whenever the table has doubled since the last sweep.
struct NodeTable {
  std::mutex mu;
  std::unordered_map<NodeKey, std::weak_ptr<const ExprNode>, NodeKeyHash> nodes;
  size_t sweep_at = 1024;
};
NodeTable& node_table() {
  static NodeTable* t = new NodeTable();
  return *t;
}

int64_t checked_add(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) {
    throw EvalError("integer overflow in expression: " + std::to_string(x) + " + " +
                    std::to_string(y) + " is beyond int64");
  }
  return r;
}
int64_t checked_mul(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) {
    throw EvalError("integer overflow in expression: " + std::to_string(x) + " * " +
                    std::to_string(y) + " is beyond int64");
  }
  return r;
}
int64_t floor_div(int64_t x, int64_t d) {
  int64_t q = x / d;
  if ((x % d != 0) && ((x < 0) != (d < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t x, int64_t d) {
  int64_t r = x % d;  // no overflow for any x when d > 0
  return r < 0 ? r + d : r;
}

}  // namespace

struct ExprFactory {
  static Expr make(ExprKind kind, int64_t value, SymbolId sym, const Expr* a, const Expr* b) {
    NodeKey key{kind, value, sym, a ? a->node() : nullptr, b ? b->node() : nullptr};
    auto& t = node_table();
    std::lock_guard lock(t.mu);
    auto it = t.nodes.find(key);
    if (it != t.nodes.end()) {
      if (auto live = it->second.lock()) return Expr(std::move(live));
    }
    size_t h = 1469598103934665603ull ^ static_cast<size_t>(kind);
    auto mix = [&h](size_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(static_cast<size_t>(value));
    mix(sym);
    mix(a ? a->hash() : 0x51);
    mix(b ? b->hash() : 0x73);
    auto node = std::make_shared<const ExprNode>(
        ExprNode{kind, value, sym, a ? a->node_ : nullptr, b ? b->node_ : nullptr, h});
    t.nodes[key] = node;
    if (t.nodes.size() >= t.sweep_at) {
      std::erase_if(t.nodes, [](const auto& kv) { return kv.second.expired(); });
      t.sweep_at = std::max<size_t>(1024, 2 * t.nodes.size());
    }
    return Expr(std::move(node));
  }
  static Expr wrap(const std::shared_ptr<const ExprNode>& n) { return Expr(n); }
  static std::shared_ptr<const ExprNode> constant_node(int64_t value) {
    return make(ExprKind::Const, value, 0, nullptr, nullptr).node_;
  }
};

SymbolId intern_symbol(std::string_view name) {
  auto& t = symbols_table();
  std::lock_guard lock(t.mu);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) return it->second;
  SymbolId id = static_cast<SymbolId>(t.names.size());
  t.names.push_back(std::make_unique<std::string>(name));
  t.ids.emplace(std::string(name), id);
  return id;
}

const std::string& symbol_name(SymbolId id) {
  auto& t = symbols_table();
  std::lock_guard lock(t.mu);
  return *t.names.at(id);
}

namespace {
// Small constants (every default Expr is 0; shapes, starts and steps are mostly small) come from
// a table of nodes that live for the whole process, so making one takes no lock and no hash
// lookup, which short runs spent measurable time on (bench/README.md, "Measurements behind the
// code"). The factory still holds the same nodes, so hash-consing identity is unchanged.
constexpr int64_t kSmallConstLo = -64, kSmallConstHi = 1024;
const std::vector<std::shared_ptr<const ExprNode>>& small_constants() {
  static const auto* table = [] {
    auto* t = new std::vector<std::shared_ptr<const ExprNode>>();  // never destroyed, as above
    for (int64_t v = kSmallConstLo; v <= kSmallConstHi; ++v) {
      t->push_back(ExprFactory::constant_node(v));
    }
    return t;
  }();
  return *table;
}
}  // namespace

Expr::Expr() : Expr(int64_t{0}) {}
Expr::Expr(int64_t value)
    : node_(value >= kSmallConstLo && value <= kSmallConstHi
                ? small_constants()[static_cast<size_t>(value - kSmallConstLo)]
                : ExprFactory::constant_node(value)) {}

Expr Expr::var(std::string_view name) {
  return var(intern_symbol(name));
}
Expr Expr::var(SymbolId id) {
  return ExprFactory::make(ExprKind::Var, 0, id, nullptr, nullptr);
}

ExprKind Expr::kind() const {
  return node_->kind;
}
int64_t Expr::const_value() const {
  return node_->value;
}
SymbolId Expr::symbol() const {
  return node_->sym;
}
int64_t Expr::divisor() const {
  return node_->value;
}
Expr Expr::lhs() const {
  return ExprFactory::wrap(node_->a);
}
Expr Expr::rhs() const {
  return ExprFactory::wrap(node_->b);
}
size_t Expr::hash() const {
  return node_->hash;
}

// Canonical forms, kept small on purpose: constants fold, identities (x+0, x*1, x*0, x//1, x%1)
// vanish, constants move to the right of + and *, and nested constants combine
// ((x + 3) + 4 -> x + 7, (x * 2) * 4 -> x * 8). The printer prints exactly this structure, so
// parsing printed text goes through the same constructors and yields the same node. Constants
// whose sum or product leaves int64 stay unfolded: building an expression never fails, and the
// overflow is reported where the value is needed (eval's EvalError, the well-formedness proof).
Expr operator+(const Expr& a, const Expr& b) {
  int64_t folded = 0;
  if (a.is_const() && b.is_const()) {
    if (!__builtin_add_overflow(a.const_value(), b.const_value(), &folded)) return Expr(folded);
    return ExprFactory::make(ExprKind::Add, 0, 0, &a, &b);
  }
  if (a.is_const()) return b + a;
  if (b.is_const() && b.const_value() == 0) return a;
  if (b.is_const() && a.kind() == ExprKind::Add && a.rhs().is_const() &&
      !__builtin_add_overflow(a.rhs().const_value(), b.const_value(), &folded)) {
    return a.lhs() + Expr(folded);
  }
  return ExprFactory::make(ExprKind::Add, 0, 0, &a, &b);
}

Expr operator*(const Expr& a, const Expr& b) {
  int64_t folded = 0;
  if (a.is_const() && b.is_const()) {
    if (!__builtin_mul_overflow(a.const_value(), b.const_value(), &folded)) return Expr(folded);
    return ExprFactory::make(ExprKind::Mul, 0, 0, &a, &b);
  }
  if (a.is_const()) return b * a;
  if (b.is_const() && b.const_value() == 0) return Expr(0);
  if (b.is_const() && b.const_value() == 1) return a;
  if (b.is_const() && a.kind() == ExprKind::Mul && a.rhs().is_const() &&
      !__builtin_mul_overflow(a.rhs().const_value(), b.const_value(), &folded)) {
    return a.lhs() * Expr(folded);
  }
  return ExprFactory::make(ExprKind::Mul, 0, 0, &a, &b);
}

Expr operator-(const Expr& a) {
  return a * Expr(-1);
}
Expr operator-(const Expr& a, const Expr& b) {
  return a + (-b);
}

Expr Expr::floordiv(Expr a, int64_t divisor) {
  if (divisor <= 0) throw EvalError("floor division by a non-positive constant");
  if (a.is_const()) return Expr(floor_div(a.const_value(), divisor));
  if (divisor == 1) return a;
  return ExprFactory::make(ExprKind::FloorDiv, divisor, 0, &a, nullptr);
}

Expr Expr::mod(Expr a, int64_t divisor) {
  if (divisor <= 0) throw EvalError("modulo by a non-positive constant");
  if (a.is_const()) return Expr(floor_mod(a.const_value(), divisor));
  if (divisor == 1) return Expr(0);
  return ExprFactory::make(ExprKind::Mod, divisor, 0, &a, nullptr);
}

Expr Expr::min(Expr a, Expr b) {
  if (a.is_const() && b.is_const()) return Expr(std::min(a.const_value(), b.const_value()));
  if (a == b) return a;
  return ExprFactory::make(ExprKind::Min, 0, 0, &a, &b);
}

Expr Expr::max(Expr a, Expr b) {
  if (a.is_const() && b.is_const()) return Expr(std::max(a.const_value(), b.const_value()));
  if (a == b) return a;
  return ExprFactory::make(ExprKind::Max, 0, 0, &a, &b);
}

namespace {
void collect_symbols(const ExprNode* n, std::vector<SymbolId>& out) {
  if (!n) return;
  if (n->kind == ExprKind::Var) out.push_back(n->sym);
  collect_symbols(n->a.get(), out);
  collect_symbols(n->b.get(), out);
}
}  // namespace

std::vector<SymbolId> Expr::symbols() const {
  std::vector<SymbolId> out;
  collect_symbols(node_.get(), out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Expr::mentions(SymbolId id) const {
  auto s = symbols();
  return std::binary_search(s.begin(), s.end(), id);
}

namespace {
// Precedence levels for printing: 1 additive, 2 multiplicative, 3 atoms.
int level(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Add:
      return 1;
    case ExprKind::Mul:
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      return 2;
    default:
      return 3;
  }
}
void print(const Expr& e, std::string& out);
void print_operand(const Expr& e, bool parens, std::string& out) {
  if (parens) out += '(';
  print(e, out);
  if (parens) out += ')';
}
void print(const Expr& e, std::string& out) {
  switch (e.kind()) {
    case ExprKind::Const:
      out += std::to_string(e.const_value());
      return;
    case ExprKind::Var:
      out += symbol_name(e.symbol());
      return;
    case ExprKind::Add:
    case ExprKind::Mul: {
      int l = level(e);
      print_operand(e.lhs(), level(e.lhs()) < l, out);
      out += e.kind() == ExprKind::Add ? " + " : " * ";
      print_operand(e.rhs(), level(e.rhs()) <= l, out);
      return;
    }
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      print_operand(e.lhs(), level(e.lhs()) < 2, out);
      out += e.kind() == ExprKind::FloorDiv ? " // " : " % ";
      out += std::to_string(e.divisor());
      return;
    case ExprKind::Min:
    case ExprKind::Max:
      out += e.kind() == ExprKind::Min ? "min(" : "max(";
      print(e.lhs(), out);
      out += ", ";
      print(e.rhs(), out);
      out += ')';
      return;
  }
}
}  // namespace

std::string Expr::str() const {
  std::string out;
  print(*this, out);
  return out;
}

void Env::set(SymbolId id, int64_t value) {
  if (id >= slots_.size()) {
    slots_.resize(std::max<size_t>({size_t{id} + 1, 2 * slots_.size(), 16}));
  }
  slots_[id] = Slot{value, true};
}

void Env::unset(SymbolId id) {
  if (id < slots_.size()) slots_[id].bound = false;
}

int64_t Env::get(SymbolId id) const {
  if (!has(id)) throw EvalError("unbound variable '" + symbol_name(id) + "'");
  return slots_[id].value;
}

namespace {
int64_t eval_node(const ExprNode* n, const Env& env) {
  switch (n->kind) {
    case ExprKind::Const:
      return n->value;
    case ExprKind::Var:
      return env.get(n->sym);
    case ExprKind::Add:
      return checked_add(eval_node(n->a.get(), env), eval_node(n->b.get(), env));
    case ExprKind::Mul:
      return checked_mul(eval_node(n->a.get(), env), eval_node(n->b.get(), env));
    case ExprKind::FloorDiv:
      return floor_div(eval_node(n->a.get(), env), n->value);
    case ExprKind::Mod:
      return floor_mod(eval_node(n->a.get(), env), n->value);
    case ExprKind::Min:
      return std::min(eval_node(n->a.get(), env), eval_node(n->b.get(), env));
    case ExprKind::Max:
      return std::max(eval_node(n->a.get(), env), eval_node(n->b.get(), env));
  }
  return 0;
}
}  // namespace

Expr substitute(const Expr& e, const Expr& from, const Expr& to) {
  if (e == from) return to;
  switch (e.kind()) {
    case ExprKind::Const:
    case ExprKind::Var:
      return e;
    case ExprKind::Add:
      return substitute(e.lhs(), from, to) + substitute(e.rhs(), from, to);
    case ExprKind::Mul:
      return substitute(e.lhs(), from, to) * substitute(e.rhs(), from, to);
    case ExprKind::FloorDiv:
      return Expr::floordiv(substitute(e.lhs(), from, to), e.divisor());
    case ExprKind::Mod:
      return Expr::mod(substitute(e.lhs(), from, to), e.divisor());
    case ExprKind::Min:
      return Expr::min(substitute(e.lhs(), from, to), substitute(e.rhs(), from, to));
    case ExprKind::Max:
      return Expr::max(substitute(e.lhs(), from, to), substitute(e.rhs(), from, to));
  }
  return e;
}

int64_t eval(const Expr& e, const Env& env) {
  return eval_node(e.node(), env);
}

}  // namespace ir
}  // namespace ncv
