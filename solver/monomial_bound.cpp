#include "solver/monomial_bound.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace ncv::solver {

namespace {

// Thrown when a number grows past kLimit: the fast path gives up (not proved).
struct TooLarge {};

constexpr Int128 kLimit = Int128(1) << 100;

// Polynomials beyond this many monomials are not expanded further (not proved).
constexpr size_t kMaxMonomials = 4096;

Int128 checked(Int128 v) {
  if (v > kLimit || v < -kLimit) throw TooLarge{};
  return v;
}
Int128 mul(Int128 a, Int128 b) {
  Int128 r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw TooLarge{};
  return checked(r);
}
Int128 add(Int128 a, Int128 b) {
  return checked(a + b);  // both within 2^100: no overflow
}
Int128 gcd(Int128 a, Int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    const Int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// An exact rational n / d with d > 0, in lowest terms.
struct Rat {
  Int128 n = 0, d = 1;
};
Rat make(Int128 n, Int128 d) {
  if (d < 0) n = -n, d = -d;
  const Int128 g = gcd(n, d);
  if (g > 1) n /= g, d /= g;
  return {n, d};
}
Rat operator+(Rat a, Rat b) {
  return make(add(mul(a.n, b.d), mul(b.n, a.d)), mul(a.d, b.d));
}
Rat operator*(Rat a, Rat b) {
  return make(mul(a.n, b.n), mul(a.d, b.d));
}
Rat operator-(Rat a) {
  return {-a.n, a.d};
}
bool operator<(Rat a, Rat b) {
  return mul(a.n, b.d) < mul(b.n, a.d);
}

// A product of atoms, sorted (a power repeats its atom); empty for the constant 1.
using Monomial = std::vector<uint32_t>;
// Sum of coefficient * monomial; zero coefficients are dropped.
using Poly = std::map<Monomial, Rat>;

Poly constant(Rat c) {
  Poly p;
  if (c.n != 0) p.emplace(Monomial{}, c);
  return p;
}
Poly plus(Poly a, const Poly& b) {
  for (const auto& [m, c] : b) {
    auto [it, fresh] = a.emplace(m, c);
    if (!fresh) {
      it->second = it->second + c;
      if (it->second.n == 0) a.erase(it);
    }
  }
  return a;
}
Poly scale(const Poly& a, Rat k) {
  Poly out;
  if (k.n == 0) return out;
  for (const auto& [m, c] : a) out.emplace(m, c * k);
  return out;
}
Poly times(const Poly& a, const Poly& b) {
  Poly out;
  for (const auto& [ma, ca] : a) {
    for (const auto& [mb, cb] : b) {
      Monomial m;
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(m));
      out = plus(std::move(out), Poly{{m, ca * cb}});
    }
    if (out.size() > kMaxMonomials) throw TooLarge{};
  }
  return out;
}
bool is_constant(const Poly& p) {
  return p.empty() || (p.size() == 1 && p.begin()->first.empty());
}
Rat constant_of(const Poly& p) {
  return p.empty() ? Rat{} : p.begin()->second;
}

// An Expr's polynomial bounds: low <= e <= up at every point of the domain; up == low when exact.
struct Bounds {
  Poly up, low;
  bool exact = false;
};

// What divisor() says of the constant 0: a power of two large enough for any divisor met.
constexpr int64_t kZeroDivisor = int64_t{1} << 40;

}  // namespace

struct MonomialBounds::Impl {
  Impl(const Program& p, IntervalBounds r) : ranges(std::move(r)) {
    for (const Param& prm : p.params) multiple[intern_symbol(prm.name)] = prm.multiple_of;
    for (const Relation& rel : p.relations) {
      switch (rel.kind) {
        case RelationKind::LE:
          add_relation(rel.lhs, rel.rhs, 0);
          break;
        case RelationKind::LT:
          add_relation(rel.lhs, rel.rhs, 1);  // integers: lhs + 1 <= rhs
          break;
        case RelationKind::EQ:
          add_relation(rel.lhs, rel.rhs, 0);
          add_relation(rel.rhs, rel.lhs, 0);
          break;
        case RelationKind::NE:
        case RelationKind::Divides:
          break;  // no upper bound on a product
      }
    }
  }

