// What a bounded equivalence check ranges over: the original's option combinations (pinned ones
// fixed) and a small set of shapes from its domain; and whether the rewrite accepts that domain.
#pragma once

#include <cstddef>
#include <optional>
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

// Every point of p's domain (ranges, grids, relations) when it has at most `max_points` of them,
// in lexicographic order of the params' values; nullopt for a larger domain.
std::optional<std::vector<ParamValues>> whole_domain(const Program& p, size_t max_points);

// The domain, in words ("seqlen in [128, 4096] multiple of 128, d_head in [1, 128]"; "the
// program's one shape" without params).
std::string domain_words(const Program& p);

// "" when the rewrite's params cover the original's domain (each param's range and step);
// otherwise what is missing. Relations between params are not compared.
std::string domain_gap(const Program& original, const Program& rewrite);

}  // namespace ncv::equiv
