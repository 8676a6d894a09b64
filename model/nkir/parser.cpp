// The .nkir parser: statements, declarations, scopes and the mapping of validation errors back to
// source positions. Expressions, accesses and instruction arguments are in
// parse_values.cpp. The Program is built through ncv::Builder so that ids are canonical
// exactly as for kernels built in C++.
#include "model/nkir/parser.h"

#include <algorithm>

namespace ncv {
inline namespace nkir {

ParseError::ParseError(std::string f, int l, int c, std::string d)
    : file(std::move(f)), line(l), column(c), detail(std::move(d)) {
  message = file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + detail;
}

Parser::Nest::Nest(Parser& p, const Token& at) : p_(p) {
  p_.enter_nesting(at);
}

void Parser::enter_nesting(const Token& at) {
  if (depth_ >= kMaxNesting) {
    fail(at, "nesting depth at most " + std::to_string(kMaxNesting));
  }
  ++depth_;
}

void Parser::fail(const Token& got, const std::string& expected) const {
  throw ParseError(file_, got.line, got.column, "expected " + expected + ", got " + got.describe());
}

void Parser::fail_at(Pos at, const std::string& detail) const {
  throw ParseError(file_, at.line, at.column, detail);
}

bool Parser::accept(std::string_view punct) {
  if (!peek().is(punct)) return false;
  next();
  return true;
}

Token Parser::expect(std::string_view punct, const std::string& what) {
  if (!peek().is(punct)) {
    std::string e = "'" + std::string(punct) + "'";
    fail(peek(), what.empty() ? e : e + " " + what);
  }
  return next();
}

Token Parser::expect_ident(const std::string& what) {
  if (peek().kind != TokKind::Ident) fail(peek(), what);
  return next();
}

void Parser::expect_keyword(std::string_view word) {
  if (!peek().is_ident(word)) fail(peek(), "'" + std::string(word) + "'");
  next();
}

void Parser::expect_end_of_statement() {
  const Token& t = peek();
  if (t.kind == TokKind::Newline) {
    next();
  } else if (t.kind != TokKind::End) {
    fail(t, "end of line");
  }
}

bool Parser::symbol_visible(std::string_view name) const {
  if (name == kProgramIdParam) return true;
  if (params_.count(std::string(name))) return true;
  return std::find(loop_vars_.begin(), loop_vars_.end(), name) != loop_vars_.end();
}

const Parser::TensorInfo* Parser::lookup_tensor(std::string_view name) const {
  auto it = visible_.find(std::string(name));
  if (it == visible_.end() || it->second.empty()) return nullptr;
  return &tensors_[it->second.back()];
}

void Parser::declare_tensor(const Token& name, TensorRef ref) {
  std::string n(name.text);
  tensors_.push_back(TensorInfo{ref.id(), ref.shape(), n});
  visible_[n].push_back(ref.id());
  scope_names_.back().push_back(n);
}

Program Parser::parse_program() {
  check_symbols_ = true;
  while (peek().kind == TokKind::Newline) next();
  if (!peek().is_ident("kernel")) fail(peek(), "'kernel'");
  Token kw = next();
  kernel_pos_ = pos_of(kw);
  Token name = expect_ident("kernel name");
  expect_end_of_statement();
  builder_.emplace(std::string(name.text));
  scope_names_.emplace_back();
  while (peek().kind == TokKind::Newline) next();
  if (peek().is_ident("options")) {
    next();
    parse_options();
  }
  while (peek().kind == TokKind::Newline) next();
  if (peek().is_ident("source")) {
    next();
    parse_source();
  }

  while (true) {
    while (peek().kind == TokKind::Newline) next();
    const Token& t = peek();
    if (t.kind == TokKind::End) {
      if (!loop_vars_.empty()) fail(t, "'}'");
      break;
    }
    if (t.is("}")) {
      if (loop_vars_.empty()) fail(t, kTopStatements);
      next();
      close_loop();
      expect_end_of_statement();
      continue;
    }
    parse_statement();
  }

  try {
    Program p = builder_->finish();
    p.build_options = std::move(build_options_);
    p.source_file.value = std::move(source_file_);
    set_source_lines(p.body);
    return p;
  } catch (const BuildError& e) {
    fail_at(locate(e), "expected a valid program, got " + e.message);
  } catch (const EvalError& e) {
    fail_at(kernel_pos_, "expected a valid program, got " + e.message);
  }
}

Parser::Pos Parser::locate(const BuildError& e) const {
  // finish() numbers HBM tensors first (declaration order), then buffers in body order, which
  // is text order; instructions are numbered in text order.
  if (e.instruction && *e.instruction < instr_pos_.size()) return instr_pos_[*e.instruction];
  if (e.tensor) {
    size_t t = *e.tensor;
    if (t < hbm_pos_.size()) return hbm_pos_[t];
    if (t - hbm_pos_.size() < buffer_pos_.size()) return buffer_pos_[t - hbm_pos_.size()];
  }
  return kernel_pos_;
}

void Parser::parse_statement() {
  const Token& t = peek();
  if (t.kind != TokKind::Ident) fail(t, loop_vars_.empty() ? kTopStatements : kLoopStatements);
  std::string_view w = t.text;
  bool header = w == "param" || w == "require" || w == "grid" || w == "input" || w == "output" ||
                w == "scratch";
  if (header && !loop_vars_.empty()) fail(t, kLoopStatements);
  if (w == "options") fail(t, "the options line directly after the kernel line, not later");
  if (w == "source") {
    fail(t, "the source line directly after the kernel line (and options line), not later");
  }
  Token kw = next();
  if (w == "param") {
    parse_param();
  } else if (w == "require") {
    parse_require();
  } else if (w == "grid") {
    parse_grid(kw);
  } else if (w == "input") {
    parse_tensor_decl(kw, TensorKind::Input);
  } else if (w == "output") {
    parse_tensor_decl(kw, TensorKind::Output);
  } else if (w == "scratch") {
    parse_tensor_decl(kw, TensorKind::Scratch);
  } else if (w == "buffer") {
    parse_tensor_decl(kw, TensorKind::Buffer);
  } else if (w == "for") {
    parse_for(kw);
  } else {
    parse_instruction(kw);  // reports unknown statements too
  }
}

namespace {

// An option value that is a number: decimal digits, an optional fraction and exponent (what
// `1e-05` or `0.125` look like), nothing else the lexer folds into one Number token (hex, `12ab`).
bool is_decimal(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

void Parser::parse_options() {
  const char* what = "option NAME=VALUE";
  do {
    Token name = expect_ident(what);
    std::string n(name.text);
    if (build_options_.count(n)) fail(name, "an option not already given");
    expect("=", "after option " + n);
    const char* value_what =
        "option value (an identifier, a decimal number or a double-quoted string)";
    std::string value;
    if (accept("-")) value = "-";
    const Token v = peek();
    if (value.empty() && v.kind == TokKind::String) {
      value = decode_string(v, "the option value");
    } else if (value.empty() && v.kind == TokKind::Ident) {
      value = std::string(v.text);
    } else if (v.kind == TokKind::Number && is_decimal(v.text)) {
      value += std::string(v.text);
    } else {
      fail(v, value_what);
    }
    next();
    // A bare value that runs on into more characters (`lnc=2-sprior`): the rest belongs to it,
    // and the printer would have quoted it; say so.
    const Token& after = peek();
    if (after.kind != TokKind::Newline && after.kind != TokKind::End && after.line == v.line &&
        after.column == v.column + static_cast<int>(v.text.size())) {
      fail_at({after.line, after.column},
              "expected option NAME=VALUE or end of line, got " + after.describe() +
                  " (a value that is not one identifier or decimal number is written in double "
                  "quotes: " +
                  n + "=\"...\")");
    }
    build_options_[n] = std::move(value);
  } while (peek().kind == TokKind::Ident);
  if (peek().kind != TokKind::Newline && peek().kind != TokKind::End) {
    fail(peek(), std::string(what) + " or end of line");
  }
  expect_end_of_statement();
}

void Parser::parse_source() {
  const char* what = "file name (a double-quoted string)";
  Token t = peek();
  if (t.kind != TokKind::String) fail(t, what);
  next();
  std::string name = decode_string(t, "the file name");
  if (name.empty()) fail(t, "a non-empty file name");
  source_file_ = std::move(name);
  expect_end_of_statement();
}

std::string Parser::decode_string(const Token& t, const char* where) const {
  std::string out;
  const std::string_view raw = t.text.substr(1, t.text.size() - 2);
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out += raw[i];
      continue;
    }
    // The escapes the printer writes: \\, \" and \xHH (two hex digits).
    const Pos at{t.line, t.column + 1 + static_cast<int>(i)};
    char e = i + 1 < raw.size() ? raw[i + 1] : '\0';
    if (e == '\\' || e == '"') {
      out += e;
      i += 1;
    } else if (e == 'x' && i + 3 < raw.size() && hex(raw[i + 2]) >= 0 && hex(raw[i + 3]) >= 0) {
      out += static_cast<char>(hex(raw[i + 2]) * 16 + hex(raw[i + 3]));
      i += 3;
    } else {
      fail_at(at, "expected an escape (\\\\, \\\" or \\xHH) in " + std::string(where) + ", got '" +
                      std::string(raw.substr(i, 2)) + "'");
    }
  }
  return out;
}

uint32_t Parser::parse_line_annotation() {
  expect("@");
  const Token kw = peek();
  if (!kw.is_ident("line")) fail(kw, "'line' after '@'");
  next();
  const char* what = "line number (a positive integer)";
  const Token at = peek();
  if (at.kind != TokKind::Number) fail(at, what);
  const int64_t line = parse_int64(what);
  if (line < 1 || line > UINT32_MAX) fail(at, "line number in [1, 4294967295]");
  return static_cast<uint32_t>(line);
}

void Parser::set_source_lines(std::vector<Stmt>& body) const {
  for (Stmt& s : body) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      if (i->id < instr_lines_.size()) i->source_line.value = instr_lines_[i->id];
    } else if (auto* l = std::get_if<Loop>(&s.node)) {
      set_source_lines(l->body);
    }
  }
}