  // A relation lhs + slack <= rhs that reads k * m + c <= 0 (k > 0) bounds monomial m by -c / k.
  void add_relation(const Expr& lhs, const Expr& rhs, int64_t slack) {
    try {
      const Poly r =
          plus(plus(bounds(lhs).low, scale(bounds(rhs).up, make(-1, 1))), constant(make(slack, 1)));
      const Monomial* m = nullptr;
      Rat k, c;
      for (const auto& [mono, coeff] : r) {
        if (mono.empty()) {
          c = coeff;
        } else if (m) {
          return;  // two products: no bound on either alone
        } else {
          m = &mono;
          k = coeff;
        }
      }
      if (m && k.n > 0) relation_bounds.emplace_back(*m, -c * make(k.d, k.n));
    } catch (const TooLarge&) {
    } catch (const std::invalid_argument&) {  // a variable without a range
    }
  }

  // A positive integer dividing every value of e (1 when nothing better is known).
  int64_t divisor(const Expr& e) const {
    switch (e.kind()) {
      case ExprKind::Const: {
        const int64_t v = e.const_value();
        if (v == 0) return kZeroDivisor;  // 0 is a multiple of anything
        return v == std::numeric_limits<int64_t>::min() ? 1 : (v < 0 ? -v : v);
      }
      case ExprKind::Var: {
        auto it = multiple.find(e.symbol());
        return it == multiple.end() ? 1 : std::max<int64_t>(it->second, 1);
      }
      case ExprKind::Mul: {
        const int64_t a = divisor(e.lhs()), b = divisor(e.rhs());
        int64_t ab = 0;
        return __builtin_mul_overflow(a, b, &ab) ? a : ab;  // a divides the product too
      }
      case ExprKind::Add:
      case ExprKind::Min:
      case ExprKind::Max:
        return static_cast<int64_t>(gcd(divisor(e.lhs()), divisor(e.rhs())));
      case ExprKind::FloorDiv: {
        const int64_t d = divisor(e.lhs());
        return d % e.divisor() == 0 ? d / e.divisor() : 1;
      }
      case ExprKind::Mod:
        return 1;
    }
    return 1;
  }

  Interval interval_of(const Expr& e) {
    const Interval i = ranges.of(e);
    if (!i.within_int64()) throw TooLarge{};  // clamped: not a bound any more
    return i;
  }

  // e as one opaque atom with its interval.
  Bounds atom(const Expr& e) {
    auto it = atom_of.find(e.node());
    if (it == atom_of.end()) {
      const Interval range = interval_of(e);  // may throw: then nothing is recorded
      keep.push_back(e);
      atoms.push_back(range);
      it = atom_of.emplace(e.node(), static_cast<uint32_t>(atoms.size() - 1)).first;
    }
    const Poly p{{Monomial{it->second}, make(1, 1)}};
    return {p, p, true};
  }

  bool nonneg(const Poly& p) const {
    for (const auto& [m, c] : p) {
      if (c.n < 0) return false;
      for (uint32_t a : m) {
        if (atoms[a].lo < 0) return false;
      }
    }
    return true;
  }

  Bounds bounds(const Expr& e) {
    if (auto it = cache.find(e.node()); it != cache.end()) return it->second;
    Bounds b = compute(e);
    keep.push_back(e);
    cache.emplace(e.node(), b);
    return b;
  }

