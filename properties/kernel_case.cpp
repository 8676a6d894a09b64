#include "properties/kernel_case.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <stdexcept>

#include "check/replay.h"
#include "kernels/registry.h"
#include "model/ir/domain_search.h"
#include "properties/shrinking_choice.h"

namespace ncv::props {

const Program& KernelUnderTest::program(const kernels::Options& resolved) const {
  auto it = cache->find(resolved);
  if (it == cache->end()) it = cache->emplace(resolved, build(resolved)).first;
  return it->second;
}

KernelUnderTest registered_kernel(const std::string& name) {
  const kernels::Variant* v = kernels::find_variant(name);
  if (!v) throw std::invalid_argument("no registered kernel named '" + name + "'");
  KernelUnderTest k;
  k.name = name;
  k.variant = v;
  k.build = [v](const kernels::Options& o) { return v->build(o); };
  return k;
}

KernelUnderTest broken_kernel(const BugEntry& bug) {
  KernelUnderTest k = registered_kernel(bug.base);
  k.name = bug.name;
  k.fixed = bug.options;
  k.is_bug = true;
  const kernels::Variant* v = k.variant;
  k.build = [v, edit = bug.edit](const kernels::Options& o) { return edit(v->build(o)); };
  return k;
}

Budget default_budget() {
  Budget b;
  if (const char* e = std::getenv("NCV_PROPERTY_MAX_SEQLEN")) {
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    if (*e && !*end && v >= 1) b.max_seqlen = v;
  }
  return b;
}

std::string KernelCase::describe() const {
  std::string s;
  for (const auto& [name, value] : params) s += name + "=" + std::to_string(value) + " ";
  for (const auto& [name, value] : options) s += name + "=" + value + " ";
  return s + "values=" + values.str();
}

void showValue(const KernelCase& c, std::ostream& os) {
  os << c.describe();
}

std::string check_command(const KernelUnderTest& k, const KernelCase& c,
                          const kernels::CaseResult* judged) {
  kernels::CheckInvocation inv;
  inv.target = k.name;
  inv.rebuilds = true;  // a registered kernel or catalogue entry, built for c.options
  kernels::CaseResult as_checked;
  if (judged != nullptr) as_checked = *judged;
  as_checked.exact_oracle = judged == nullptr || judged->exact_oracle;
  as_checked.distribution = c.values.str();  // replayed by `check --values`
  return kernels::check_replay_line(inv, c.options, c.params, as_checked);
}

std::vector<int64_t> edge_values(const Param& p, const Budget& b) {
  const int64_t m = std::max<int64_t>(p.multiple_of, 1);
  const int64_t lo = (p.lo + m - 1) / m * m, hi = p.hi / m * m;
  int64_t cap = hi;
  if (p.name == "seqlen") {
    cap = std::min(hi, std::max(lo, b.max_seqlen));
    if (m > b.max_seqlen && m <= b.two_tiles_up_to) cap = std::min(hi, std::max(cap, lo + m));
  }
  if (p.name == "bs" || p.name == "batch") cap = std::min(hi, std::max(lo, b.max_batch));
  if (p.name == "group" || p.name == "kv_heads") cap = std::min(hi, std::max(lo, b.max_heads));
  const int64_t tile = 128;  // the partition count: the natural tile of every kernel here
  std::vector<int64_t> v = {lo,
                            lo + m,
                            tile - m,
                            tile,
                            tile + m,
                            2 * tile - m,
                            3 * tile,
                            5 * tile,
                            cap,
                            cap - m,
                            lo + (cap - lo) / 2 / m * m,
                            (lo + cap) / 2 / m * m + (m == 1 ? 1 : 0)};
  std::vector<int64_t> legal;
  for (int64_t x : v) {
    if (x >= lo && x <= cap && x % m == 0) legal.push_back(x);
  }
  std::sort(legal.begin(), legal.end());
  legal.erase(std::unique(legal.begin(), legal.end()), legal.end());
  return legal;
}

rc::Gen<KernelCase> gen_case(const KernelUnderTest& k, const Budget& b,
                             std::vector<ValueKind> kinds,
                             const kernels::Options& override_options) {
  return rc::gen::exec([k, b, kinds, override_options] {
    KernelCase c;
    kernels::Options given = k.fixed;
    for (const auto& [name, value] : override_options) {
      if (!k.fixed.count(name)) given[name] = value;
    }
    for (const kernels::OptionSpec& o : k.variant->options) {
      if (given.count(o.name)) continue;
      std::vector<std::string> values = {o.default_value};
      for (const std::string& x : o.values) {
        if (x != o.default_value) values.push_back(x);
      }
      given[o.name] = *shrinking_choice(values);
    }
    // A combination the variant does not offer (Variant::excluded): the drawn options go back to
    // their defaults one at a time, in declaration order, until it is offered (a discard here
    // would also be replayed while shrinking).
    for (const kernels::OptionSpec& o : k.variant->options) {
      if (!k.variant->excluded || k.variant->excluded(given).empty()) break;
      if (!k.fixed.count(o.name) && !override_options.count(o.name))
        given[o.name] = o.default_value;
    }
    c.options = k.variant->resolve(given);
    const Program& p = k.program(c.options);
    std::vector<Param> capped;  // the domain within the budget's caps
    for (const Param& prm : p.params) {
      const std::vector<int64_t> edges = edge_values(prm, b);
      RC_PRE(!edges.empty());
      // Three in four from the edges, the rest anywhere in the (capped) domain.
      const int64_t lo = edges.front(), m = std::max<int64_t>(prm.multiple_of, 1);
      const int64_t steps = (edges.back() - lo) / m;
      c.params[prm.name] = *rc::gen::weightedOneOf<int64_t>(
          {{3, shrinking_choice(edges)},
           {1, rc::gen::map(rc::gen::inRange<int64_t>(0, steps + 1),
                            [lo, m](int64_t i) { return lo + i * m; })}});
      capped.push_back({prm.name, lo, edges.back(), prm.multiple_of});
    }
    // Params drawn one at a time can break a relation between them (attention_tkg's LNC2 batch
    // split needs 129 <= bs * q_head * s_active): the draw moves to the nearest point of the
    // capped domain where every relation holds (a function of the drawn values, so shrinking
    // still walks toward the smallest shape), and is discarded only when there is none.
    if (!in_domain(p.params, p.relations, c.params)) {
      auto legal = nearest_in_domain(capped, p.relations, c.params);
      if (!legal) legal = nearest_in_domain(p.params, p.relations, c.params);
      RC_PRE(legal.has_value());
      c.params = *legal;
    }
    c.values = *gen_value_recipe(kinds);
    return c;
  });
}

}  // namespace ncv::props
