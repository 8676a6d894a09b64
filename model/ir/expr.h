// Symbolic integer index expressions.
//
// Exprs are immutable and hash-consed: two structurally equal expressions are the same node, so
// equality is a pointer comparison and Programs compare cheaply. Shapes, loop bounds, access
// starts and buffer addresses are all Exprs over params and loop variables, which is what lets
// the solver reason about every shape at once while the interpreter simply evaluates them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ncv {
inline namespace ir {

enum class ExprKind : uint8_t { Const, Var, Add, Mul, FloorDiv, Mod, Min, Max };

// Variables are params or loop variables, identified by name within a Program.
// Names are interned to small integer ids so that evaluation is an array lookup.
using SymbolId = uint32_t;
SymbolId intern_symbol(std::string_view name);
const std::string& symbol_name(SymbolId id);

struct ExprNode;

class Expr {
 public:
  Expr();               // the constant 0
  Expr(int64_t value);  // NOLINT(google-explicit-constructor): literals read naturally in kernels
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}

  static Expr var(std::string_view name);
  static Expr var(SymbolId id);
  static Expr floordiv(Expr a, int64_t divisor);  // divisor > 0, rounds toward -infinity
  static Expr mod(Expr a, int64_t divisor);       // divisor > 0, result in [0, divisor)
  static Expr min(Expr a, Expr b);
  static Expr max(Expr a, Expr b);

  ExprKind kind() const;
  bool is_const() const { return kind() == ExprKind::Const; }
  int64_t const_value() const;  // precondition: is_const()
  SymbolId symbol() const;      // precondition: kind() == Var
  int64_t divisor() const;      // precondition: FloorDiv or Mod
  Expr lhs() const;  // operand of FloorDiv/Mod (the dividend) and left operand of Add/Mul/Min/Max
  Expr rhs() const;  // right operand; precondition: Add, Mul, Min, Max

  // Stable structural hash and pointer identity (hash-consing makes them agree).
  size_t hash() const;
  bool same(const Expr& o) const { return node_ == o.node_; }
  friend bool operator==(const Expr& a, const Expr& b) { return a.node_ == b.node_; }

  // All variables this expression mentions (sorted, unique).
  std::vector<SymbolId> symbols() const;
  bool mentions(SymbolId id) const;

  // Text form: `a + b`, `a * b`, `a // 4`, `a % 4`, `min(a, b)`, `max(a, b)`, negative constants
  // as `-3`; parenthesised only where precedence needs it. parse_expr (text_form) reads it back
  // to the identical node.
  std::string str() const;

  const ExprNode* node() const { return node_.get(); }

 private:
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  friend struct ExprFactory;
  std::shared_ptr<const ExprNode> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);  // a + b * -1
Expr operator-(const Expr& a);                 // a * -1
Expr operator*(const Expr& a, const Expr& b);

// `e` with every occurrence of the subexpression `from` (a variable, or any expression: Exprs
// are hash-consed, so structural equality is identity) replaced by `to`, rebuilt through the
// operators (so constants fold as they do when an expression is built).
Expr substitute(const Expr& e, const Expr& from, const Expr& to);

// Variable bindings for evaluation: a dense array indexed by SymbolId.
class Env {
 public:
  void set(SymbolId id, int64_t value);
  void set(std::string_view name, int64_t value) { set(intern_symbol(name), value); }
  void unset(SymbolId id);
  bool has(SymbolId id) const { return id < slots_.size() && slots_[id].bound; }
  int64_t get(SymbolId id) const;  // throws EvalError if unbound
 private:
  // One array, grown geometrically: environments are built several times per run, and two
  // arrays resized per binding were a notable share of a small run's allocations.
  struct Slot {
    int64_t value = 0;
    bool bound = false;
  };
  std::vector<Slot> slots_;
};

// Evaluation failure (unbound variable, overflow): a typed error, never UB.
struct EvalError : std::exception {
  std::string message;
  explicit EvalError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

// Evaluates with overflow checking: any intermediate beyond int64 throws EvalError.
int64_t eval(const Expr& e, const Env& env);

}  // namespace ir
}  // namespace ncv

template <>
struct std::hash<ncv::Expr> {
  size_t operator()(const ncv::Expr& e) const noexcept { return e.hash(); }
};