void Parser::parse_param() {
  Token name = expect_ident("param name");
  std::string n(name.text);
  if (params_.count(n) || n == kProgramIdParam) fail(name, "a new param name");
  expect_keyword("in");
  expect("[");
  int64_t lo = parse_int64("integer lower bound");
  expect(",");
  Token hi_tok = peek();
  int64_t hi = parse_int64("integer upper bound");
  if (hi < lo) fail(hi_tok, "upper bound >= lower bound");
  expect("]");
  int64_t multiple_of = 1;
  if (peek().is_ident("multiple_of")) {
    next();
    Token m = peek();
    multiple_of = parse_int64("positive integer");
    if (multiple_of < 1) fail(m, "positive integer");
  }
  expect_end_of_statement();
  params_.insert(n);
  builder_->param(n, lo, hi, multiple_of);
}

void Parser::parse_require() {
  Expr lhs = parse_expr();
  const Token& t = peek();
  RelationKind kind;
  if (t.is("<=")) {
    kind = RelationKind::LE;
  } else if (t.is("<")) {
    kind = RelationKind::LT;
  } else if (t.is("==")) {
    kind = RelationKind::EQ;
  } else if (t.is("!=")) {
    kind = RelationKind::NE;
  } else if (t.is_ident("divides")) {
    kind = RelationKind::Divides;
  } else {
    fail(t, "relation (<=, <, ==, != or divides)");
  }
  next();
  Expr rhs = parse_expr();
  expect_end_of_statement();
  builder_->require(kind, lhs, rhs);
}

