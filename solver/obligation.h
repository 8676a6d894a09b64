// One proof obligation and its outcome. Every class of obligation —
// well-formedness, index bounds, ISA rules, allocation, initialization — produces these, so the
// command line, the tests and the benchmark read one shape.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/hw/hw_config.h"
#include "solver/verdict.h"

namespace ncv::solver {

enum class ObligationClass : uint8_t { well_formed, bounds, isa_rules, allocation, initialization };
// "well-formed", "bounds", "isa-rules", "allocation", "initialization"
std::string_view obligation_class_name(ObligationClass c);

struct Obligation {
  ObligationClass cls = ObligationClass::bounds;
  std::string rule;          // the rule checked: "index bounds", "matmul K <= 128", "SBUF capacity"
  int64_t instruction = -1;  // InstrStmt id; -1 for a program-level rule (allocation)
  std::string instruction_text;
  std::string subject;        // what the rule is about: "read x[...] dim 0", "buffer 'acc'"
  std::string tensor;         // the tensor concerned, if one
  std::string role;           // "write", "read", "stationary", ...; empty for program-level rules
  int dim = 0;                // bounds: tensor dim; -1 for the core index of a peer core's memory
  bool indirect_dim = false;  // bounds: the dim is indexed through run-time offsets
  Verdict verdict = Verdict::proved;
  std::string unknown_reason;
  // Unknown because ProveOptions::deadline passed before it was decided (the reason says so);
  // `prove` counts these instead of listing each.
  bool out_of_budget = false;
  // A class's one obligation for what it did not examine once the deadline had passed: how many
  // statements it skipped (out_of_budget is set too). 0 for every other obligation.
  int64_t not_examined = 0;
  std::optional<Counterexample> counterexample;
  std::optional<Replay> replay;
  // The peak of auto-placed buffers (CapacityRule::spillable): a counterexample means the
  // compiler would spill there, which the model does not decide; callers that give verdicts
  // (adopt) count it as unknown, never as a failure of the kernel.
  bool spillable = false;

  // One paragraph naming the rule, the instruction or buffer and (for a counterexample) the
  // numbers and the replay's outcome.
  std::string describe() const;
};

// Kept for the first slice's callers: a bounds obligation is an Obligation of class bounds.
using BoundsObligation = Obligation;

struct ProveOptions {
  unsigned timeout_ms = 10'000;  // per obligation; beyond it the verdict is unknown
  bool replay = true;            // replay every counterexample on the interpreter
  const HwConfig* hw = nullptr;  // the generation whose rules and capacities apply; default trn1
  // When set, nothing is decided after this point: each obligation not settled by then is
  // unknown with out_of_budget set (never proved), and no Z3 query runs past it. The per-query
  // timeout alone bounds nothing: a program's obligations grow with its instructions (the
  // initialization class compares each read with every earlier write). nullopt: no budget.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Z3's resource limit per query (`rlimit`, a count of its internal steps), 0: none. It stops a
  // query at the same step on any machine and load, where a 1 ms timeout can fire only after Z3
  // has entered arithmetic that does not look at its cancel flag (solver/frontier.h).
  unsigned resource_limit = 0;
};

const HwConfig& hw_of(const ProveOptions& o);

// Whether o.deadline has passed.
bool past_deadline(const ProveOptions& o);
// When the next Z3 query must stop (solver/z3_query.h): o.timeout_ms from now, or o.deadline
// when that comes first (a query after the deadline should not be asked at all).
std::chrono::steady_clock::time_point query_deadline(const ProveOptions& o);
// Whether that deadline is o.deadline's: a query that then times out ran out of the budget, not
// of o.timeout_ms.
bool budget_bounds_query(const ProveOptions& o, std::chrono::steady_clock::time_point deadline);
// `o` undecided for lack of time: unknown, out_of_budget, with the reason.
void mark_out_of_budget(Obligation& o);

// Once the deadline has passed, a class stops building obligations (for a long program even the
// ones decided without Z3 cost more than the budget: 28 s for a 200,000-instruction file) and
// reports the statements it skipped as one unknown obligation.
class BudgetCutoff {
 public:
  // `what`: what the class steps over, plural ("instructions", "capacity rules and buffer pairs").
  BudgetCutoff(ObligationClass cls, const char* what, const ProveOptions& options)
      : cls_(cls), what_(what), options_(options) {}
  // Whether to skip the next one: the deadline has passed (then it is counted).
  bool skip();
  // Appends the class's not-examined obligation to `out` when a statement was skipped.
  void report(std::vector<Obligation>& out) const;

 private:
  ObligationClass cls_;
  const char* what_;
  const ProveOptions& options_;
  int64_t skipped_ = 0;
};

}  // namespace ncv::solver
