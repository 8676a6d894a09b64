// The .nkir parser, part 2: expressions, accesses, operands, literals and instruction arguments
// (statements are in parser.cpp).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "model/ir/instruction_schema.h"
#include "model/ir/printer.h"
#include "model/nkir/parser.h"

namespace ncv {
inline namespace nkir {

namespace {

constexpr uint32_t kInfBits = 0x7f800000u;

// Unsigned decimal value of a Number token; false if it is not all digits or exceeds `limit`.
bool decimal_value(std::string_view s, uint64_t limit, uint64_t& out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

constexpr uint64_t kInt64Max = static_cast<uint64_t>(INT64_MAX);

// The names of the instruction kinds, by variant index.
const std::vector<std::string_view>& op_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n;
    [&]<size_t... I>(std::index_sequence<I...>) {
      (n.push_back(op_name(Instruction(std::in_place_index<I>))), ...);
    }
    (std::make_index_sequence<std::variant_size_v<Instruction>>());
    return n;
  }();
  return names;
}

std::optional<Instruction> make_instruction(std::string_view name) {
  const auto& names = op_names();
  std::optional<Instruction> out;
  [&]<size_t... I>(std::index_sequence<I...>) {
    (void)((names[I] == name ? (out.emplace(std::in_place_index<I>), true) : false) || ...);
  }
  (std::make_index_sequence<std::variant_size_v<Instruction>>());
  return out;
}

// Finds one field of an instruction (by name, or the k-th positional one) and, when `parse` is
// set, parses its value.
struct FieldVisitor {
  Parser& parser;
  std::string_view key;
  int index = -1;  // >= 0: the index-th positional field
  bool parse = false;
  const char* hit = nullptr;
  int positional_seen = 0;

  template <typename T>
  void pos(const char* name, T& field) {
    bool match = index >= 0 ? positional_seen == index : key == name;
    ++positional_seen;
    handle(name, field, match);
  }
  template <typename T>
  void req(const char* name, T& field) {
    handle(name, field, index < 0 && key == name);
  }
  template <typename T, typename D>
  void opt(const char* name, T& field, const D&) {
    req(name, field);
  }
  template <typename T, typename D>
  void show(const char* name, T& field, const D&) {
    req(name, field);
  }
  template <typename T>
  void handle(const char* name, T& field, bool match) {
    if (!match || hit) return;
    hit = name;
    if (parse) parser.parse_value(field);
  }
};

// Lists the fields (for messages) and finds the first required one not given.
struct FieldLister {
  const std::vector<std::string_view>* given = nullptr;
  std::string names;
  const char* missing = nullptr;
  int positional = 0;

  void add(const char* name, bool required) {
    if (!names.empty()) names += ", ";
    names += name;
    if (required && given && !missing &&
        std::find(given->begin(), given->end(), name) == given->end()) {
      missing = name;
    }
  }
  template <typename T>
  void pos(const char* name, T&) {
    ++positional;
    add(name, true);
  }
  template <typename T>
  void req(const char* name, T&) {
    add(name, true);
  }
  template <typename T, typename D>
  void opt(const char* name, T&, const D&) {
    add(name, false);
  }
  template <typename T, typename D>
  void show(const char* name, T&, const D&) {
    add(name, false);
  }
};

}  // namespace

// ---- expressions ----

template <typename F>
Expr build_checked(const Token& at, const std::string& file, F&& f) {
  Expr e;
  try {
    e = f();
  } catch (const EvalError& err) {
    throw ParseError(file, at.line, at.column,
                     "expected an expression whose constants fit in int64, got " + err.message);
  }
  // Two constants stay unfolded only when their sum or product leaves int64 (Expr's operators).
  if ((e.kind() == ExprKind::Add || e.kind() == ExprKind::Mul) && e.lhs().is_const() &&
      e.rhs().is_const()) {
    throw ParseError(file, at.line, at.column,
                     "expected an expression whose constants fit in int64, got `" + e.str() +
                         "`, which overflows");
  }
  return e;
}

void Parser::check_depth(const PExpr& e, const Token& at) const {
  if (e.depth > kMaxExprDepth) {
    fail(at, "expression tree depth at most " + std::to_string(kMaxExprDepth));
  }
}

Expr Parser::parse_expr() {
  return parse_sum().e;
}

Parser::PExpr Parser::parse_sum() {
  PExpr a = parse_product();
  while (peek().is("+") || peek().is("-")) {
    Token op = next();
    PExpr b = parse_product();
    bool plus = op.text == "+";
    a = PExpr{build_checked(op, file_, [&] { return plus ? a.e + b.e : a.e - b.e; }),
              std::max(a.depth, b.depth) + (plus ? 1 : 2)};
    check_depth(a, op);
  }
  return a;
}

Parser::PExpr Parser::parse_product() {
  PExpr a = parse_unary();
  while (peek().is("*") || peek().is("//") || peek().is("%")) {
    Token op = next();
    Token rhs_tok = peek();
    PExpr b = parse_unary();
    if (op.text == "*") {
      a = PExpr{build_checked(op, file_, [&] { return a.e * b.e; }),
                std::max(a.depth, b.depth) + 1};
    } else {
      if (!b.e.is_const() || b.e.const_value() <= 0) {
        fail(rhs_tok, "a positive integer constant divisor");
      }
      int64_t d = b.e.const_value();
      bool div = op.text == "//";
      if (!div && a.e.is_const()) {
        // Folded here: expr.cpp's floor_mod computes x - (x // d) * d, which overflows for x
        // near INT64_MIN. The remainder below cannot overflow and is the same constant node.
        int64_t r = a.e.const_value() % d;
        a = PExpr{Expr(r < 0 ? r + d : r), 1};
      } else {
        a = PExpr{build_checked(op, file_,
                                [&] { return div ? Expr::floordiv(a.e, d) : Expr::mod(a.e, d); }),
                  a.depth + 1};
      }
    }
    check_depth(a, op);
  }
  return a;
}

Parser::PExpr Parser::parse_unary() {
  if (!peek().is("-")) return parse_atom();
  Token minus = next();
  Nest nest(*this, minus);
  if (peek().kind == TokKind::Number) {
    // A negative literal directly, so that INT64_MIN (printed as -9223372036854775808) parses.
    Token lit = next();
    uint64_t v = 0;
    if (!decimal_value(lit.text, kInt64Max + 1, v)) fail(lit, "integer in int64 range");
    return PExpr{Expr(static_cast<int64_t>(0 - v)), 1};
  }
  PExpr a = parse_unary();
  PExpr r{build_checked(minus, file_, [&] { return -a.e; }), a.depth + 1};
  check_depth(r, minus);
  return r;
}

Parser::PExpr Parser::parse_atom() {
  Token t = next();
  if (t.kind == TokKind::Number) {
    uint64_t v = 0;
    if (!decimal_value(t.text, kInt64Max, v)) fail(t, "integer in int64 range");
    return PExpr{Expr(static_cast<int64_t>(v)), 1};
  }
  if (t.kind == TokKind::Ident) {
    if ((t.text == "min" || t.text == "max") && peek().is("(")) {
      Nest nest(*this, t);
      next();
      PExpr a = parse_sum();
      expect(",");
      PExpr b = parse_sum();
      expect(")");
      bool is_min = t.text == "min";
      PExpr r{build_checked(t, file_,
                            [&] { return is_min ? Expr::min(a.e, b.e) : Expr::max(a.e, b.e); }),
              std::max(a.depth, b.depth) + 1};
      check_depth(r, t);
      return r;
    }
    if (check_symbols_ && !symbol_visible(t.text)) fail(t, "a declared param or loop variable");
    return PExpr{Expr::var(t.text), 1};
  }
  if (t.is("(")) {
    Nest nest(*this, t);
    PExpr inner = parse_sum();
    expect(")");
    return inner;
  }
  fail(t, "expression");
}

// ---- literals ----

int64_t Parser::parse_int64(const std::string& what) {
  bool negative = accept("-");
  Token t = next();
  uint64_t v = 0;
  if (t.kind != TokKind::Number) fail(t, what);
  if (!decimal_value(t.text, negative ? kInt64Max + 1 : kInt64Max, v)) {
    // Tell an overflow apart from a malformed number.
    bool digits_only = t.text.find_first_not_of("0123456789") == std::string_view::npos;
    fail(t, digits_only ? what + " in int64 range" : what);
  }
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

int Parser::parse_int(const std::string& what) {
  Token at = peek();
  int64_t v = parse_int64(what);
  if (v < INT32_MIN || v > INT32_MAX) fail(at, what + " in int32 range");
  return static_cast<int>(v);
}

float Parser::parse_float() {
  bool negative = accept("-");
  Token t = next();
  uint32_t bits = 0;
  if (t.is_ident("nan")) {
    bits = kCanonicalNaN;
    if (accept("(")) {
      Token h = next();
      uint64_t v = 0;
      bool ok = h.kind == TokKind::Number && h.text.size() > 2 && h.text.size() <= 10 &&
                (h.text[1] == 'x' || h.text[1] == 'X');
      if (ok) {
        auto r = std::from_chars(h.text.data() + 2, h.text.data() + h.text.size(), v, 16);
        ok = r.ec == std::errc() && r.ptr == h.text.data() + h.text.size();
      }
      bits = static_cast<uint32_t>(v);
      if (!ok || (bits & kInfBits) != kInfBits || (bits & 0x007fffffu) == 0) {
        fail(h, "NaN bit pattern such as 0x7fc00001");
      }
      expect(")");
    }
  } else if (t.is_ident("inf")) {
    bits = kInfBits;
  } else if (t.kind == TokKind::Number) {
    // strtof, not std::from_chars: libc++ before 17 has no floating-point from_chars, and the
    // OSS-Fuzz build (.clusterfuzzlite/) compiles with -stdlib=libc++. The token is unsigned
    // decimal digits with an optional fraction and exponent (lexer.cpp; hex is refused
    // here), which strtof reads correctly rounded in the "C" locale, the only one a program
    // that never calls setlocale has. Out of range as std::from_chars has it: the value rounds
    // to infinity, or a nonzero value rounds to zero (ERANGE with a subnormal result is fine).
    const std::string text(t.text);
    char* end = nullptr;
    errno = 0;
    const float f = std::strtof(text.c_str(), &end);
    const bool underflow = errno == ERANGE && f == 0.0f;
    if (end != text.c_str() + text.size() ||
        (text.size() > 1 && (text[1] == 'x' || text[1] == 'X'))) {
      fail(t, "number");
    }
    if (std::isinf(f) || underflow) fail(t, "number in fp32 range");
    bits = std::bit_cast<uint32_t>(f);
  } else {
    fail(t, "number, inf or nan");
  }
  if (negative) bits ^= kSignBit;
  return std::bit_cast<float>(bits);
}

void Parser::parse_value(bool& v) {
  Token t = next();
  if (t.is_ident("true")) {
    v = true;
  } else if (t.is_ident("false")) {
    v = false;
  } else {
    fail(t, "true or false");
  }
}

void Parser::parse_value(std::vector<int64_t>& v) {
  Token open = expect("[");
  Nest nest(*this, open);
  v.clear();
  if (!peek().is("]")) {
    do {
      v.push_back(parse_int64("integer"));
    } while (accept(","));
  }
  expect("]");
}

template <typename E>
E Parser::parse_enum(std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E),
                     E last, const char* what) {
  Token t = next();
  std::optional<E> v;
  if (t.kind == TokKind::Ident) v = parse(t.text);
  if (!v) {
    std::string all;
    for (int k = 0; k <= static_cast<int>(last); ++k) {
      all += k ? ", " : "";
      all += name(static_cast<E>(k));
    }
    fail(t, std::string(what) + " (" + all + ")");
  }
  return *v;
}

void Parser::parse_value(Engine& v) {
  v = parse_enum(parse_engine, engine_name, Engine::Dma, "engine");
}
void Parser::parse_value(std::optional<Engine>& v) {
  v = parse_enum(parse_engine, engine_name, Engine::Dma, "engine");
}
void Parser::parse_value(AluOp& v) {
  v = parse_enum(parse_alu_op, alu_op_name, AluOp::reciprocal, "ALU op");
}
void Parser::parse_value(std::optional<AluOp>& v) {
  v = parse_enum(parse_alu_op, alu_op_name, AluOp::reciprocal, "ALU op");
}
void Parser::parse_value(ActFunc& v) {
  v = parse_enum(parse_act_func, act_func_name, ActFunc::abs, "activation function");
}
void Parser::parse_value(ReduceCmd& v) {
  v = parse_enum(parse_reduce_cmd, reduce_cmd_name, ReduceCmd::reset_reduce, "reduce command");
}
void Parser::parse_value(CmpOp& v) {
  v = parse_enum(parse_cmp_op, cmp_op_name, CmpOp::ge, "comparison");
}

// ---- accesses and operands ----

AccessDim Parser::parse_dim(const TensorInfo& t, size_t k) {
  if (accept(":")) return AccessDim{Expr(0), t.shape[k], 1};
  AccessDim d{parse_expr(), Expr(1), 1};
  if (!accept(":")) return d;
  expect("+", "(a dimension is start:+size or start:+size:step)");
  d.size = parse_expr();
  if (accept(":")) d.step = parse_int64("integer step");
  return d;
}

Access Parser::parse_access() {
  Token name = next();
  if (name.kind != TokKind::Ident) fail(name, "tensor access");
  const TensorInfo* info = lookup_tensor(name.text);
  if (!info) fail(name, "a declared tensor");
  const TensorInfo t = *info;  // by value: nested accesses may declare nothing, but be safe
  Nest nest(*this, name);
  Access a;
  a.tensor = t.id;
  std::string rank_note =
      "(tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) + ")";
  expect("[");
  if (!peek().is("]")) {
    if (t.shape.empty()) fail(peek(), "']' " + rank_note);
    while (true) {
      a.dims.push_back(parse_dim(t, a.dims.size()));
      if (!peek().is(",")) break;
      if (a.dims.size() == t.shape.size()) fail(peek(), "']' " + rank_note);
      next();
    }
  }
  if (!peek().is("]")) fail(peek(), a.dims.size() < t.shape.size() ? "',' or ']'" : "']'");
  if (a.dims.size() < t.shape.size()) fail(peek(), "',' " + rank_note);
  next();

