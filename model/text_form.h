// The .nkir text form of a Program (DESIGN.md §2.7): print(Program) and parse(text), with an
// exact round trip: parse_program(print_program(p)) == p for every valid Program. The grammar
// is documented in model/NKIR.md.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "model/program.h"

namespace ncv {

std::string print_program(const Program& p);
// One instruction on one line (no newline), as it appears in the program text.
std::string print_instruction(const Program& p, const Instruction& ins);
std::string print_access(const Program& p, const Access& a);

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

}  // namespace ncv
