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

// What the interpreter checks and prove does not: each with the reason. `prove` prints this list,
// so a PROVED verdict never claims more than the four classes.
struct NotCovered {
  const char* check;
  const char* why;
};
inline constexpr NotCovered kNotCovered[] = {
    {"uninitialized reads and outputs left unwritten (uninitialized_read, output_not_written)",
     "which bytes each instruction instance writes is not modelled symbolically"},
    {"input values outside their declared range (value_range)", "they are run-time values"},
    {"carried dependencies between affine-loop iterations (carried_dependency)",
     "the loops' dataflow is not modelled"},
    {"clobbered reads through overlapping placements (clobbered_read)",
     "the placements are proved disjoint; whether a read follows the other write is dataflow"},
    {"the step and host-memory budgets of a run (--max-steps, --memory-budget-mib)",
     "they are limits of one run, not properties of the kernel"},
};

// Well-formedness, bounds, ISA rules, then allocation obligations of `p` for options.hw. A domain
// that Z3 shows to hold no params at all (ranges, multiple_of and relations contradict each
// other) would make every obligation vacuously true: that throws std::invalid_argument instead.
std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
