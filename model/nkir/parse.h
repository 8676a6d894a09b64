// The .nkir parser's entry points (the grammar is model/nkir/NKIR.md; the printer is
// model/ir/printer.h). parse_program(print_program(p)) == p for every valid Program.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "model/ir/program.h"

namespace ncv {
inline namespace nkir {

// A parse failure: `file:line:col: expected X, got Y`. Validation failures of a syntactically
// correct program are reported the same way, at the statement that breaks the rule.
struct ParseError : std::exception {
  std::string file;
  int line = 0;
  int column = 0;
  std::string detail;
  std::string message;  // "file:line:col: detail"
  ParseError(std::string f, int l, int c, std::string d);
  const char* what() const noexcept override { return message.c_str(); }
};

// Never crashes on any input (it is a fuzz target); throws ParseError only.
Program parse_program(std::string_view text, std::string_view file = "<input>");
Expr parse_expr(std::string_view text);

}  // namespace nkir
}  // namespace ncv
