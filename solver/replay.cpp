#include "solver/replay.h"

#include <string>

#include "model/interp/interpreter.h"

namespace ncv::solver {

Replay replay_counterexample(const Program& p, const Counterexample& cex, CheckKind expected,
                             int64_t instruction, bool data_dependent, const HwConfig* hw,
                             bool needs_values) {
  Replay r;
  RunOptions opts;
  opts.hw = hw;
  // Trace-only runs resolve every access, so they raise bounds errors without computing values;
  // only run-time offsets and the shadow checks of uninitialized reads need the values.
  opts.compute_values = data_dependent || needs_values;
  opts.record_trace = false;
  // An initialization or placement obligation is about the read itself, whether or not the
  // outputs depend on the bytes it gets.
  opts.strict_reads = true;
  RunResult run;
  try {
    run = run_program(p, cex.params, random_inputs(p, cex.params, 1), opts);
  } catch (const InputError& e) {
    r.disagreement = true;
    r.detail = "the interpreter refused the counterexample's params: " + e.message;
    return r;
  } catch (const DynamicError& e) {
    run.error = e;  // a shape below 1 or beyond int64, found while drawing the inputs
  }
  if (run.error && run.error->kind == expected) {
    r.reproduced = true;
    const std::string raised = "the interpreter raised " + std::string(check_kind_name(expected));
    r.detail = instruction < 0 ? raised + ": " + run.error->detail
               : run.error->instruction == instruction
                   ? raised + " at the same instruction: " + run.error->detail
                   : raised + " first at instruction " + std::to_string(run.error->instruction) +
                         ": " + run.error->detail;
    return r;
  }
  // Another error first is not a disagreement (the run stops at its first error, and that error
  // has its own obligation); running clean through a refuted rule is.
  r.disagreement = !data_dependent && !run.error;
  r.detail = run.error ? "the interpreter raised " + std::string(check_kind_name(run.error->kind)) +
                             " instead: " + run.error->message
                       : "the interpreter ran to completion without raising " +
                             std::string(check_kind_name(expected));
  if (data_dependent) {
    r.detail +=
        " (the interpreter sees this failure only with particular run-time values — offsets "
        "read from memory — or when a read follows the other buffer's write; the seeded run "
        "did not produce them, the solver assumes any)";
  }
  return r;
}

}  // namespace ncv::solver
