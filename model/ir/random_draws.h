// Where a program draws random values (rand, dropout: draws_random_values). The model's values
// for those draws are its own generator's (model/semantics/random.h), not the hardware's, so a
// verdict that compares values (check against the oracle, equiv) is unknown for such a program,
// with this reason; dynamic checks (bounds, ISA rules, capacity) do not depend on the values and
// still apply.
#pragma once

#include <optional>
#include <string>

#include "model/ir/program.h"

namespace ncv {
inline namespace ir {

// Why no value comparison of `p` can be trusted: "instruction #3 `rand` (kernel.py:12) draws
// random values; ..." for its first random instruction, or nullopt when it has none.
std::optional<std::string> random_values_reason(const Program& p);

}  // namespace ir
}  // namespace ncv
