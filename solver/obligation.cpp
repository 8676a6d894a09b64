#include "solver/obligation.h"

#include <algorithm>

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

bool past_deadline(const ProveOptions& o) {
  return o.deadline && std::chrono::steady_clock::now() >= *o.deadline;
}

std::chrono::steady_clock::time_point query_deadline(const ProveOptions& o) {
  const auto own = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeout_ms);
  return o.deadline ? std::min(own, *o.deadline) : own;
}

bool budget_bounds_query(const ProveOptions& o, std::chrono::steady_clock::time_point deadline) {
  return o.deadline && deadline == *o.deadline;
}

void mark_out_of_budget(Obligation& o) {
  o.verdict = Verdict::unknown;
  o.out_of_budget = true;
  o.unknown_reason = "not decided: the time budget of the proof ran out first";
}

bool BudgetCutoff::skip() {
  if (skipped_ == 0 && !past_deadline(options_)) return false;
  ++skipped_;  // once past, every later statement is skipped without asking the clock
  return true;
}

void BudgetCutoff::report(std::vector<Obligation>& out) const {
  if (skipped_ == 0) return;
  Obligation o;
  o.cls = cls_;
  o.rule = "not examined";
  o.subject = std::to_string(skipped_) + " " + what_ + " and every obligation they carry";
  o.not_examined = skipped_;
  mark_out_of_budget(o);
  out.push_back(std::move(o));
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
  if (counterexample && spillable) {
    s += "; past this peak the compiler's automatic allocation spills to the next memory level "
         "and the kernel still runs (slower): whether it does is the compiler's choice, so this "
         "is not a failure of the kernel";
  }
  return s;
}

}  // namespace ncv::solver
