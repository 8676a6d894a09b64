// The option combinations and shapes a bounded equivalence check runs, and the rewrite's domain
// against the original's.
#include "equiv/shapes.h"

#include <algorithm>
#include <optional>

#include "equiv/equiv.h"
#include "kernels/option_programs.h"

namespace ncv::equiv {

std::vector<kernels::Options> option_combinations(const kernels::Variant* v,
                                                  const kernels::Options& pinned) {
  if (!v) return {pinned};
  return kernels::resolved_combinations(*v, pinned);
}

namespace {

// The partition count: the tile every kernel here cuts its sequence and head dims into.
constexpr int64_t kTile = 128;

// A second value for a param: one tile plus one step for a tiled param (multiple_of > 1); for an
// untiled one, one 128-tile plus an unaligned tail (161) when the range goes past a tile, an
// unaligned value a quarter into the range otherwise (33 for d_head in [1, 128]). Small enough
// that terms stay in the hundreds of megabytes.
int64_t second_value(const Param& p) {
  if (p.multiple_of > 1) return std::min(p.hi, p.lo + p.multiple_of);
  if (p.hi > kTile + 33 && p.lo < kTile) return kTile + 33;
  return std::min(p.hi, p.lo + (p.hi - p.lo) / 4 + 1);
}

}  // namespace

bool in_domain(const Program& p, const ParamValues& v) {
  try {
    check_params(p, v);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

std::optional<std::vector<ParamValues>> whole_domain(const Program& p, size_t max_points) {
  std::vector<std::vector<int64_t>> values;  // per param, its grid points in range
  size_t total = 1;
  for (const Param& q : p.params) {
    const int64_t m = std::max<int64_t>(q.multiple_of, 1);
    const int64_t first = q.lo % m == 0 ? q.lo : q.lo + (m - ((q.lo % m) + m) % m);
    if (first > q.hi) return std::vector<ParamValues>{};  // an empty domain
    const int64_t count = (q.hi - first) / m + 1;
    if (count < 1 || static_cast<uint64_t>(count) > max_points) return std::nullopt;
    total *= static_cast<size_t>(count);
    if (total > max_points) return std::nullopt;
    std::vector<int64_t>& v = values.emplace_back();
    for (int64_t x = first; x <= q.hi; x += m) v.push_back(x);
  }
  std::vector<ParamValues> out;
  std::vector<size_t> at(values.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    ParamValues x;
    for (size_t i = 0; i < values.size(); ++i) x[p.params[i].name] = values[i][at[i]];
    if (in_domain(p, x)) out.push_back(x);
    for (size_t i = values.size(); i-- > 0;) {  // the last param varies fastest
      if (++at[i] < values[i].size()) break;
      at[i] = 0;
    }
  }
  return out;
}

std::string domain_words(const Program& p) {
  if (p.params.empty()) return "the program's one shape (it has no shape params)";
  std::string s;
  for (const Param& q : p.params) {
    if (!s.empty()) s += ", ";
    s += q.name + " in [" + std::to_string(q.lo) + ", " + std::to_string(q.hi) + "]";
    if (q.multiple_of > 1) s += " multiple of " + std::to_string(q.multiple_of);
  }
  if (!p.relations.empty()) s += " (and the domain's relations)";
  return s;
}

std::vector<ParamValues> checked_shapes(const Program& p, const ParamValues& pinned) {
  // A domain of a few points, none pinned: all of them (the bounded proof then covers it).
  if (pinned.empty() || p.params.empty()) {
    if (auto all = whole_domain(p, kWholeDomainPoints); all && !all->empty()) return *all;
  }
  ParamValues base;
  for (const Param& q : p.params) {
    auto it = pinned.find(q.name);
    base[q.name] = it != pinned.end() ? it->second : q.lo;
  }
  check_params(p, base);  // a pinned value outside the domain is bad input
  std::vector<ParamValues> out = {base};
  for (const Param& q : p.params) {
    if (pinned.count(q.name) || q.hi == q.lo) continue;
    ParamValues x = base;
    x[q.name] = second_value(q);
    if (x != base && in_domain(p, x) && std::find(out.begin(), out.end(), x) == out.end()) {
      out.push_back(x);
    }
  }
  return out;
}

std::optional<ParamValues> tested_shape(const Program& p, const ParamValues& pinned) {
  ParamValues x;
  for (const Param& q : p.params) {
    auto it = pinned.find(q.name);
    if (it != pinned.end()) {
      x[q.name] = it->second;
    } else if (q.multiple_of > 1) {
      x[q.name] = std::min(q.hi, q.lo + 4 * q.multiple_of);
    } else if (q.hi > 2 * kTile + 33 && q.lo < kTile) {
      x[q.name] = 2 * kTile + 33;
    } else {
      x[q.name] = std::min(q.hi, q.lo + (q.hi - q.lo) / 4 + 1);
    }
  }
  if (!in_domain(p, x)) return std::nullopt;
  return x;
}

std::string domain_gap(const Program& original, const Program& rewrite) {
  for (const Param& o : original.params) {
    auto it = std::find_if(rewrite.params.begin(), rewrite.params.end(),
                           [&](const Param& r) { return r.name == o.name; });
    if (it == rewrite.params.end()) {
      return "the rewrite has no param '" + o.name + "'";
    }
    if (it->lo > o.lo || it->hi < o.hi || o.multiple_of % it->multiple_of != 0) {
      return "the rewrite accepts " + o.name + " in [" + std::to_string(it->lo) + ", " +
             std::to_string(it->hi) + "] multiple of " + std::to_string(it->multiple_of) +
             ", the original [" + std::to_string(o.lo) + ", " + std::to_string(o.hi) +
             "] multiple of " + std::to_string(o.multiple_of);
    }
  }
  if (rewrite.params.size() != original.params.size()) {
    return "the rewrite has params the original does not";
  }
  return "";
}

}  // namespace ncv::equiv
