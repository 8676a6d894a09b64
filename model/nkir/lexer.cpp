#include "model/nkir/lexer.h"

#include <cstdio>

namespace ncv {
inline namespace nkir {

namespace {

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool ident_char(char c) {
  return ident_start(c) || digit(c);
}
bool hex_digit(char c) {
  return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool ascii_punct(char c) {
  auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && !ident_char(c) && c != '"' && c != '#';
}

void append_escaped(std::string& out, char c) {
  auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    out += buf;
  } else {
    out += c;
  }
}

}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case TokKind::Newline:
      return "end of line";
    case TokKind::End:
      return "end of file";
    default:
      break;
  }
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) append_escaped(out, text[i]);
  if (text.size() > kMax) out += "...";
  out += "'";
  return out;
}

const Token& Lexer::peek(size_t k) {
  while (ahead_.size() <= k) ahead_.push_back(lex());
  return ahead_[k];
}

Token Lexer::next() {
  peek(0);
  Token t = ahead_.front();
  ahead_.pop_front();
  return t;
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < src_.size(); ++i) {
    if (src_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
}

void Lexer::skip_space_and_comments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' ||
        (c == '\n' && bracket_depth_ > 0)) {
      advance(1);
    } else if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n') advance(1);
    } else {
      return;
    }
  }
}

Token Lexer::lex() {
  skip_space_and_comments();
  Token t;
  t.line = line_;
  t.column = column_;
  size_t start = pos_;
  if (pos_ >= src_.size()) {
    t.kind = TokKind::End;
    return t;
  }
  char c = src_[pos_];
  size_t len = 1;
  if (c == '\n') {
    t.kind = TokKind::Newline;
  } else if (ident_start(c)) {
    t.kind = TokKind::Ident;
    while (ident_char(at(pos_ + len))) ++len;
  } else if (digit(c)) {
    // Integers, decimal floats with exponent, and 0x hex (NaN payloads). Trailing identifier
    // characters are swallowed so that `12ab` is reported as one bad number.
    t.kind = TokKind::Number;
    if (c == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'X')) {
      len = 2;
      while (hex_digit(at(pos_ + len))) ++len;
    } else {
      while (digit(at(pos_ + len))) ++len;
      if (at(pos_ + len) == '.' && digit(at(pos_ + len + 1))) {
        ++len;
        while (digit(at(pos_ + len))) ++len;
      }
      char e = at(pos_ + len);
      if (e == 'e' || e == 'E') {
        size_t k = len + 1;
        if (at(pos_ + k) == '+' || at(pos_ + k) == '-') ++k;
        if (digit(at(pos_ + k))) {
          len = k;
          while (digit(at(pos_ + len))) ++len;
        }
      }
    }
    while (ident_char(at(pos_ + len))) ++len;
  } else if (c == '"') {
    // To the closing quote; a backslash keeps the next byte in the string. A string that meets
    // the end of the line or file first is one Invalid token (the parser names it).
    t.kind = TokKind::Invalid;
    while (pos_ + len < src_.size() && src_[pos_ + len] != '\n') {
      char d = src_[pos_ + len];
      if (d == '\\' && pos_ + len + 1 < src_.size() && src_[pos_ + len + 1] != '\n') {
        len += 2;
        continue;
      }
      ++len;
      if (d == '"') {
        t.kind = TokKind::String;
        break;
      }
    }
  } else if (ascii_punct(c)) {
    t.kind = TokKind::Punct;
    char d = at(pos_ + 1);
    if ((c == '/' && d == '/') || (c == '=' && d == '=') || (c == '!' && d == '=') ||
        (c == '<' && d == '=')) {
      len = 2;
    }
    if (c == '(' || c == '[') ++bracket_depth_;
    if ((c == ')' || c == ']') && bracket_depth_ > 0) --bracket_depth_;
  } else {
    t.kind = TokKind::Invalid;
  }
  t.text = src_.substr(start, len);
  advance(len);
  return t;
}

}  // namespace nkir
}  // namespace ncv
