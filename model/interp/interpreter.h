// Executes a Program with concrete parameter values on physical SBUF/PSUM byte arrays
//: allocation from the allocator, NaN-poisoned fresh memory, every instruction's
// semantics, the always-on dynamic checks, and a trace of executed instruction instances.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/interp/dynamic_error.h"
#include "model/interp/host_tensor.h"
#include "model/interp/trace.h"
#include "model/interp/value_observer.h"
#include "model/ir/program.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace interp {

// Bad input from the user (unknown or missing params, params outside the domain, wrong input
// shapes or dtypes, a run that would exceed the memory budget): the CLI exits 2 on it.
struct InputError : std::exception {
  std::string message;
  explicit InputError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

// The default step budget: far beyond any attention kernel here (sd_attention at seqlen 65536
// takes a few million steps), far below a runaway loop.
inline constexpr int64_t kDefaultMaxSteps = 200'000'000;

struct RunOptions {
  const HwConfig* hw = nullptr;  // default trn1
  // false: trace-only — walks the program, checks bounds/rules/capacity, records the trace, but
  // computes no values and does not track uninitialized reads.
  bool compute_values = true;
  ExecMode mode = ExecMode::fast;
  bool record_trace = true;
  // Host memory the run may use for HBM tensors and on-chip state, checked before allocating.
  int64_t memory_budget_bytes = int64_t{8} << 30;
  // Loop iterations plus instruction instances the run may take (all cores): a run whose count
  // (count_steps) is over it is refused with InputError before anything runs, rather than
  // spinning for hours on an absurd shape. The command line's --max-steps.
  int64_t max_steps = kDefaultMaxSteps;
  // Told about every value-computing step (value runs only; not owned). equiv/ builds terms.
  ValueObserver* observer = nullptr;
  // The order in which the SPMD cores execute their instances within one lockstep step. The
  // lockstep itself (every core's step-k instance before any step-k+1 instance) is the model's
  // synchronisation and stays; the order inside a step is not fixed on hardware, where the
  // cores run concurrently. 0: core order 0, 1, ..., grid-1; 1: the reverse at every step (so
  // seeds 0 and 1 put every pair of cores in both orders at every step); s >= 2: a permutation
  // per step drawn from s and the step number (schedule_order). A program in which no core
  // touches bytes another core writes in the same step gives the same result for every seed;
  // one that does is racy (determinism.h compares runs under seeds 0..N-1).
  uint64_t schedule_seed = 0;
  // An output element no instruction wrote is a dynamic-check failure (output_not_written): a
  // verified kernel defines its whole result. The simulator (`ncverify run
  // --allow-unwritten-outputs`, used by the NKI stand-ins' simulate) lets a kernel that writes
  // only part of an output, as a scatter does, return it: the unwritten elements keep HBM's
  // initial 0xFF bytes (a NaN in every float dtype, -1 or the maximum in the integer ones) and
  // are counted in RunResult::unwritten_output_elements.
  bool allow_unwritten_outputs = false;
  // The seed of the model's own random generator (nl.rand, nisa.dropout: model/semantics/
  // random.h). The hardware's values are not reproducible; these are, for a given seed.
  uint64_t random_seed = 0;
  // Auto-placed buffers whose live peak (model/ir/allocator.h: the compiler's liveness
  // requirement) is over a memory's capacity. false: a capacity failure, the strict model of a
  // program that must fit without spills (the default for bench, fuzz and replay, which measure
  // or reproduce that model). true (check, adopt, the simulator): the Neuron compiler's automatic
  // allocation "inserts spills/reloads to the next level" when live data exceeds a memory
  // (neuroncore-facts.md §4, from the NKI allocation guide), so such a kernel runs on hardware,
  // only slower. The run goes on, computing the values a run with spills computes (spills move
  // bytes, they change none), and RunResult::spill says why the verdict is unknown. An
  // instruction whose own on-chip operands exceed the memory still fails: no allocation holds
  // them at once (the compiler stops with "couldn't be allocated in SB", users-voice.md #37).
  bool spills_allowed = false;
  // A read of bytes the reader's buffer never wrote in its current lifetime (never written, or
  // left there by another buffer). On hardware those bytes hold whatever was there, so reading
  // them is harmless when nothing the kernel produces depends on them (padding a kernel reads
  // with a whole tile and never uses). false (the default): the run goes on; when it made such a
  // read, run_program runs the program again with those bytes holding other contents (a pattern
  // mixed from their addresses, then zeros), and the read fails the run (uninitialized_read /
  // clobbered_read, the first one, with the difference it made) only when a rerun ends
  // differently or writes other outputs; otherwise RunResult::unwritten_read records it. true:
  // the first such read fails the run (prove's replays, which confirm the read itself).
  // Likewise an activation input outside its function's documented range (ISA-NEW: "the
  // hardware output is invalid" there): the run writes the default NaN for it, and under false
  // reruns with other values (RunResult::undefined_activation); under true it keeps the NaN and
  // notes nothing (prove's replays and fuzz_solver confirm the solver's obligations — reads,
  // bounds, rules — none of which is about that value; equiv's observed runs build their terms
  // with act_apply, which gives the same NaN).
  bool strict_reads = false;
};

// The order of the `grid` cores within lockstep step `step` under RunOptions::schedule_seed
// `seed`, written into `order` (resized to grid): a permutation of 0..grid-1, the same for the
// same arguments.
void schedule_order(uint64_t seed, uint64_t step, int grid, std::vector<int>& order);

struct RunResult {
  std::map<std::string, HostTensor> outputs;  // kernel outputs by name
  Trace trace;
  std::optional<DynamicError> error;  // first dynamic-check failure; execution stopped there
  uint64_t instances = 0;             // instruction instances executed (all cores)
  // Under RunOptions::allow_unwritten_outputs: per output with elements never written, how many.
  std::map<std::string, int64_t> unwritten_output_elements;
  // Under RunOptions::spills_allowed: the live auto-placed buffers exceed a memory, so the
  // compiler would spill (kind capacity; the message has the bytes). The values are computed;
  // what the hardware does with the spills (the allocation, the latency) is the compiler's
  // choice, which the model does not make: a verdict resting on this run is unknown, never PASS.
  std::optional<DynamicError> spill;
  // Under RunOptions::strict_reads = false: the first read of bytes the reader's lifetime never
  // wrote, when the run's outcome and outputs do not depend on those bytes (reruns with other
  // contents agreed byte for byte). Not a failure; `run` prints it as a note.
  std::optional<DynamicError> unwritten_read;
  // Likewise (RunOptions::strict_reads = false, no observer): the first activation input outside
  // its function's documented range (kind undefined_result: the instruction, the function, the
  // input, how many), when neither the outputs nor how the run ends depend on the value the
  // hardware writes there (reruns writing other values agreed byte for byte; the outputs are
  // those of the run writing the default NaN). When something does, the run fails with this
  // error (undefined_result, which check reports as unknown) and the difference. A note.
  std::optional<DynamicError> undefined_activation;
};

using ParamValues = std::map<std::string, int64_t>;

// Checks params against the program's domain (every param given, in range, multiple_of,
// relations); throws InputError naming the offending param.
void check_params(const Program& p, const ParamValues& params);

// Seeded random inputs for every kernel input: floats uniform in [-1, 1) rounded to the dtype;
// integers uniform in the declared value range (or [0, 16)). Refuses (InputError) before
// allocating more than the budget.
std::map<std::string, HostTensor> random_inputs(
    const Program& p, const ParamValues& params, uint64_t seed,
    int64_t memory_budget_bytes = RunOptions{}.memory_budget_bytes);

// The well_formed failure of a program at params inside its domain (a dimension < 1, a size
// beyond int64): thrown, before anything runs, by the functions below and reported by
// run_program in RunResult::error.
DynamicError well_formed_error(const Program& p, const ParamValues& params, std::string detail);

// Bytes of all HBM tensors under the given params (overflow-checked; throws DynamicError
// well_formed).
int64_t hbm_bytes(const Program& p, const ParamValues& params);

// Concrete shape of a tensor under the given params (every dimension >= 1, else DynamicError
// well_formed).
std::vector<int64_t> concrete_shape(const Program& p, TensorId t, const ParamValues& params);
// Concrete shapes of every tensor, indexed by TensorId.
std::vector<std::vector<int64_t>> concrete_shapes(const Program& p, const ParamValues& params);

// The steps (loop iterations plus instruction instances, all cores) a run of p at these params
// takes, and the instruction instances among them (the trace's events), counted from the loop
// bounds without running anything; each at most limit + 1 (counting stops once the steps are
// past the limit). run_program refuses a run whose steps are over RunOptions::max_steps before
// it allocates or executes anything.
struct StepCount {
  int64_t steps = 0, instances = 0;
};
StepCount count_steps(const Program& p, const ParamValues& params, int64_t limit);

RunResult run_program(const Program& p, const ParamValues& params,
                      const std::map<std::string, HostTensor>& inputs,
                      const RunOptions& options = {});

}  // namespace interp
}  // namespace ncv
