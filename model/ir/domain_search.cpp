#include "model/ir/domain_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <tuple>

#include "model/ir/expr.h"

namespace ncv {
inline namespace ir {

namespace {

int64_t step_of(const Param& p) {
  return std::max<int64_t>(p.multiple_of, 1);
}

// The lowest and highest values of p's range on its grid (first > last: no legal value).
std::pair<int64_t, int64_t> grid_bounds(const Param& p) {
  const int64_t m = step_of(p);
  const int64_t first = p.lo >= 0 ? (p.lo + m - 1) / m * m : -((-p.lo) / m * m);
  const int64_t last = p.hi >= 0 ? p.hi / m * m : -((-p.hi + m - 1) / m * m);
  return {first, last};
}

double distance(int64_t value, int64_t want) {
  const double v = static_cast<double>(std::max<int64_t>(value, 1));
  const double w = static_cast<double>(std::max<int64_t>(want, 1));
  return std::fabs(std::log2(v / w));
}

}  // namespace

bool in_domain(const std::vector<Param>& params, const std::vector<Relation>& relations,
               const std::map<std::string, int64_t>& values) {
  Env env;
  for (const Param& p : params) {
    const auto it = values.find(p.name);
    if (it == values.end()) return false;
    const int64_t v = it->second;
    if (v < p.lo || v > p.hi || v % step_of(p) != 0) return false;
    env.set(p.name, v);
  }
  for (const Relation& r : relations) {
    try {
      if (!r.holds(env)) return false;
    } catch (const EvalError&) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> values_near(const Param& p, int64_t want) {
  const std::pair<int64_t, int64_t> bounds = grid_bounds(p);
  const int64_t first = bounds.first, last = bounds.second;
  if (first > last) return {};
  const int64_t m = step_of(p);
  auto snap = [&](double x) {
    const double k = std::round(x / static_cast<double>(m));
    const double clamped = std::clamp(k * static_cast<double>(m), static_cast<double>(first),
                                      static_cast<double>(last));
    return static_cast<int64_t>(clamped) / m * m;
  };
  const int64_t centre = snap(static_cast<double>(want));
  std::vector<int64_t> v = {centre, first, last};
  for (int64_t k = 1; k <= 2; ++k) {
    v.push_back(std::clamp(centre + k * m, first, last));
    v.push_back(std::clamp(centre - k * m, first, last));
  }
  const double base = static_cast<double>(std::max<int64_t>(centre, 1));
  for (double f = 1; f <= static_cast<double>(std::max<int64_t>(last, 1)) * 2; f *= 2) {
    for (double g : {f * 1.5, f * 2}) {
      v.push_back(snap(base * g));
      v.push_back(snap(base / g));
    }
  }
  std::sort(v.begin(), v.end(), [&](int64_t a, int64_t b) {
    return std::make_tuple(distance(a, want), std::llabs(a - want), a) <
           std::make_tuple(distance(b, want), std::llabs(b - want), b);
  });
  v.erase(std::unique(v.begin(), v.end()), v.end());
  // (sorted by distance, equal values are adjacent: their distance and offset are equal too)
  return v;
}

std::optional<std::map<std::string, int64_t>> nearest_in_domain(
    const std::vector<Param>& params, const std::vector<Relation>& relations,
    const std::map<std::string, int64_t>& want, const std::set<std::string>& fixed,
    int max_points) {
  const size_t n = params.size();
  std::vector<std::vector<int64_t>> values(n);
  std::vector<std::vector<double>> cost(n);
  for (size_t i = 0; i < n; ++i) {
    const Param& p = params[i];
    const auto it = want.find(p.name);
    const int64_t w = it != want.end() ? it->second : p.lo;
    values[i] = fixed.count(p.name) ? std::vector<int64_t>{w} : values_near(p, w);
    if (values[i].empty()) return std::nullopt;
    for (int64_t x : values[i]) cost[i].push_back(distance(x, w));
  }
  // Best-first over index vectors: each param's candidates are sorted by distance, so the total
  // grows along every successor and the first legal point popped is the nearest among them.
  using Node = std::pair<double, std::vector<size_t>>;
  std::priority_queue<Node, std::vector<Node>, std::greater<Node>> open;
  std::set<std::vector<size_t>> seen;
  auto total = [&](const std::vector<size_t>& idx) {
    double c = 0;
    for (size_t i = 0; i < n; ++i) c += cost[i][idx[i]];
    return c;
  };
  const std::vector<size_t> start(n, 0);
  open.emplace(total(start), start);
  seen.insert(start);
  std::map<std::string, int64_t> point;
  for (int evaluated = 0; !open.empty() && evaluated < max_points; ++evaluated) {
    const std::vector<size_t> idx = open.top().second;
    open.pop();
    for (size_t i = 0; i < n; ++i) point[params[i].name] = values[i][idx[i]];
    if (in_domain(params, relations, point)) return point;
    for (size_t i = 0; i < n; ++i) {
      if (idx[i] + 1 >= values[i].size()) continue;
      std::vector<size_t> next = idx;
      ++next[i];
      if (seen.insert(next).second) open.emplace(total(next), std::move(next));
    }
  }
  return std::nullopt;
}

}  // namespace ir
}  // namespace ncv