  bool has_perm = false;
  while (peek().is(".")) {
    next();
    Token m = expect_ident("perm, core or indirect");
    bool dup = (m.text == "perm" && has_perm) || (m.text == "core" && a.core) ||
               (m.text == "indirect" && a.indirect);
    if (dup) fail(m, "each of perm, core and indirect at most once");
    if (m.text == "perm") {
      has_perm = true;
      expect("(");
      if (!peek().is(")")) {
        do {
          a.perm.push_back(parse_int("integer dimension"));
        } while (accept(","));
      }
      expect(")");
    } else if (m.text == "core") {
      expect("(");
      a.core = parse_expr();
      expect(")");
    } else if (m.text == "indirect") {
      expect("(");
      Indirect ind;
      ind.dim = parse_int("integer dimension");
      expect(",");
      ind.offsets = std::make_shared<const Access>(parse_access());
      expect(",");
      ind.lo = parse_int64("integer lower bound");
      expect(",");
      ind.hi = parse_int64("integer upper bound");
      expect(")");
      a.indirect = std::move(ind);
    } else {
      fail(m, "perm, core or indirect");
    }
  }
  return a;
}

Operand Parser::parse_operand() {
  const Token& t = peek();
  bool number_word = t.is_ident("nan") || t.is_ident("inf");
  if (t.kind == TokKind::Ident && (!number_word || peek(1).is("["))) return parse_access();
  return Imm{parse_float()};
}

