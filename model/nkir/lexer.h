// Tokens of the .nkir text form (model/nkir/NKIR.md), produced on demand so that the first error in
// text order is the one reported. Internal to the parser; not part of the model's API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace ncv {
inline namespace nkir {

enum class TokKind {
  Ident,    // [A-Za-z_][A-Za-z0-9_]*
  Number,   // starts with a digit; the parser decides whether it is an integer or a float
  Punct,    // ( ) [ ] { } , : . + - * // % = == != < <= and any other ASCII punctuation
  String,   // "..." on one line, escapes \\ \" \xHH kept as written (the parser decodes them)
  Newline,  // end of a statement (newlines inside ( ) and [ ] are whitespace)
  End,      // end of input
  Invalid,  // a byte that starts no token, or a string without its closing quote
};

struct Token {
  TokKind kind = TokKind::End;
  std::string_view text;
  int line = 1;
  int column = 1;

  bool is(std::string_view punct) const { return kind == TokKind::Punct && text == punct; }
  bool is_ident(std::string_view word) const { return kind == TokKind::Ident && text == word; }
  // How the token reads in "got ..." of an error message: 'text', "end of line", "end of file".
  std::string describe() const;
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  // The k-th token from the current position (k small: the parser needs two of lookahead).
  const Token& peek(size_t k = 0);
  Token next();

 private:
  Token lex();
  void skip_space_and_comments();
  char at(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  void advance(size_t n);

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  int bracket_depth_ = 0;  // open ( and [: newlines inside them continue the statement
  std::deque<Token> ahead_;
};

}  // namespace nkir
}  // namespace ncv
