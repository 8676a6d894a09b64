// Real-arithmetic forms of terms: every rounding erased, fp32 operations read as the real
// operations they approximate, exp as a homomorphism (exp(a + b) = exp(a) * exp(b), exp(0) = 1),
// max/min as associative, commutative, idempotent operators left otherwise uninterpreted. Each
// term maps to a canonical form (a sum of monomials with exact rational coefficients over atoms:
// inputs, one exp factor with a canonical argument, inverses of canonical sums, max/min sets);
// two terms with the same RealId are equal in real arithmetic for every input. Different ids
// prove nothing (the normal form is complete only for the polynomial-exp fragment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "equiv/term.h"

namespace ncv::equiv {

using RealId = uint32_t;

// A term outside what the real forms express (a comparison, a bitwise op, an opaque term, a
// coefficient beyond 64-bit rationals, a form larger than the budget): the real layer is unknown.
struct RealFormLimit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Monomials interned before a form is given up: a cap for callers that give no memory limit
// (equiv gives its term budget's rest, which a count of monomials only approximates).
inline constexpr size_t kRealFormMonomials = 400'000'000;

class RealForms {
 public:
  // Limits: the monomials interned, and the bytes the forms hold (a caller's memory budget less
  // what its terms already take); beyond either, form() throws RealFormLimit.
  explicit RealForms(const TermStore& store, size_t max_monomials = kRealFormMonomials,
                     size_t max_bytes = SIZE_MAX);
  ~RealForms();
  RealForms(const RealForms&) = delete;
  RealForms& operator=(const RealForms&) = delete;

  // The canonical form of term t (memoized per term). Throws RealFormLimit.
  RealId form(TermId t);
  std::string str(RealId r, size_t max_chars = 200) const;
  // Whether term t has a form yet (a partial sum inside an accumulation gets none: form()).
  bool has_form(TermId t) const;

  // Terms read as atoms from now on (flags indexed by term id; a term already formed keeps its
  // form; each atom is made when first needed): each stands for its own value, whatever computes
  // it. Sound for any set (an identity over independent atoms holds for every value they take);
  // complete only where both sides reach the same terms, so callers pass the terms two programs
  // share (shared_subterms below).
  void set_opaque(const std::vector<uint8_t>& opaque);
  // Bytes the forms hold.
  size_t bytes() const;

  // Whether exp's argument `arg` (a term) is provably <= 0 in real arithmetic: it is
  // k * (y - max(S)) with k > 0 and y one of S's operands (or a max over a subset of S), the
  // pattern of a row maximum subtracted before exp, including an online softmax's rescale
  // exp(m_old - m_new). False when not shown (not a refutation); throws RealFormLimit when the
  // argument has no form (so a budget is told apart from a pattern not found).
  bool exp_argument_nonpositive(TermId arg);

 private:
  struct Impl;
  Impl* impl_;
};

// Per term, whether it may be -inf (bit 1) or +inf (bit 2) in the real forms' extended reals:
// an infinite constant below it that no max, min or exp takes away (max(-inf, s) and exp(-inf)
// are finite); a NaN constant counts as both. Atoms must be finite (X - X is not 0 at -inf).
std::vector<uint8_t> may_be_infinite(const TermStore& store);

// The terms below both `a` roots and `b` roots (kids, transitively), inputs and constants left
// out (they are atoms or exact values already), and so are those that may be infinite: flags
// indexed by term id.
std::vector<uint8_t> shared_subterms(const TermStore& store, std::span<const TermId> a,
                                     std::span<const TermId> b);

}  // namespace ncv::equiv
