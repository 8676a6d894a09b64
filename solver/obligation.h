// One proof obligation and its outcome. Every class of obligation —
// well-formedness, index bounds, ISA rules, allocation, initialization — produces these, so the
// command line, the tests and the benchmark read one shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
  std::optional<Counterexample> counterexample;
  std::optional<Replay> replay;

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
};

const HwConfig& hw_of(const ProveOptions& o);

}  // namespace ncv::solver
