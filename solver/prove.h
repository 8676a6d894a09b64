// Every obligation class of a Program in one call: well-formedness, index bounds, ISA rules,
// allocation and initialization, for one generation. What `ncverify prove` and the prove benchmark
// run.
#pragma once

#include <vector>

#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

inline constexpr ObligationClass kObligationClasses[] = {
    ObligationClass::well_formed, ObligationClass::bounds, ObligationClass::isa_rules,
    ObligationClass::allocation, ObligationClass::initialization};

// What a PROVED verdict covers and what it does not, in one line (`prove` ends with it).
inline constexpr const char* kProveCoverage =
    "covers: well-formedness, index bounds, ISA rules, SBUF/PSUM allocation, initialization of "
    "SBUF/PSUM reads, for every shape in the domain; not covered: numerics (ncverify check), "
    "equivalence to another kernel (ncverify equiv)";

// What the interpreter checks and prove does not: each with the reason. `prove` prints this list,
// so a PROVED verdict never claims more than the five classes.
struct NotCovered {
  const char* check;
  const char* why;
};
inline constexpr NotCovered kNotCovered[] = {
    {"uninitialized reads of HBM tensors and outputs left unwritten (uninitialized_read, "
     "output_not_written)",
     "the initialization class models on-chip buffers, whose lifetimes are scopes; HBM writes "
     "span the whole program and every core"},
    {"input values outside their declared range (value_range)", "they are run-time values"},
    {"carried dependencies between affine-loop iterations (carried_dependency)",
     "the loops' dataflow is not modelled"},
    {"clobbered reads through overlapping placements (clobbered_read)",
     "the placements are proved disjoint; whether a read follows the other write is dataflow"},
    {"results the ISA leaves undefined for run-time values (undefined_result): nc_find_index8 / "
     "nc_match_replace8 values absent from the data, sequence_bounds ids that are not "
     "non-negative integers, a Vector accumulator continued (reduce) after an idle select_reduce "
     "or a tensor_scalar_reduce, a quantize_mx group holding NaN or Inf or needing a scale "
     "below 2^-127",
     "they depend on run-time values, or on which instruction used the registers last "
     "(dataflow); range_select's index bound is an isa-rules obligation"},
    {"the MX scale rows (uninitialized_read): nc_matmul_mx's reads and quantize_mx's writes of "
     "the first 4 rows of each quadrant of a scale tile",
     "they are rows of an access, not an access: the interpreter checks them; prove checks "
     "neither those reads nor counts those writes"},
    {"the step and host-memory budgets of a run (--max-steps, --memory-budget-mib)",
     "they are limits of one run, not properties of the kernel"},
};

// Well-formedness, bounds, ISA rules, allocation, then initialization obligations of `p` for
// options.hw. A domain that Z3 shows to hold no params at all (ranges, multiple_of and relations
// contradict each other) would make every obligation vacuously true: that throws
// std::invalid_argument instead. When Z3 cannot tell within options.timeout_ms whether any params
// satisfy the relations, the first obligation is an unknown "non-empty domain" (well-formed
// class), so the result is never "every obligation proved".
std::vector<Obligation> prove_program(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
