// The .nkir printer: a Program, one instruction or one access in canonical text (the grammar is
// model/nkir/NKIR.md; the parser is model/nkir/parse.h). parse_program(print_program(p)) == p
// for every valid Program. It lives with the IR, not the parser, so that error messages of the
// validator and the interpreter can print instructions without depending on the parser.
#pragma once

#include <cstdint>
#include <string>

#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

std::string print_program(const Program& p);
// One instruction on one line (no newline), as it appears in the program text.
std::string print_instruction(const Program& p, const Instruction& ins);
std::string print_access(const Program& p, const Access& a);

// Float immediates: shortest exact decimal, `inf`, `-inf`, `nan` / `-nan` for the canonical quiet
// NaN and `nan(0x7fc00001)` (the full bit pattern) for any other NaN.
inline constexpr uint32_t kCanonicalNaN = 0x7fc00000u;
inline constexpr uint32_t kSignBit = 0x80000000u;
std::string format_float(float f);

}  // namespace ir
}  // namespace ncv
