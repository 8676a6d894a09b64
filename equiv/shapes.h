// What a bounded equivalence check ranges over: the original's option combinations (pinned ones
// fixed) and a small set of shapes from its domain; and whether the rewrite accepts that domain.
#pragma once

#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/interp/interpreter.h"

namespace ncv::equiv {

// Every combination of v's option values with `pinned` fixed (resolved; {pinned} when v is
// null). Throws std::invalid_argument for an unknown option or value.
std::vector<kernels::Options> option_combinations(const kernels::Variant* v,
                                                  const kernels::Options& pinned);

// Whether params lie in p's declared domain (ranges, steps, relations).
bool in_domain(const Program& p, const ParamValues& v);

// "" when the rewrite's params cover the original's domain (each param's range and step);
// otherwise what is missing. Relations between params are not compared.
std::string domain_gap(const Program& original, const Program& rewrite);

}  // namespace ncv::equiv