  Bounds compute(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Const: {
        const Poly c = constant(make(e.const_value(), 1));
        return {c, c, true};
      }
      case ExprKind::Var:
        return atom(e);
      case ExprKind::Add: {
        const Bounds a = bounds(e.lhs()), b = bounds(e.rhs());
        return {plus(a.up, b.up), plus(a.low, b.low), a.exact && b.exact};
      }
      case ExprKind::Mul: {
        const Bounds a = bounds(e.lhs()), b = bounds(e.rhs());
        if (a.exact && b.exact) {
          const Poly p = times(a.up, b.up);
          return {p, p, true};
        }
        for (const auto& [k, x] : {std::pair{a, b}, std::pair{b, a}}) {
          if (!k.exact || !is_constant(k.up)) continue;
          const Rat c = constant_of(k.up);
          Poly up = scale(x.up, c), low = scale(x.low, c);
          if (c.n < 0) return {std::move(low), std::move(up), x.exact};
          return {std::move(up), std::move(low), x.exact};
        }
        // Two non-negative factors: their upper bounds are non-negative too, so the product of
        // the upper bounds bounds the product; the lower bounds multiply only when both are
        // non-negative everywhere, else 0 is the lower bound.
        if (interval_of(e.lhs()).lo >= 0 && interval_of(e.rhs()).lo >= 0) {
          Poly low = nonneg(a.low) && nonneg(b.low) ? times(a.low, b.low) : Poly{};
          return {times(a.up, b.up), std::move(low), false};
        }
        return atom(e);
      }
      case ExprKind::FloorDiv: {
        const Bounds x = bounds(e.lhs());
        const int64_t c = e.divisor();
        const Rat inv = make(1, c);
        if (x.exact && divisor(e.lhs()) % c == 0) {
          const Poly p = scale(x.up, inv);
          return {p, p, true};
        }
        // (x - c + 1) / c <= floor(x / c) <= x / c
        return {scale(x.up, inv), scale(plus(x.low, constant(make(1 - c, 1))), inv), false};
      }
      case ExprKind::Mod:
      case ExprKind::Min:
      case ExprKind::Max:
        return atom(e);
    }
    throw std::logic_error("unhandled expression kind in `" + e.str() + "`");
  }

  // The interval of a product of atoms.
  Interval product(const Monomial& m) {
    Interval r{1, 1};
    for (uint32_t a : m) {
      const Interval& x = atoms[a];
      const Int128 c[] = {mul(r.lo, x.lo), mul(r.lo, x.hi), mul(r.hi, x.lo), mul(r.hi, x.hi)};
      r = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    return r;
  }

  // An upper bound of monomial m over the domain.
  Rat max_of(const Monomial& m) {
    if (auto it = max_cache.find(m); it != max_cache.end()) return it->second;
    Rat best = make(product(m).hi, 1);
    const bool all_nonneg =
        std::all_of(m.begin(), m.end(), [&](uint32_t a) { return atoms[a].lo >= 0; });
    if (all_nonneg) {
      for (const auto& [rm, b] : relation_bounds) {
        // m = common * rest and rm = common * extra with rm <= b, every atom non-negative and
        // extra >= its least value e > 0: common <= b / e, so m <= b / e * max(rest).
        Monomial common, rest, extra;
        std::set_intersection(m.begin(), m.end(), rm.begin(), rm.end(), std::back_inserter(common));
        if (b.n < 0 || common.empty()) continue;
        std::set_difference(m.begin(), m.end(), common.begin(), common.end(),
                            std::back_inserter(rest));
        std::set_difference(rm.begin(), rm.end(), common.begin(), common.end(),
                            std::back_inserter(extra));
        const Int128 least = product(extra).lo;
        if (least <= 0 || !std::all_of(extra.begin(), extra.end(),
                                       [&](uint32_t a) { return atoms[a].lo >= 0; })) {
          continue;
        }
        const Rat candidate = b * make(1, least) * max_of(rest);
        if (candidate < best) best = candidate;
      }
    }
    max_cache.emplace(m, best);
    return best;
  }

  bool le(const Expr& lhs, const Expr& rhs) {
    if (lhs.kind() == ExprKind::Max) return le(lhs.lhs(), rhs) && le(lhs.rhs(), rhs);
    if (rhs.kind() == ExprKind::Min) return le(lhs, rhs.lhs()) && le(lhs, rhs.rhs());
    try {
      const Poly diff = plus(bounds(lhs).up, scale(bounds(rhs).low, make(-1, 1)));
      Rat total;
      for (const auto& [m, c] : diff) {
        total = total + c * (c.n > 0 ? max_of(m) : make(product(m).lo, 1));
      }
      return !(Rat{} < total);
    } catch (const TooLarge&) {
      return false;
    } catch (const std::invalid_argument&) {  // a variable without a range
      return false;
    }
  }

  IntervalBounds ranges;
  std::unordered_map<SymbolId, int64_t> multiple;  // multiple_of of each param
  std::vector<Interval> atoms;
  // The caches are keyed by node; `keep` holds each node alive so that no other expression can
  // take its address while it is cached.
  std::vector<Expr> keep;
  std::unordered_map<const ExprNode*, uint32_t> atom_of;
  std::unordered_map<const ExprNode*, Bounds> cache;
  std::vector<std::pair<Monomial, Rat>> relation_bounds;  // monomial <= bound
  std::map<Monomial, Rat> max_cache;
};

MonomialBounds::MonomialBounds(const Program& p, IntervalBounds ranges)
    : impl_(std::make_unique<Impl>(p, std::move(ranges))) {}

MonomialBounds::~MonomialBounds() = default;

bool MonomialBounds::proves_le(const Expr& lhs, const Expr& rhs) {
  return impl_->le(lhs, rhs);
}

}  // namespace ncv::solver
