// Concrete evaluation of terms: the bits every term of a store takes for given kernel inputs,
// computed with the model's own scalar semantics (alu_apply, act_apply, fma, dtype encode). The
// self-check holds it to the interpreter: a program's output terms evaluated on a run's inputs
// give that run's output bits (equiv/tests/term_executor_test.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "equiv/term.h"
#include "model/interp/host_tensor.h"

namespace ncv::equiv {

// Bits of every term 0..store.size()-1 (kids precede parents, so one pass in id order). Inputs
// are looked up by slot name in `inputs`; a missing input or an opaque term evaluates to a quiet
// NaN and is flagged in `undefined` when given.
std::vector<uint32_t> evaluate_terms(const TermStore& store,
                                     const std::map<std::string, HostTensor>& inputs,
                                     std::vector<bool>* undefined = nullptr);

// fp32 value of term t given the bits from evaluate_terms.
float term_value(const TermStore& store, const std::vector<uint32_t>& bits, TermId t);

}  // namespace ncv::equiv
