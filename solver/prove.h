// Every obligation class of a Program in one call: index bounds, ISA rules and
// allocation, for one generation. What `ncverify prove` and the prove benchmark run.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

inline constexpr ObligationClass kObligationClasses[] = {
    ObligationClass::bounds, ObligationClass::isa_rules, ObligationClass::allocation};

// Bounds, then ISA rules, then allocation obligations of `p` for options.hw.
std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
