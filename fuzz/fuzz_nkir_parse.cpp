// fuzz_nkir_parse (fuzz/README.md): arbitrary bytes into the .nkir parser.
//
// Oracles:
//   * the parser never crashes and throws nothing but ParseError (a std::out_of_range, a
//     bad_alloc from an absurd size or any other escaping exception is a bug, as is UB, which the
//     sanitizers of the fuzz build catch);
//   * text it accepts is a Program whose printed form parses again (the printer only writes
//     what the parser accepts), to an identical Program (Program::operator==, which compares
//     float immediates bit for bit), and printing that gives the same text again;
//   * the same bytes as a standalone expression: accepted expressions print (Expr::str) and
//     re-parse to the identical Expr.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz/support/fuzz_check.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace {

constexpr const char* kTarget = "fuzz_nkir_parse";

void check_program(std::string_view text) {
  ncv::Program p;
  try {
    p = ncv::parse_program(text, "fuzz.nkir");
  } catch (const ncv::ParseError&) {
    return;  // rejected: the expected outcome for almost every input
  } catch (const std::exception& e) {
    ncv::fuzz::oracle_failure(kTarget,
                              std::string("parse_program threw a non-ParseError: ") + e.what());
  }
  const std::string printed = ncv::print_program(p);
  ncv::Program again;
  try {
    again = ncv::parse_program(printed, "printed.nkir");
  } catch (const std::exception& e) {
    ncv::fuzz::oracle_failure(kTarget, std::string("printed program does not parse: ") + e.what() +
                                           "\n--- printed ---\n" + printed);
  }
  NCV_FUZZ_CHECK(again == p, kTarget,
                 "parse(print(p)) != p\n--- printed ---\n" + printed + "--- reprinted ---\n" +
                     ncv::print_program(again));
  const std::string reprinted = ncv::print_program(again);
  NCV_FUZZ_CHECK(reprinted == printed, kTarget,
                 "print(parse(print(p))) != print(p)\n--- printed ---\n" + printed +
                     "--- reprinted ---\n" + reprinted);
}

void check_expr(std::string_view text) {
  ncv::Expr e;
  try {
    e = ncv::parse_expr(text);
  } catch (const ncv::ParseError&) {
    return;
  } catch (const std::exception& ex) {
    ncv::fuzz::oracle_failure(kTarget,
                              std::string("parse_expr threw a non-ParseError: ") + ex.what());
  }
  const std::string printed = e.str();
  ncv::Expr again;
  try {
    again = ncv::parse_expr(printed);
  } catch (const std::exception& ex) {
    ncv::fuzz::oracle_failure(kTarget,
                              "printed expression '" + printed + "' does not parse: " + ex.what());
  }
  NCV_FUZZ_CHECK(again == e, kTarget,
                 "parse_expr(str(e)) != e: '" + printed + "' reprints as '" + again.str() + "'");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_program(text);
  check_expr(text);
  return 0;
}
