// The legal shape nearest to a wanted one: a point of a program's declared domain (every param in
// its range and on its grid, every relation holding) as close as the search finds to values a
// caller picked param by param. The default check's shape roles, the property suite's drawn
// shapes and the baseline's one shape pick each param alone; a relation between params (attention_
// tkg's LNC2 batch split: 129 <= bs * q_head * s_active) can make that pick illegal, and this
// moves it to the nearest legal point instead of refusing or discarding it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/ir/param.h"

namespace ncv {
inline namespace ir {

// Whether `values` (a value for every param) lies in the domain: ranges, grids (multiple_of) and
// relations (a relation that cannot be evaluated does not hold).
bool in_domain(const std::vector<Param>& params, const std::vector<Relation>& relations,
               const std::map<std::string, int64_t>& values);

// The candidate values of param p near `want`, nearest first: `want` snapped onto p's grid, one
// and two grid steps either side, then geometric steps (x1.5, x2, x3, x4, ... and /1.5, /2, ...)
// out to p's bounds, and the bounds themselves; each on the grid and in range, without
// duplicates. Distance is |log2(value / want)|: attention's cost grows with the product of its
// dimensions, so doubling one param costs as much as doubling another.
std::vector<int64_t> values_near(const Param& p, int64_t want);

// The point of the domain nearest to `want` (params missing from it want their lowest value):
// the least total distance (values_near) over the params, found by best-first search over each
// param's candidates; params named in `fixed` keep their wanted value. nullopt when no legal
// point is found within `max_points` evaluated points (a domain with no point near the wanted
// one, or none at all).
std::optional<std::map<std::string, int64_t>> nearest_in_domain(
    const std::vector<Param>& params, const std::vector<Relation>& relations,
    const std::map<std::string, int64_t>& want, const std::set<std::string>& fixed = {},
    int max_points = 20000);

}  // namespace ir
}  // namespace ncv
