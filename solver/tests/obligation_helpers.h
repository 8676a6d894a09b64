// What the solver tests share about a list of obligations: the ones not proved, all of them
// described for a failure message, and proof options for one generation.
#pragma once

#include <string>
#include <vector>

#include "solver/obligation.h"

namespace ncv::solver::testing_helpers {

inline std::vector<Obligation> not_proved(const std::vector<Obligation>& all) {
  std::vector<Obligation> out;
  for (const Obligation& o : all) {
    if (o.verdict != Verdict::proved) out.push_back(o);
  }
  return out;
}

inline std::string describe_all(const std::vector<Obligation>& all) {
  std::string s;
  for (const Obligation& o : all) s += o.describe() + "\n";
  return s;
}

inline ProveOptions on(const HwConfig& hw) {
  ProveOptions o;
  o.hw = &hw;
  return o;
}

}  // namespace ncv::solver::testing_helpers
