// Every obligation class of a Program in one call: well-formedness, index bounds, ISA rules and
// allocation, for one generation. What `ncverify prove` and the prove benchmark run.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

inline constexpr ObligationClass kObligationClasses[] = {
    ObligationClass::well_formed, ObligationClass::bounds, ObligationClass::isa_rules,
    ObligationClass::allocation};

// Well-formedness, bounds, ISA rules, then allocation obligations of `p` for options.hw. A domain
// that Z3 shows to hold no params at all (ranges, multiple_of and relations contradict each
// other) would make every obligation vacuously true: that throws std::invalid_argument instead.
std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
