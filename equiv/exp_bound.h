// The overflow obligation's pattern read off the terms themselves: exp's argument is a max minus a
// max over a superset, `max(A) + (-max(B))` with A ⊆ B as sets of terms. This is what the real
// forms (real_form.h) also accept, but it needs no polynomial of the operands, so it holds at
// shapes whose scores' real forms outgrow their budget (a 512-key row max of 128-term dot
// products). Sound in fp32 as well as in real arithmetic: max and negation are exact, so the sum
// is x - y with x <= y, and its rounding is <= 0.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "equiv/term.h"

namespace ncv::equiv {

class NegatedMaxPattern {
 public:
  explicit NegatedMaxPattern(const TermStore& store) : ts_(store) {}

  // Whether `arg` (an fp32 term) is add(X, N) in either operand order with N a negated max (-1
  // times a max, or a min of negated maxes: min(-a, -b) = -max(a, b)) over a superset of X's
  // max operands (X's own term when X is not a max). The identity -inf of max (+inf of min) is
  // no operand. False when not shown (not a refutation).
  bool nonpositive(TermId arg);

 private:
  // The operands of the max tree rooted at t (t itself when it is no max), sorted, without -inf.
  const std::vector<TermId>& max_operands(TermId t);
  // The operands of the max that N negates (memoized: a row's negated max is the bias of each
  // of its elements' exp); nullptr when N is no negated max.
  const std::vector<TermId>* negated_max_operands(TermId n);
  bool is_const(TermId t, uint32_t bits) const;

  const TermStore& ts_;
  std::unordered_map<TermId, std::vector<TermId>> memo_;
  std::unordered_map<TermId, std::optional<std::vector<TermId>>> negated_memo_;
};

}  // namespace ncv::equiv
