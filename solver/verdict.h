// The outcome of one proof obligation: proved for every param in the domain and
// every loop iteration, refuted by a concrete counterexample that the interpreter replays, or
// unknown (solver timeout or incompleteness, never counted as proved).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/interp/interpreter.h"

namespace ncv::solver {

enum class Verdict : uint8_t { proved, counterexample, unknown };
std::string_view verdict_name(Verdict v);

// What the interpreter did with a counterexample's params.
struct Replay {
  bool reproduced = false;  // it raised the dynamic error the obligation predicts
  // Not reproduced, and that is a bug in the solver translation or the interpreter. (A
  // data-dependent obligation, e.g. an indirect offset, may legitimately not reproduce with
  // random data: that is reported but is not a disagreement.)
  bool disagreement = false;
  std::string detail;  // the interpreter's error message, or why nothing was raised
};

struct Counterexample {
  ParamValues params;
  std::vector<std::pair<std::string, int64_t>> loop_indices;  // enclosing loops, outermost first
  std::string violated;  // the violated inequality with numbers
};

}  // namespace ncv::solver