void Parser::parse_grid(const Token& kw) {
  if (grid_seen_) fail(kw, "at most one grid statement");
  grid_seen_ = true;
  Expr g = parse_expr();
  expect_end_of_statement();
  builder_->grid(g);
}

std::vector<Expr> Parser::parse_shape() {
  Token open = expect("[", "(shape)");
  Nest nest(*this, open);
  std::vector<Expr> shape;
  if (!peek().is("]")) {
    do {
      shape.push_back(parse_expr());
    } while (accept(","));
  }
  expect("]");
  return shape;
}

void Parser::parse_tensor_decl(const Token& kw, TensorKind kind) {
  Token name = expect_ident("tensor name");
  if (lookup_tensor(name.text)) fail(name, "a tensor name not already in use");
  expect(":");
  Token mem = expect_ident(kind == TensorKind::Buffer ? "memory (sbuf or psum)" : "'hbm'");
  Memory memory = Memory::HBM;
  if (kind == TensorKind::Buffer) {
    if (mem.text == "sbuf") {
      memory = Memory::SBUF;
    } else if (mem.text == "psum") {
      memory = Memory::PSUM;
    } else {
      fail(mem, "memory (sbuf or psum)");
    }
  } else if (mem.text != "hbm") {
    fail(mem, "'hbm'");
  }
  const char* dtypes =
      "dtype (fp32, bf16, fp16, fp8_e4m3, fp8_e4m3fn, fp8_e5m2, int32, uint8, uint16, uint32)";
  Token dt = expect_ident(dtypes);
  std::optional<DType> dtype = parse_dtype(dt.text);
  if (!dtype) fail(dt, dtypes);
  std::vector<Expr> shape = parse_shape();

  std::optional<ValueRange> range;
  std::optional<std::vector<Expr>> interface;
  BufferOptions opts;
  bool has_bufs = false;
  const char* clauses = kind == TensorKind::Input    ? "'interface', 'range' or end of line"
                        : kind == TensorKind::Output ? "'interface' or end of line"
                        : kind == TensorKind::Buffer ? "'bufs', 'at' or end of line"
                                                     : "end of line";
  while (peek().kind == TokKind::Ident) {
    const Token& c = peek();
    if ((kind == TensorKind::Input || kind == TensorKind::Output) && c.text == "interface") {
      if (interface) fail(c, "each clause at most once");
      next();
      interface = parse_shape();
    } else if (kind == TensorKind::Input && c.text == "range") {
      if (range) fail(c, "each clause at most once");
      next();
      expect("[");
      int64_t lo = parse_int64("integer lower bound");
      expect(",");
      int64_t hi = parse_int64("integer upper bound");
      expect("]");
      range = ValueRange{lo, hi};
    } else if (kind == TensorKind::Buffer && c.text == "bufs") {
      if (has_bufs) fail(c, "each clause at most once");
      next();
      has_bufs = true;
      opts.bufs = parse_int64("integer number of buffers");
    } else if (kind == TensorKind::Buffer && c.text == "at") {
      if (opts.placement) fail(c, "each clause at most once");
      next();
      Token open = expect("(", "(placement)");
      Nest nest(*this, open);
      Expr partition = parse_expr();
      expect(",");
      Expr offset = parse_expr();
      expect(")");
      opts.placement = Placement{partition, offset};
    } else {
      fail(c, clauses);
    }
  }
  if (peek().kind != TokKind::Newline && peek().kind != TokKind::End) fail(peek(), clauses);
  expect_end_of_statement();

  std::string n(name.text);
  TensorRef ref;
  switch (kind) {
    case TensorKind::Input:
      ref = builder_->input(n, *dtype, shape, range);
      break;
    case TensorKind::Output:
      ref = builder_->output(n, *dtype, shape);
      break;
    case TensorKind::Scratch:
      ref = builder_->scratch(n, *dtype, shape);
      break;
    case TensorKind::Buffer:
      ref = memory == Memory::SBUF ? builder_->sbuf(n, *dtype, shape, opts)
                                   : builder_->psum(n, *dtype, shape, opts);
      break;
  }
  if (interface) builder_->interface_shape(ref, std::move(*interface));
  (kind == TensorKind::Buffer ? buffer_pos_ : hbm_pos_).push_back(pos_of(kw));
  declare_tensor(name, ref);
}

