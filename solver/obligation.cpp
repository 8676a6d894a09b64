#include "solver/obligation.h"

namespace ncv::solver {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::proved:
      return "proved";
    case Verdict::counterexample:
      return "counterexample";
    case Verdict::unknown:
      return "unknown";
  }
  return "?";
}

std::string_view obligation_class_name(ObligationClass c) {
  switch (c) {
    case ObligationClass::well_formed:
      return "well-formed";
    case ObligationClass::bounds:
      return "bounds";
    case ObligationClass::isa_rules:
      return "isa-rules";
    case ObligationClass::allocation:
      return "allocation";
    case ObligationClass::initialization:
      return "initialization";
  }
  return "?";
}

const HwConfig& hw_of(const ProveOptions& o) {
  return o.hw ? *o.hw : hw_config_trn1();
}

std::string Obligation::describe() const {
  std::string s = std::string(verdict_name(verdict)) + ": [" +
                  std::string(obligation_class_name(cls)) + "] " + rule;
  if (instruction >= 0) {
    s += ", instruction " + std::to_string(instruction) + " `" + instruction_text + "`";
  }
  if (!subject.empty()) s += ", " + subject;
  if (verdict == Verdict::unknown) s += ": " + unknown_reason;
  if (counterexample) {
    s += ": " + counterexample->violated + " with params";
    for (const auto& [name, value] : counterexample->params) {
      s += " " + name + "=" + std::to_string(value);
    }
    if (!counterexample->loop_indices.empty()) {
      s += ", loop indices";
      for (const auto& [name, value] : counterexample->loop_indices) {
        s += " " + name + "=" + std::to_string(value);
      }
    }
  }
  if (replay) {
    s += std::string(replay->reproduced     ? "; replay: reproduced, "
                     : replay->disagreement ? "; replay: SOLVER/INTERPRETER DISAGREEMENT, "
                                            : "; replay: not reproduced, ") +
         replay->detail;
  }
  return s;
}

}  // namespace ncv::solver
