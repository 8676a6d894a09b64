// Index-bounds obligations (DESIGN.md §8, issue 7): every index an access touches lies inside its
// tensor, for every param in the domain and every iteration of the enclosing loops. The rule is
// the one Interp::resolve (model/interpreter_access.cpp) applies dynamically, dim by dim: with
// last = start + (size - 1) * step, require start >= 0 and last < shape[dim]; an indirect dim
// adds the declared offset range [lo, hi] to both; an access to a peer core's memory needs
// 0 <= core < grid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hw_config.h"
#include "model/program.h"
#include "solver/verdict.h"

namespace ncv::solver {

struct BoundsObligation {
  uint32_t instruction = 0;  // InstrStmt id
  std::string instruction_text;
  std::string role;         // "write", "read", or "indirect offsets of write/read"
  std::string access_text;  // the access in text form
  std::string tensor;
  int dim = 0;  // tensor dim; -1 for the core index of an access to a peer core
  bool indirect_dim = false;
  Verdict verdict = Verdict::proved;
  std::string unknown_reason;
  std::optional<Counterexample> counterexample;
  std::optional<Replay> replay;

  // One paragraph naming the instruction, access, dim and (for a counterexample) the numbers.
  std::string describe() const;
};

struct ProveOptions {
  unsigned timeout_ms = 10'000;  // per obligation; beyond it the verdict is unknown
  bool replay = true;            // replay every counterexample on the interpreter
  const HwConfig* hw = nullptr;  // for replays; default trn1
};

// Every bounds obligation of every access (written and read, indirect offsets included) of every
// instruction, in program order.
std::vector<BoundsObligation> prove_bounds(const Program& p, const ProveOptions& options = {});

}  // namespace ncv::solver
