#include "check/check_plan.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace ncv::kernels {

const std::vector<std::string>& sweep_roles() {
  static const std::vector<std::string> roles = {"smallest", "one tile + one step",
                                                 "non-power-of-two", "several tiles", "widest"};
  return roles;
}

bool bug_exposing_role(const std::string& role) {
  const auto& r = sweep_roles();
  return std::find(r.begin(), r.begin() + 3, role) != r.begin() + 3;
}

std::vector<PlanItem> plan_order(const std::vector<Options>& option_sets) {
  const size_t roles = sweep_roles().size();
  // Each option=value gets an id; each set the sorted ids of its values.
  std::map<std::pair<std::string, std::string>, size_t> ids;
  std::vector<std::vector<size_t>> values(option_sets.size());
  for (size_t s = 0; s < option_sets.size(); ++s) {
    for (const auto& kv : option_sets[s]) {
      const auto it = ids.emplace(kv, ids.size()).first;
      values[s].push_back(it->second);
    }
    std::sort(values[s].begin(), values[s].end());
  }
  const size_t n_values = std::max<size_t>(ids.size(), 1);
  std::vector<char> triple(roles * n_values, 0), pair(n_values * n_values, 0);
  std::vector<PlanItem> left;
  for (size_t s = 0; s < option_sets.size(); ++s) {
    for (size_t r = 0; r < roles; ++r) left.push_back({s, r});
  }
  auto new_triples = [&](const PlanItem& it) {
    int n = 0;
    for (size_t v : values[it.set]) n += triple[it.role * n_values + v] ? 0 : 1;
    return n;
  };
  auto new_pairs = [&](const PlanItem& it) {
    int n = 0;
    const std::vector<size_t>& v = values[it.set];
    for (size_t a = 0; a < v.size(); ++a) {
      for (size_t b = a + 1; b < v.size(); ++b) n += pair[v[a] * n_values + v[b]] ? 0 : 1;
    }
    return n;
  };
  std::vector<PlanItem> order;
  order.reserve(left.size());
  while (!left.empty()) {
    // Key: (new bug-exposing triples, new other triples, new pairs); ties go to the lower role,
    // then the earlier set (the items are in that order, and only a strictly larger key wins).
    size_t best = 0;
    std::tuple<int, int, int> best_key{-1, -1, -1};
    for (size_t i = 0; i < left.size(); ++i) {
      const int t = new_triples(left[i]);
      const bool exposing = bug_exposing_role(sweep_roles()[left[i].role]);
      const int t1 = exposing ? t : 0, t2 = exposing ? 0 : t;
      if (std::make_pair(t1, t2) < std::make_pair(std::get<0>(best_key), std::get<1>(best_key)))
        continue;
      const std::tuple<int, int, int> key{t1, t2, new_pairs(left[i])};
      const bool earlier = left[i].role < left[best].role ||
                           (left[i].role == left[best].role && left[i].set < left[best].set);
      if (key > best_key || (key == best_key && earlier)) {
        best_key = key;
        best = i;
      }
    }
    const PlanItem it = left[best];
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
    for (size_t v : values[it.set]) triple[it.role * n_values + v] = 1;
    const std::vector<size_t>& v = values[it.set];
    for (size_t a = 0; a < v.size(); ++a) {
      for (size_t b = a + 1; b < v.size(); ++b) pair[v[a] * n_values + v[b]] = 1;
    }
    order.push_back(it);
  }
  return order;
}

}  // namespace ncv::kernels