// ---- instructions ----

template <typename I>
void Parser::parse_arguments(I& ins, const Token& op) {
  std::vector<std::string_view> given;
  int positional = 0;
  bool keywords = false;
  FieldLister fields;
  describe(ins, fields);
  std::string op_str(op.text);
  const auto at_end = [this] {  // of the arguments: `@line` or the end of the statement
    return peek().kind == TokKind::Newline || peek().kind == TokKind::End || peek().is("@");
  };
  if (!at_end()) {
    while (true) {
      if (peek().kind == TokKind::Ident && peek(1).is("=")) {
        Token key = next();
        next();
        keywords = true;
        FieldVisitor find{*this, key.text, -1, false, nullptr, 0};
        describe(ins, find);
        if (!find.hit) fail(key, "an attribute of " + op_str + " (" + fields.names + ")");
        if (std::find(given.begin(), given.end(), find.hit) != given.end()) {
          fail(key, "each attribute at most once");
        }
        given.push_back(find.hit);
        FieldVisitor parse{*this, key.text, -1, true, nullptr, 0};
        describe(ins, parse);
      } else {
        if (keywords) fail(peek(), "name=value (positional arguments come first)");
        if (positional >= fields.positional) {
          fail(peek(), "name=value (" + op_str + " takes " + std::to_string(fields.positional) +
                           " positional arguments)");
        }
        FieldVisitor parse{*this, {}, positional++, true, nullptr, 0};
        describe(ins, parse);
        given.push_back(parse.hit);
      }
      if (!accept(",")) break;
    }
  }
  if (!at_end()) fail(peek(), "',', '@line' or end of line");
  FieldLister check;
  check.given = &given;
  describe(ins, check);
  if (check.missing) fail(peek(), "argument '" + std::string(check.missing) + "' of " + op_str);
}

void Parser::parse_instruction(const Token& op) {
  std::optional<Instruction> ins = make_instruction(op.text);
  if (!ins) fail(op, loop_vars_.empty() ? kTopStatements : kLoopStatements);
  instr_pos_.push_back(pos_of(op));
  std::visit([&](auto& i) { parse_arguments(i, op); }, *ins);
  instr_lines_.push_back(peek().is("@") ? parse_line_annotation() : 0);
  expect_end_of_statement();
  builder_->emit(std::move(*ins));
}

}  // namespace nkir
}  // namespace ncv