void Parser::parse_for(const Token& kw) {
  Token var = expect_ident("loop variable");
  std::string v(var.text);
  if (symbol_visible(v))
    fail(var, "a loop variable name that is not a param or an enclosing loop's");
  expect_keyword("in");
  Token kind_tok = expect_ident("affine_range or sequential_range");
  LoopKind kind;
  if (kind_tok.text == "affine_range") {
    kind = LoopKind::affine;
  } else if (kind_tok.text == "sequential_range") {
    kind = LoopKind::sequential;
  } else {
    fail(kind_tok, "affine_range or sequential_range");
  }
  expect("(");
  Expr start(0), stop = parse_expr();
  int64_t step = 1;
  if (accept(",")) {
    start = stop;
    stop = parse_expr();
    if (accept(",")) {
      Token step_tok = peek();
      step = parse_int64("positive integer step");
      if (step < 1) fail(step_tok, "positive integer step");
    }
  }
  expect(")");
  expect("{");
  expect_end_of_statement();
  enter_nesting(kw);  // left by close_loop()
  builder_->begin_loop(v, start, stop, step, kind);
  loop_vars_.push_back(v);
  scope_names_.emplace_back();
}

void Parser::close_loop() {
  for (const std::string& n : scope_names_.back()) visible_[n].pop_back();
  scope_names_.pop_back();
  loop_vars_.pop_back();
  builder_->end_loop();
  --depth_;
}

Expr Parser::parse_standalone_expr() {
  PExpr e = parse_sum();
  while (peek().kind == TokKind::Newline) next();
  if (peek().kind != TokKind::End) fail(peek(), "end of expression");
  return e.e;
}

Program parse_program(std::string_view text, std::string_view file) {
  return Parser(text, file).parse_program();
}

Expr parse_expr(std::string_view text) {
  return Parser(text, "<expr>").parse_standalone_expr();
}

}  // namespace nkir
}  // namespace ncv
