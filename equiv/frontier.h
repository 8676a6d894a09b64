// Where two programs' terms part: the structural walk behind the numerics diff (every place the
// terms of an output element differ while their heads agree above it) and the value walk behind
// a counterexample (the first instruction whose concrete value differs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "equiv/term.h"
#include "model/ir/program.h"

namespace ncv::equiv {

// "#id instruction text" for each instruction of a program, by InstrStmt::id.
std::vector<std::string> instruction_labels(const Program& p);

struct TermDifference {
  std::string kind;  // "rounding", "dtype", "accumulation order", "constant", "operation", ...
  TermId original = 0, rewrite = 0;
  // The value walk: the pair just above (the operation that read the parting operands).
  TermId original_above = 0, rewrite_above = 0;
};

// The differences between terms a (original) and b (rewrite), each pair visited once per call
// (a memo keeps shared subterms from being walked twice). At most `limit` entries.
std::vector<TermDifference> term_differences(const TermStore& ts, TermId a, TermId b,
                                             size_t limit = 8);

// Given every term's bits for one input (term_eval.h), the deepest pair under (a, b) whose values
// differ while their operands' values agree or their heads differ: where the values part.
TermDifference first_value_difference(const TermStore& ts, const std::vector<uint32_t>& bits,
                                      TermId a, TermId b);

}  // namespace ncv::equiv
