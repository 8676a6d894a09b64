// The .nkir recursive-descent parser (grammar: model/nkir/NKIR.md). Internal to the model library:
// the public entry points are parse_program and parse_expr in parse.h.
//
// Split in two files: parser.cpp (statements, declarations, scopes, error mapping) and
// parse_values.cpp (expressions, accesses, operands, literals, instruction arguments).
//
// Robustness (it is a fuzz target): every error is a ParseError; recursion only happens on
// syntactic nesting, which is bounded by kMaxNesting, and left-associative operator chains are
// bounded by kMaxExprDepth so that no Expr tree is deep enough to overflow the stack when it is
// printed, evaluated or freed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/ir/builder.h"
#include "model/nkir/lexer.h"
#include "model/nkir/parse.h"

namespace ncv {
inline namespace nkir {

inline constexpr int kMaxNesting = 128;     // loops + brackets + parentheses + unary minus
inline constexpr int kMaxExprDepth = 1000;  // tree depth of one expression

// What may start a statement, for "expected ..., got ..." messages.
inline constexpr const char* kTopStatements =
    "statement (param, require, grid, input, output, scratch, buffer, for or an instruction)";
inline constexpr const char* kLoopStatements = "buffer, for, '}' or an instruction inside a loop";

class Parser {
 public:
  Parser(std::string_view text, std::string_view file) : lex_(text), file_(file) {}

  Program parse_program();
  Expr parse_standalone_expr();

  // --- used by the instruction-argument visitors (parse_values.cpp) ---
  void parse_value(Access& v) { v = parse_access(); }
  void parse_value(std::optional<Access>& v) { v = parse_access(); }
  void parse_value(Operand& v) { v = parse_operand(); }
  void parse_value(std::optional<Operand>& v) { v = parse_operand(); }
  void parse_value(bool& v);
  void parse_value(int& v) { v = parse_int("integer"); }
  void parse_value(int64_t& v) { v = parse_int64("integer"); }
  void parse_value(Expr& v) { v = parse_expr(); }
  void parse_value(Imm& v) { v = Imm{parse_float()}; }
  void parse_value(std::vector<int64_t>& v);
  void parse_value(Engine& v);
  void parse_value(std::optional<Engine>& v);  // present: pinned
  void parse_value(AluOp& v);
  void parse_value(std::optional<AluOp>& v);
  void parse_value(ActFunc& v);
  void parse_value(ReduceCmd& v);
  void parse_value(CmpOp& v);

 private:
  struct Pos {
    int line = 1;
    int column = 1;
  };
  struct PExpr {  // a parsed expression and an upper bound of its tree depth
    Expr e;
    int depth = 1;
  };
  struct TensorInfo {
    TensorId id = 0;  // the builder's id (canonicalised by finish())
    std::vector<Expr> shape;
    std::string name;
  };
  // RAII nesting counter; throws at the token that opens one level too many.
  class Nest {
   public:
    Nest(Parser& p, const Token& at);
    ~Nest() { --p_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  // Errors: "expected <what>, got <the token>".
  [[noreturn]] void fail(const Token& got, const std::string& expected) const;
  [[noreturn]] void fail_at(Pos at, const std::string& detail) const;
  static Pos pos_of(const Token& t) { return Pos{t.line, t.column}; }
  void enter_nesting(const Token& at);

  const Token& peek(size_t k = 0) { return lex_.peek(k); }
  Token next() { return lex_.next(); }
  bool accept(std::string_view punct);
  Token expect(std::string_view punct, const std::string& what = "");
  Token expect_ident(const std::string& what);
  void expect_keyword(std::string_view word);
  void expect_end_of_statement();

  // Statements (parser.cpp).
  void parse_statement();
  void parse_options();  // the `options` line after the kernel line
  void parse_source();   // the `source "FILE"` line after the kernel and options lines
  // The bytes of a String token: its escapes \\, \" and \xHH decoded; a bad escape is an error
  // naming `where` ("the file name").
  std::string decode_string(const Token& t, const char* where) const;
  uint32_t parse_line_annotation();  // `@line N` at the end of an instruction
  void set_source_lines(std::vector<Stmt>& body) const;
  void parse_param();
  void parse_require();
  void parse_grid(const Token& kw);
  void parse_tensor_decl(const Token& kw, TensorKind kind);
  void parse_for(const Token& kw);
  void close_loop();
  void parse_instruction(const Token& op);
  template <typename I>
  void parse_arguments(I& ins, const Token& op);
  std::vector<Expr> parse_shape();
  void declare_tensor(const Token& name, TensorRef ref);
  const TensorInfo* lookup_tensor(std::string_view name) const;
  bool symbol_visible(std::string_view name) const;
  Pos locate(const BuildError& e) const;

  // Values (parse_values.cpp).
  Expr parse_expr();
  PExpr parse_sum();
  PExpr parse_product();
  PExpr parse_unary();
  PExpr parse_atom();
  void check_depth(const PExpr& e, const Token& at) const;
  Access parse_access();
  AccessDim parse_dim(const TensorInfo& t, size_t k);
  Operand parse_operand();
  float parse_float();
  int64_t parse_int64(const std::string& what);
  int parse_int(const std::string& what);
  template <typename E>
  E parse_enum(std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E), E last,
               const char* what);

  Lexer lex_;
  std::string file_;
  int depth_ = 0;
  bool check_symbols_ = false;  // standalone parse_expr accepts any identifier

  std::optional<Builder> builder_;
  Pos kernel_pos_;
  bool grid_seen_ = false;
  std::map<std::string, std::string> build_options_;  // Program::build_options
  std::string source_file_;                           // Program::source_file
  std::unordered_set<std::string> params_;
  std::vector<std::string> loop_vars_;                 // innermost last
  std::vector<std::vector<std::string>> scope_names_;  // tensor names declared per open scope
  std::vector<TensorInfo> tensors_;                    // by builder id
  std::unordered_map<std::string, std::vector<TensorId>> visible_;  // name -> builder ids
  std::vector<Pos> hbm_pos_, buffer_pos_, instr_pos_;
  // InstrStmt::source_line by instruction in text order (= id order after finish(), as for
  // instr_pos_): set after finish() so that the builder need not know about lines.
  std::vector<uint32_t> instr_lines_;
};

}  // namespace nkir
}  // namespace ncv
