// The order of the default check's work (check/README.md "The default check"): one list over
// (option set x shape role), most valuable first, so that whatever prefix a budget allows covers
// as much as a prefix can: the bug-exposing roles before the others, and option sets in a
// covering order (every value of every option before combinations of values).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/variant.h"

namespace ncv::kernels {

// The fixed shape roles of the sweep (check_sweep.h planned_shapes), most bug-exposing first:
// smallest, one tile + one step, non-power-of-two, several tiles, widest.
const std::vector<std::string>& sweep_roles();
// The first three: the shapes where tail, tile-boundary and indexing bugs show.
bool bug_exposing_role(const std::string& role);

// One unit of work: option set option_sets[set] at role sweep_roles()[role].
struct PlanItem {
  size_t set = 0;
  size_t role = 0;
  bool operator==(const PlanItem&) const = default;
};

// Every (option set, role) pair once, ordered greedily by what each adds to what the items before
// it cover, compared in turn on:
//   1. (role, option, value) triples over the bug-exposing roles: each option value at each of
//      the smallest, one tile + one step and non-power-of-two shapes;
//   2. the same triples over the other roles (several tiles, widest);
//   3. pairs of option values (option=value, option'=value') at any role;
// then the lower role, then the earlier option set. The first item is option_sets[0]'s smallest
// shape; a kernel without options (one empty set) gets its roles in order.
std::vector<PlanItem> plan_order(const std::vector<Options>& option_sets);

}  // namespace ncv::kernels
