// Real-arithmetic forms of terms (real_form.h): the canonical polynomial of every term, with
// roundings erased, exp read as a homomorphism, inverses normalised by their monomial gcd and
// max/min kept as AC-idempotent atoms. Everything is hash-consed into flat word blocks, because
// an attention kernel's outputs at seqlen 256 are tens of millions of monomials: one heap object
// per monomial (or an interned key per distinct monomial) costs gigabytes; two or three words in
// the polynomial's own record cost a few hundred megabytes.
#include "equiv/real_form.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <unordered_map>

#include "model/ir/instruction.h"
#include "model/numerics/dtype.h"

namespace ncv::equiv {

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

constexpr uint32_t kUnknown = UINT32_MAX;     // memo: not computed yet; "not an atom"
constexpr uint32_t kFailed = UINT32_MAX - 1;  // memo: threw; message in fails
constexpr uint32_t kNoCoef = UINT32_MAX;      // a coefficient that summed to zero
constexpr uint32_t kZeroPoly = 0;             // the empty sum; as an exp argument: no exp factor
constexpr uint32_t kOnePoly = 1;
// -inf and +inf, the extended reals' ends (a running max starts at -inf; exp(-inf) = 0): word
// runs no polynomial has, so these ids are never decoded as one.
constexpr uint32_t kNegInf = 2, kPosInf = 3;
constexpr uint32_t kCoefOne = 0, kCoefMinusOne = 1;

// A polynomial is a run of tokens, its monomials in canonical order, each monomial
// [coef token] [exp token] atom tokens..., its first token flagged kStart. A token is
// id << 3 | start << 2 | tag. The coef token is left out for coefficient 1 (unless the monomial
// would be empty), the exp token for exp(0); an atom of power p != 1 is followed by a word
// p << 3 (low bits zero, so masking kStart never changes it). A monomial x * exp(P) is two words.
constexpr uint32_t kTagAtom = 0, kTagAtomPow = 1, kTagExp = 2, kTagCoef = 3;
constexpr uint32_t kStart = 4;
constexpr int kShift = 3;
constexpr uint32_t kMaxId = (1u << (32 - kShift)) - 1;
constexpr int32_t kMaxPow = (1 << (31 - kShift)) - 1;

inline uint32_t token(uint32_t tag, uint32_t id) {
  return id << kShift | tag;
}

inline uint64_t mix(uint64_t h, uint64_t v) {
  return (std::rotl(h, 23) ^ v) * 0x9e3779b97f4a7c15ull;
}
// murmur3's 64-bit finaliser: every input bit reaches every output bit, so the low bits used as
// table indices are well spread even when ids are small and consecutive.
inline uint64_t fmix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// Append-only word storage in blocks: pointers into it stay valid while it grows (monomials being
// multiplied point at their factors' stored atoms), and growth never copies or doubles.
class Blocks {
 public:
  explicit Blocks(size_t block_words) : block_words_(block_words) {}
  uint32_t* alloc(size_t n) {
    while (block_ < blocks_.size() && used_ + n > caps_[block_]) ++block_, used_ = 0;
    if (block_ == blocks_.size()) {
      const size_t cap = std::max(n, block_words_);
      blocks_.emplace_back(new uint32_t[cap]);
      caps_.push_back(cap);
      words_ += cap;
      used_ = 0;
    }
    uint32_t* p = blocks_[block_].get() + used_;
    used_ += n;
    return p;
  }
  // Reuses the storage (scratch); keeps a few blocks so that the next user allocates nothing.
  void clear() {
    for (size_t b = 4; b < caps_.size(); ++b) words_ -= caps_[b];
    if (blocks_.size() > 4) blocks_.resize(4), caps_.resize(4);
    block_ = 0, used_ = 0;
  }
  // Bytes the blocks hold (allocated, used or not).
  size_t bytes() const { return words_ * sizeof(uint32_t); }

 private:
  size_t block_words_;
  std::vector<std::unique_ptr<uint32_t[]>> blocks_;
  std::vector<size_t> caps_;
  size_t block_ = 0, used_ = 0;
  size_t words_ = 0;  // sum of caps_
};

// A vector that grows by chunks: no element moves, so growing never holds the old and the new
// storage at once (a doubling vector of tens of millions of records would, for a moment).
template <class T>
class ChunkedVector {
 public:
  void push_back(const T& x) {
    if ((size_ & kMask) == 0) chunks_.emplace_back(new T[kMask + 1]);
    chunks_.back()[size_ & kMask] = x;
    ++size_;
  }
  const T& operator[](size_t i) const { return chunks_[i >> kBits][i & kMask]; }
  size_t size() const { return size_; }
  size_t bytes() const { return chunks_.size() * (kMask + 1) * sizeof(T); }

 private:
  static constexpr size_t kBits = 16, kMask = (size_t{1} << kBits) - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

// Hash-consing of word runs with dense ids.
class Interner {
 public:
  Interner() : words_(1u << 20), slots_(1u << 10, 0) {}

  static uint32_t hash_of(std::span<const uint32_t> w) {
    uint64_t h64 = mix(0x243f6a8885a308d3ull, w.size());
    for (uint32_t x : w) h64 = mix(h64, x);
    return static_cast<uint32_t>(fmix(h64));
  }

  uint32_t intern(std::span<const uint32_t> w, bool* fresh = nullptr) {
    const uint32_t h = hash_of(w);
    const size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    for (; slots_[i] != 0; i = (i + 1) & mask) {
      const Rec& r = recs_[slots_[i] - 1];
      if (r.hash == h && r.len == w.size() && std::equal(w.begin(), w.end(), r.words)) {
        if (fresh) *fresh = false;
        return slots_[i] - 1;
      }
    }
    if (recs_.size() >= kMaxId || w.size() >= UINT32_MAX) {
      throw RealFormLimit("real form store beyond 2^29 records");
    }
    uint32_t* p = words_.alloc(w.size());
    std::copy(w.begin(), w.end(), p);
    recs_.push_back({p, static_cast<uint32_t>(w.size()), h});
    slots_[i] = static_cast<uint32_t>(recs_.size());
    if (recs_.size() * 3 > slots_.size() * 2) grow();
    if (fresh) *fresh = true;
    return static_cast<uint32_t>(recs_.size() - 1);
  }
  // The id of run w if it is interned, else UINT32_MAX.
  uint32_t find(std::span<const uint32_t> w) const {
    const uint32_t h = hash_of(w);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask; slots_[i] != 0; i = (i + 1) & mask) {
      const Rec& r = recs_[slots_[i] - 1];
      if (r.hash == h && r.len == w.size() && std::equal(w.begin(), w.end(), r.words)) {
        return slots_[i] - 1;
      }
    }
    return UINT32_MAX;
  }
  std::span<const uint32_t> get(uint32_t id) const { return {recs_[id].words, recs_[id].len}; }
  size_t bytes() const {
    return words_.bytes() + recs_.bytes() + slots_.capacity() * sizeof(uint32_t);
  }

 private:
  struct Rec {
    const uint32_t* words;
    uint32_t len, hash;
  };
  void grow() {
    std::vector<uint32_t> s(slots_.size() * 2, 0);
    const size_t mask = s.size() - 1;
    for (size_t id = 0; id < recs_.size(); ++id) {
      size_t i = recs_[id].hash & mask;
      while (s[i] != 0) i = (i + 1) & mask;
      s[i] = static_cast<uint32_t>(id + 1);
    }
    slots_.swap(s);
  }
  Blocks words_;
  ChunkedVector<Rec> recs_;
  std::vector<uint32_t> slots_;  // open addressing over id + 1 (0: empty), load <= 2/3
};

// Exact rationals over 64 bits: products and sums are formed in 128 bits, reduced, and must fit
// again, else RealFormLimit (a rounded coefficient would make the "equal in R" claim unsound).
struct Rat {
  int64_t num = 0, den = 1;
};

u128 gcd128(u128 a, u128 b) {
  if ((a >> 64) == 0 && (b >> 64) == 0) {
    return std::gcd(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
  }
  while (b != 0) {
    const u128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Rat make_rat(i128 n, i128 d) {
  if (d == 0) throw RealFormLimit("division by zero in a coefficient");
  if (d < 0) n = -n, d = -d;
  const u128 an = n < 0 ? -static_cast<u128>(n) : static_cast<u128>(n);
  const u128 g = gcd128(an, static_cast<u128>(d));
  if (g > 1) n /= static_cast<i128>(g), d /= static_cast<i128>(g);
  constexpr i128 lo = std::numeric_limits<int64_t>::min() + 1;  // keeps -num representable
  constexpr i128 hi = std::numeric_limits<int64_t>::max();
  if (n < lo || n > hi || d > hi) throw RealFormLimit("coefficient beyond 64-bit rationals");
  return {static_cast<int64_t>(n), static_cast<int64_t>(d)};
}

Rat rat_add(Rat a, Rat b) {
  if (a.den == 1 && b.den == 1) return make_rat(i128(a.num) + b.num, 1);
  return make_rat(i128(a.num) * b.den + i128(b.num) * a.den, i128(a.den) * b.den);
}
Rat rat_mul(Rat a, Rat b) {
  return make_rat(i128(a.num) * b.num, i128(a.den) * b.den);
}
Rat rat_inv(Rat a) {
  return make_rat(a.den, a.num);
}

// A finite float is m * 2^e with a 24-bit m: an exact binary fraction if it fits in 64 bits.
Rat rat_from_float(float f) {
  if (f == 0.0f) return {0, 1};
  int e = 0;
  const float m = std::frexp(f, &e);
  int64_t mant = static_cast<int64_t>(std::ldexp(m, 24));
  e -= 24;
  while (e < 0 && (mant & 1) == 0) mant /= 2, ++e;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  const int width = std::bit_width(static_cast<uint64_t>(mant < 0 ? -mant : mant));
  if ((e >= 0 && width + e > 62) || -e > 62) {
    throw RealFormLimit("constant " + std::string(buf) + " beyond 64-bit rationals");
  }
  return e >= 0 ? Rat{mant * (int64_t{1} << e), 1} : Rat{mant, int64_t{1} << -e};
}

std::string rat_str(Rat r) {
  std::string s = std::to_string(r.num);
  if (r.den != 1) s += "/" + std::to_string(r.den);
  return s;
}

enum class AtomKind : uint8_t {
  input,     // [kind, term id]
  max,       // [kind, sorted distinct operand polys...]
  min,       // [kind, sorted distinct operand polys...]
  inv,       // [kind, normalised poly]: 1 / poly
  func,      // [kind | ActFunc << 8, poly]: an uninterpreted activation of poly
  select,    // [kind | reverse << 8, pred is a term (1) or a poly (0), pred, on_true, on_false]
  to_int,    // [kind | DType << 8, poly]: rounding to an integer dtype, left uninterpreted
  constant,  // [kind, fp32 bits]: a finite constant beyond 64-bit rationals, uninterpreted
  opaque,    // [kind, term id]: a term read as an atom (set_opaque)
};

// A monomial being worked on: coefficient, exp argument, and its atom tokens (stored elsewhere:
// in a polynomial's record or in the scratch blocks; kStart may be set on the first).
struct M {
  uint32_t coef = kCoefOne;
  uint32_t exp = kZeroPoly;
  const uint32_t* a = nullptr;
  uint32_t n = 0;  // atom words, power words included
};
struct AtomPow {
  uint32_t atom;
  int32_t pow;
};

// Decodes the atom tokens of m, in atom order.
template <class F>
void for_each_atom(const M& m, F f) {
  for (uint32_t i = 0; i < m.n; ++i) {
    const uint32_t w = m.a[i];
    if ((w & 3) == kTagAtomPow) {
      f(AtomPow{w >> kShift, static_cast<int32_t>(m.a[i + 1]) >> kShift});
      ++i;
    } else {
      f(AtomPow{w >> kShift, 1});
    }
  }
}

// Total order on monomial keys (exp argument, then atoms): canonical, independent of the
// coefficient, so that equal keys sort together and merge.
int cmp_key(const M& x, const M& y) {
  if (x.exp != y.exp) return x.exp < y.exp ? -1 : 1;
  if (x.n != y.n) return x.n < y.n ? -1 : 1;
  for (uint32_t i = 0; i < x.n; ++i) {
    const uint32_t wx = x.a[i] & ~kStart, wy = y.a[i] & ~kStart;
    if (wx != wy) return wx < wy ? -1 : 1;
  }
  return 0;
}
bool key_less(const M& x, const M& y) {
  return cmp_key(x, y) < 0;
}

}  // namespace

struct RealForms::Impl {
  const TermStore& store;
  size_t max_monomials;
  size_t max_bytes;
  size_t monomials = 0;
  Interner coefs, atoms, polys;
  std::vector<uint32_t> memo;                  // term -> poly, kUnknown or kFailed
  std::vector<uint8_t> user_count;             // term -> users (saturating at 2): inlined()
  std::vector<uint8_t> opaque;                 // term -> read as an atom (set_opaque)
  std::unordered_map<TermId, uint32_t> fails;  // term -> index into messages
  std::vector<std::string> messages;
  std::unordered_map<uint32_t, uint32_t> inverses;  // poly -> its inverse
  Blocks scratch{1u << 16};  // atom tokens of monomials made while computing one term

  // exp(a) * exp(b) needs a + b for every product of monomials; online softmax's rescale makes
  // the same sum once per output column, so a small lossy cache turns most of them into a probe.
  struct SumLine {
    uint32_t a = kUnknown, b = kUnknown, r = 0;
  };
  static constexpr int kSumCacheBits = 18;
  std::vector<SumLine> sum_cache = std::vector<SumLine>(size_t{1} << kSumCacheBits);

  // Scratch of the non-reentrant helpers add() and intern_poly().
  std::vector<M> add_a, add_b, add_r;
  std::vector<uint32_t> enc;

  Impl(const TermStore& s, size_t budget, size_t byte_budget)
      : store(s), max_monomials(budget), max_bytes(byte_budget) {
    intern_coef({1, 1});   // kCoefOne
    intern_coef({-1, 1});  // kCoefMinusOne
    polys.intern({});      // kZeroPoly
    const uint32_t one[1] = {token(kTagCoef, kCoefOne) | kStart};
    polys.intern(one);  // kOnePoly
    // Runs without kStart on their first token, so no polynomial's.
    const uint32_t bad[2] = {token(kTagCoef, kCoefOne), token(kTagCoef, kCoefOne)};
    polys.intern(std::span(bad, 1));  // kNegInf
    polys.intern(std::span(bad, 2));  // kPosInf
  }

  // ---- coefficients ----
  uint32_t intern_coef(Rat r) {
    const uint32_t w[4] = {static_cast<uint32_t>(r.num), static_cast<uint32_t>(r.num >> 32),
                           static_cast<uint32_t>(r.den), static_cast<uint32_t>(r.den >> 32)};
    return coefs.intern(w);
  }
  Rat rat(uint32_t c) const {
    const auto w = coefs.get(c);
    return {static_cast<int64_t>(uint64_t(w[0]) | uint64_t(w[1]) << 32),
            static_cast<int64_t>(uint64_t(w[2]) | uint64_t(w[3]) << 32)};
  }
  uint32_t coef_of(Rat r) { return r.num == 0 ? kNoCoef : intern_coef(r); }
  uint32_t coef_mul(uint32_t a, uint32_t b) {
    if (a == kCoefOne) return b;
    if (b == kCoefOne) return a;
    return intern_coef(rat_mul(rat(a), rat(b)));
  }
  uint32_t coef_add(uint32_t a, uint32_t b) { return coef_of(rat_add(rat(a), rat(b))); }
  uint32_t coef_inv(uint32_t a) {
    return a == kCoefOne || a == kCoefMinusOne ? a : intern_coef(rat_inv(rat(a)));
  }

  // ---- monomials ----
  static uint32_t put_atom_token(uint32_t* out, uint32_t atom, int64_t pow) {
    if (pow == 1) {
      out[0] = token(kTagAtom, atom);
      return 1;
    }
    if (pow > kMaxPow || pow < -kMaxPow) throw RealFormLimit("atom power beyond 28 bits");
    out[0] = token(kTagAtomPow, atom);
    out[1] = static_cast<uint32_t>(pow) << kShift;
    return 2;
  }
  // The atom that m's key is (one atom, power 1, no exp), else kUnknown.
  static uint32_t mono_atom(const M& m) {
    return m.exp == kZeroPoly && m.n == 1 && (m.a[0] & 3) == kTagAtom ? m.a[0] >> kShift : kUnknown;
  }

  M mono_mul(const M& x, const M& y) {
    M r;
    r.coef = coef_mul(x.coef, y.coef);
    r.exp = exp_sum(x.exp, y.exp);
    if (y.n == 0 || x.n == 0) {
      r.a = y.n == 0 ? x.a : y.a;
      r.n = y.n == 0 ? x.n : y.n;
      return r;
    }
    // Merge by atom id; a shared atom takes at most the two words its factors gave it.
    uint32_t* out = scratch.alloc(x.n + y.n);
    uint32_t k = 0, i = 0, j = 0;
    auto pow_at = [](const uint32_t* a, uint32_t at) {
      return (a[at] & 3) == kTagAtomPow ? static_cast<int32_t>(a[at + 1]) >> kShift : 1;
    };
    auto width = [](const uint32_t* a, uint32_t at) { return (a[at] & 3) == kTagAtomPow ? 2 : 1; };
    while (i < x.n || j < y.n) {
      const uint32_t ax = i < x.n ? x.a[i] >> kShift : kUnknown;
      const uint32_t ay = j < y.n ? y.a[j] >> kShift : kUnknown;
      if (ax < ay) {
        k += put_atom_token(out + k, ax, pow_at(x.a, i));
        i += width(x.a, i);
      } else if (ay < ax) {
        k += put_atom_token(out + k, ay, pow_at(y.a, j));
        j += width(y.a, j);
      } else {
        const int64_t p = int64_t{pow_at(x.a, i)} + pow_at(y.a, j);
        if (p != 0) k += put_atom_token(out + k, ax, p);
        i += width(x.a, i);
        j += width(y.a, j);
      }
    }
    r.a = out;
    r.n = k;
    return r;
  }
  M mono_inv(const M& x) {
    M r;
    r.coef = coef_inv(x.coef);
    r.exp = x.exp == kZeroPoly ? kZeroPoly : scale(x.exp, kCoefMinusOne);
    uint32_t* out = scratch.alloc(2 * x.n);
    r.a = out;
    for_each_atom(x,
                  [&](AtomPow ap) { r.n += put_atom_token(out + r.n, ap.atom, -int64_t{ap.pow}); });
    return r;
  }
  M atom_mono(uint32_t atom) {
    uint32_t* t = scratch.alloc(1);
    t[0] = token(kTagAtom, atom);
    return M{kCoefOne, kZeroPoly, t, 1};
  }

  // ---- polynomials ----
  void decode(uint32_t p, std::vector<M>& out) const {
    const auto w = polys.get(p);
    for (size_t i = 0; i < w.size(); ++i) {
      const uint32_t t = w[i];
      if (t & kStart) out.push_back(M{});
      M& m = out.back();
      switch (t & 3) {
        case kTagCoef:
          m.coef = t >> kShift;
          break;
        case kTagExp:
          m.exp = t >> kShift;
          break;
        default:
          if (m.n == 0) m.a = w.data() + i;
          const uint32_t width = (t & 3) == kTagAtomPow ? 2 : 1;
          m.n += width;
          i += width - 1;
      }
    }
  }
  // The id of polynomial v (sorted, merged) if it has one, else kUnknown.
  uint32_t find_poly(const std::vector<M>& v) {
    encode(v);
    return polys.find(enc);
  }
  // v's tokens into enc.
  void encode(const std::vector<M>& v) {
    enc.clear();
    for (const M& m : v) {
      const size_t first = enc.size();
      if (m.coef != kCoefOne || (m.exp == kZeroPoly && m.n == 0)) {
        enc.push_back(token(kTagCoef, m.coef));
      }
      if (m.exp != kZeroPoly) enc.push_back(token(kTagExp, m.exp));
      for (uint32_t i = 0; i < m.n; ++i) enc.push_back(m.a[i] & ~kStart);
      enc[first] |= kStart;
    }
  }
  // v: sorted by key, distinct keys, no zero coefficient.
  uint32_t intern_poly(const std::vector<M>& v) {
    encode(v);
    bool fresh = false;
    const uint32_t id = polys.intern(enc, &fresh);
    if (fresh) {
      monomials += v.size();
      if (monomials > max_monomials) throw RealFormLimit("real form larger than the budget");
      if (bytes() > max_bytes) {
        throw RealFormLimit("the real forms outgrow the memory left in the term budget (" +
                            std::to_string(max_bytes >> 20) + " MiB) at this shape");
      }
    }
    return id;
  }
  // Bytes held: the stores, the per-term memo, the caches and the scratch (the hash maps of
  // failures and inverses are small beside them).
  size_t bytes() const {
    return coefs.bytes() + atoms.bytes() + polys.bytes() + memo.capacity() * sizeof(uint32_t) +
           user_count.capacity() + sum_cache.size() * sizeof(SumLine) + scratch.bytes();
  }
  // Sorts by key, merges equal keys, drops zero coefficients; then interns.
  uint32_t normalise(std::vector<M>& v) {
    merge_keys(v);
    return intern_poly(v);
  }
  // Sorts by key, merges equal keys, drops zero coefficients.
  void merge_keys(std::vector<M>& v) {
    std::sort(v.begin(), v.end(), key_less);
    size_t out = 0;
    for (size_t i = 0; i < v.size();) {
      uint32_t c = v[i].coef;
      size_t j = i + 1;
      for (; j < v.size() && cmp_key(v[j], v[i]) == 0; ++j) {
        c = c == kNoCoef ? v[j].coef : coef_add(c, v[j].coef);
      }
      if (c != kNoCoef) {
        v[out] = v[i];
        v[out++].coef = c;
      }
      i = j;
    }
    v.resize(out);
  }
  void check_budget(size_t n) const {
    if (n > max_monomials - std::min(monomials, max_monomials)) {
      throw RealFormLimit("real form larger than the budget");
    }
  }

  uint32_t mono_poly(const M& m) {
    if (m.coef == kNoCoef) return kZeroPoly;
    return intern_poly(std::vector<M>{m});
  }
  uint32_t const_poly(Rat r) { return mono_poly(M{coef_of(r), kZeroPoly, nullptr, 0}); }
  uint32_t atom_poly(uint32_t atom) {
    const uint32_t t[1] = {token(kTagAtom, atom)};
    return mono_poly(M{kCoefOne, kZeroPoly, t, 1});
  }
  uint32_t exp_of(uint32_t p) {
    if (p == kZeroPoly) return kOnePoly;
    return mono_poly(M{kCoefOne, p, nullptr, 0});
  }
  // The atom that polynomial p is (coefficient 1, power 1, no exp), else kUnknown.
  uint32_t poly_atom(uint32_t p) const {
    const auto w = polys.get(p);
    return w.size() == 1 && (w[0] & 3) == kTagAtom ? w[0] >> kShift : kUnknown;
  }

  // a + sign * b (sign: kCoefOne or kCoefMinusOne).
  uint32_t add(uint32_t a, uint32_t b, uint32_t sign = kCoefOne) {
    if (b == kZeroPoly) return a;
    if (a == kZeroPoly && sign == kCoefOne) return b;
    add_a.clear(), add_b.clear(), add_r.clear();
    decode(a, add_a);
    decode(b, add_b);
    size_t i = 0, j = 0;
    while (i < add_a.size() || j < add_b.size()) {
      const int c = i == add_a.size() ? 1 : j == add_b.size() ? -1 : cmp_key(add_a[i], add_b[j]);
      if (c < 0) {
        add_r.push_back(add_a[i++]);
      } else if (c > 0) {
        add_r.push_back(add_b[j]);
        add_r.back().coef = coef_mul(add_b[j++].coef, sign);
      } else {
        const uint32_t s = coef_add(add_a[i].coef, coef_mul(add_b[j].coef, sign));
        if (s != kNoCoef) {
          add_r.push_back(add_a[i]);
          add_r.back().coef = s;
        }
        ++i, ++j;
      }
    }
    return intern_poly(add_r);
  }
  uint32_t exp_sum(uint32_t a, uint32_t b) {
    if (a == kZeroPoly) return b;
    if (b == kZeroPoly) return a;
    if (b < a) std::swap(a, b);
    SumLine& line = sum_cache[((uint64_t{a} * 0x9e3779b97f4a7c15ull ^ b) * 0xc2b2ae3d27d4eb4full) >>
                              (64 - kSumCacheBits)];
    if (line.a == a && line.b == b) return line.r;
    const uint32_t r = add(a, b);
    line = {a, b, r};
    return r;
  }
  uint32_t scale(uint32_t p, uint32_t c) {
    if (c == kCoefOne || p == kZeroPoly) return p;
    std::vector<M> v;
    decode(p, v);
    for (M& m : v) m.coef = coef_mul(m.coef, c);
    return intern_poly(v);  // keys unchanged, so still sorted
  }
  // Appends every product of a's and b's monomials to out (unnormalised).
  void products(uint32_t a, uint32_t b, std::vector<M>& out) {
    std::vector<M> va, vb;
    decode(a, va);
    decode(b, vb);
    check_budget(va.size() * vb.size() + out.size());
    for (const M& x : va) {
      for (const M& y : vb) out.push_back(mono_mul(x, y));
    }
  }
  uint32_t mul(uint32_t a, uint32_t b) {
    if (a == kZeroPoly || b == kZeroPoly) return kZeroPoly;
    if (a == kOnePoly) return b;
    if (b == kOnePoly) return a;
    std::vector<M> v;
    products(a, b, v);
    return normalise(v);
  }

  // 1/q. A monomial inverts exactly. A sum q is g * c0 * q'' with g the monomial gcd (least power
  // of every atom, the exp-argument part common to all monomials) and c0 the first coefficient of
  // q / g; q'' does not change when q is multiplied by any monomial, so 1/q = g^-1 / c0 * INV(q'')
  // lets (C e^-m) / (A e^-m) reduce to C * INV(A) whatever factor the two sides carry.
  uint32_t inverse(uint32_t q) {
    // o / l per output column inverts the same l once per column.
    const auto hit = inverses.find(q);
    if (hit != inverses.end()) return hit->second;
    const uint32_t r = inverse_uncached(q);
    inverses.emplace(q, r);
    return r;
  }
  uint32_t inverse_uncached(uint32_t q) {
    std::vector<M> v;
    decode(q, v);
    if (v.empty()) throw RealFormLimit("inverse of zero");
    if (v.size() == 1) return mono_poly(mono_inv(v[0]));
    // Atom part of the gcd: an atom absent from a monomial counts as power 0.
    std::vector<AtomPow> all, g;
    for (const M& m : v) for_each_atom(m, [&](AtomPow ap) { all.push_back(ap); });
    std::sort(all.begin(), all.end(),
              [](const AtomPow& x, const AtomPow& y) { return x.atom < y.atom; });
    for (size_t i = 0; i < all.size();) {
      size_t j = i;
      int32_t lo = all[i].pow;
      for (; j < all.size() && all[j].atom == all[i].atom; ++j) lo = std::min(lo, all[j].pow);
      if (j - i < v.size()) lo = std::min(lo, 0);  // absent somewhere
      if (lo != 0) g.push_back({all[i].atom, lo});
      i = j;
    }
    // Exp part: the (key, coefficient) pairs of every monomial's exp argument (absent = 0).
    std::vector<M> keep, other;
    decode(v[0].exp, keep);
    for (size_t i = 1; i < v.size() && !keep.empty(); ++i) {
      if (v[i].exp == v[0].exp) continue;
      other.clear();
      decode(v[i].exp, other);
      size_t out = 0;
      for (size_t p = 0, r = 0; p < keep.size() && r < other.size();) {
        const int c = cmp_key(keep[p], other[r]);
        if (c == 0 && keep[p].coef == other[r].coef) keep[out++] = keep[p];
        p += c <= 0, r += c >= 0;
      }
      keep.resize(out);
    }
    const uint32_t common = intern_poly(keep);
    uint32_t* gw = scratch.alloc(2 * g.size());
    M gm{kCoefOne, common, gw, 0};
    for (const AtomPow& ap : g) gm.n += put_atom_token(gw + gm.n, ap.atom, ap.pow);
    const M ginv = mono_inv(gm);
    std::vector<M> rest;
    for (const M& m : v) rest.push_back(mono_mul(m, ginv));
    std::sort(rest.begin(), rest.end(), key_less);
    const uint32_t c0inv = coef_inv(rest[0].coef);
    for (M& m : rest) m.coef = coef_mul(m.coef, c0inv);
    const uint32_t w[2] = {static_cast<uint32_t>(AtomKind::inv), intern_poly(rest)};
    M r = mono_mul(ginv, atom_mono(intern_atom(w)));
    r.coef = c0inv;
    return mono_poly(r);
  }

  // ---- atoms ----
  uint32_t intern_atom(std::span<const uint32_t> w) { return atoms.intern(w); }
  AtomKind atom_kind(uint32_t a) const { return static_cast<AtomKind>(atoms.get(a)[0] & 0xff); }
  // max/min of operand polys: nested atoms of the same kind flattened, sorted, deduplicated.
  uint32_t max_min(AtomKind kind, const std::vector<uint32_t>& operands) {
    std::vector<uint32_t> set;
    for (uint32_t p : operands) {
      const uint32_t a = poly_atom(p);
      if (a != kUnknown && atom_kind(a) == kind) {
        const auto w = atoms.get(a);
        set.insert(set.end(), w.begin() + 1, w.end());
      } else {
        set.push_back(p);
      }
    }
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    if (set.size() == 1) return set[0];
    set.insert(set.begin(), static_cast<uint32_t>(kind));
    return atom_poly(intern_atom(set));
  }

  // ---- terms ----
  [[noreturn]] void limit(TermId t, const std::string& what) const {
    throw RealFormLimit(what + " has no real form (term #" + std::to_string(t) + ": " +
                        store.str(t, 2) + ")");
  }
  static bool is_inf(uint32_t p) { return p == kNegInf || p == kPosInf; }
  // p itself when it is a polynomial; the generic operations never see an infinity.
  uint32_t finite(TermId t, uint32_t p) const {
    if (is_inf(p)) limit(t, "an infinite operand");
    return p;
  }
  // +-inf times a nonzero constant (or another infinity): an infinity of the product's sign.
  uint32_t inf_times(TermId t, uint32_t a, uint32_t b) const {
    auto sign = [&](uint32_t p) {
      if (is_inf(p)) return p == kNegInf ? -1 : 1;
      std::vector<M> v;
      decode(p, v);
      if (v.size() != 1 || v[0].n != 0 || v[0].exp != kZeroPoly) {
        limit(t, "infinity times a non-constant");
      }
      return rat(v[0].coef).num < 0 ? -1 : 1;
    };
    return sign(a) * sign(b) < 0 ? kNegInf : kPosInf;
  }
  // The kids whose forms computing t needs.
  void deps(TermId t, std::vector<TermId>& out) {
    const TermNode& n = store.node(t);
    const auto ks = store.kids(t);
    switch (n.op) {
      case TermOp::transpose_pe: {
        const auto col = store.transpose_column(t);
        if (n.payload < col.size()) out.push_back(col[n.payload]);
        return;
      }
      case TermOp::alu:
        if (static_cast<AluOp>(n.aux) > AluOp::min) return;  // fails without its operands
        if (static_cast<AluOp>(n.aux) == AluOp::add) {
          sum_parts(t, out);
          return;
        }
        if (is_extremum(t)) {
          extremum_operands(t, out);
          return;
        }
        if (const auto i = inlined_factor(t)) {
          sum_parts(ks[*i], out);
          out.push_back(ks[1 - *i]);
          return;
        }
        out.insert(out.end(), ks.begin(), ks.end());
        return;
      case TermOp::fma_chain:  // the operands, not the lists holding them
        sum_parts(t, out);
        return;
      default:
        out.insert(out.end(), ks.begin(), ks.end());
    }
  }
  uint32_t kid(TermId k) const { return memo[k]; }

  // A sum (an accumulation in PSUM: add(add(chain, chain), chain); a chain's init) is formed from
  // all its summands at once: a partial sum used by the next step alone gets no form of its own
  // (at seqlen 512 the partial sums were most of the memory). Inlined: an add, an fma_chain or a
  // float rounding with one user and no form yet.
  bool inlined(TermId k) {
    if (users(k) != 1 || memo[k] != kUnknown || is_opaque(k)) return false;
    const TermNode& n = store.node(k);
    return n.op == TermOp::fma_chain ||
           (n.op == TermOp::alu && static_cast<AluOp>(n.aux) == AluOp::add) ||
           (n.op == TermOp::round && is_float(n.dtype));
  }
  // A max or min fold (a row max reduced element by element) is formed from all its operands at
  // once: a partial max used by the next step alone gets no form of its own (each would be an
  // atom of all operands so far: quadratic in the row's length).
  bool is_extremum(TermId t) const {
    const TermNode& n = store.node(t);
    const auto op = static_cast<AluOp>(n.aux);
    return n.op == TermOp::alu && (op == AluOp::max || op == AluOp::min) &&
           store.kids(t).size() == 2;
  }
  // The operands of extremum t: its kids, through the kids of the same op that are inlined.
  void extremum_operands(TermId t, std::vector<TermId>& out) {
    const uint32_t op = store.node(t).aux;
    std::vector<TermId> todo{t};
    while (!todo.empty()) {
      const TermId x = todo.back();
      todo.pop_back();
      if (x != t && !(is_extremum(x) && store.node(x).aux == op && users(x) == 1 &&
                      memo[x] == kUnknown && !is_opaque(x))) {
        out.push_back(x);
        continue;
      }
      for (TermId k : store.kids(x)) todo.push_back(k);
    }
  }

  // The summands of sum t (an add or an fma_chain): terms added (`added`; `strict` marks a
  // chain's init, which must be finite) and products of a chain (`pairs`).
  struct Summands {
    std::vector<TermId> added;
    std::vector<bool> strict;
    std::vector<std::pair<TermId, TermId>> pairs;
  };
  void summands(TermId t, Summands& s) {
    std::vector<std::pair<TermId, bool>> todo{{t, false}};
    while (!todo.empty()) {
      const auto [x, strict] = todo.back();
      todo.pop_back();
      const TermNode& n = store.node(x);
      if (x != t && !inlined(x)) {
        s.added.push_back(x);
        s.strict.push_back(strict);
      } else if (n.op == TermOp::fma_chain) {
        const FmaParts f = store.fma_parts(x);
        for (size_t i = 0; i < f.a.size(); ++i) s.pairs.emplace_back(f.a[i], f.b[i]);
        todo.emplace_back(f.init, true);
      } else if (n.op == TermOp::round) {
        todo.emplace_back(store.kids(x)[0], strict);
      } else {  // add
        for (TermId k : store.kids(x)) todo.emplace_back(k, strict);
      }
    }
  }
  void sum_parts(TermId t, std::vector<TermId>& out) {
    Summands s;
    summands(t, s);
    out.insert(out.end(), s.added.begin(), s.added.end());
    for (auto [a, b] : s.pairs) out.push_back(a), out.push_back(b);
  }
  // The form of sum t: an infinity among the added terms is the sum (both signs: no form); a
  // chain's operands and init must be finite.
  uint32_t flattened_sum(TermId t) {
    std::vector<M> v;
    const uint32_t inf = sum_monomials(t, t, v);
    return inf != kUnknown ? inf : normalise(v);
  }
  // The monomials of sum `s` (unnormalised) appended to v; or the infinity the sum is (v then
  // unused). `t`: the term being formed, for the messages.
  uint32_t sum_monomials(TermId t, TermId s, std::vector<M>& v) {
    Summands parts;
    summands(s, parts);
    uint32_t inf = kUnknown;
    for (size_t i = 0; i < parts.added.size(); ++i) {
      const uint32_t f = kid(parts.added[i]);
      if (!is_inf(f)) continue;
      if (parts.strict[i]) limit(t, "an infinite operand");
      if (inf != kUnknown && inf != f) limit(t, "inf - inf");
      inf = f;
    }
    for (auto [a, b] : parts.pairs) finite(t, kid(a)), finite(t, kid(b));
    if (inf != kUnknown) return inf;
    for (TermId x : parts.added) decode(kid(x), v);
    for (auto [a, b] : parts.pairs) {
      const uint32_t fa = kid(a), fb = kid(b);
      if (fa != kZeroPoly && fb != kZeroPoly) products(fa, fb, v);
    }
    return kUnknown;
  }
  // a * b with `a` a sum inlined (one user, the product): the sum's monomials times b's, without
  // a form of the sum (PSUM's PV sum scaled by the row sums' reciprocal: the sum is as large as
  // the product).
  uint32_t product_of_sum(TermId t, TermId a, TermId b) {
    std::vector<M> va;
    const uint32_t inf = sum_monomials(t, a, va);
    const uint32_t fb = kid(b);
    if (inf != kUnknown || is_inf(fb)) {
      return inf_times(t, inf != kUnknown ? inf : normalise(va), fb);
    }
    std::vector<M> vb, out;
    decode(fb, vb);
    check_budget(va.size() * vb.size());
    for (const M& x : va) {
      for (const M& y : vb) out.push_back(mono_mul(x, y));
    }
    return normalise(out);
  }
  // The operand of multiply t that is a sum to inline, if one is (the first).
  std::optional<size_t> inlined_factor(TermId t) {
    const TermNode& n = store.node(t);
    if (n.op != TermOp::alu || static_cast<AluOp>(n.aux) != AluOp::multiply) return std::nullopt;
    const auto ks = store.kids(t);
    for (size_t i = 0; i < 2; ++i) {
      const TermNode& k = store.node(ks[i]);
      const bool sum = k.op == TermOp::fma_chain ||
                       (k.op == TermOp::alu && static_cast<AluOp>(k.aux) == AluOp::add);
      if (sum && inlined(ks[i])) return i;
    }
    return std::nullopt;
  }
  // How many terms have k among their kids (0, 1, or 2 for two or more), counted over the whole
  // store when it has grown since the last count.
  uint8_t users(TermId k) {
    if (user_count.size() != store.size()) {
      user_count.assign(store.size(), 0);
      for (TermId t = 0; t < store.size(); ++t) {
        for (TermId x : store.kids(t)) {
          if (user_count[x] < 2) ++user_count[x];
        }
      }
    }
    return user_count[k];
  }

  bool is_opaque(TermId t) const { return t < opaque.size() && opaque[t]; }

  uint32_t compute(TermId t) {
    scratch.clear();  // monomials of earlier terms are interned by now
    if (is_opaque(t)) {
      const uint32_t w[2] = {static_cast<uint32_t>(AtomKind::opaque), t};
      return atom_poly(intern_atom(w));
    }
    const TermNode& n = store.node(t);
    const auto ks = store.kids(t);
    switch (n.op) {
      case TermOp::input: {
        const uint32_t w[2] = {static_cast<uint32_t>(AtomKind::input), t};
        return atom_poly(intern_atom(w));
      }
      case TermOp::constant: {
        const float v = decode_to_float(n.dtype, static_cast<uint32_t>(n.payload));
        if (std::isnan(v)) limit(t, "a NaN constant");
        if (std::isinf(v)) return v < 0 ? kNegInf : kPosInf;
        try {
          return const_poly(rat_from_float(v));
        } catch (const RealFormLimit&) {
          // Beyond 64-bit rationals (-FLT_MAX as a running max's start, a tiny epsilon): an
          // exact but uninterpreted constant, keyed by its value.
          const uint32_t w[2] = {static_cast<uint32_t>(AtomKind::constant),
                                 std::bit_cast<uint32_t>(v)};
          return atom_poly(intern_atom(w));
        }
      }
      case TermOp::round: {
        const uint32_t x = kid(ks[0]);
        if (is_float(n.dtype)) return x;  // the rounding erased; an infinity stays one
        const uint32_t w[2] = {
            static_cast<uint32_t>(AtomKind::to_int) | static_cast<uint32_t>(n.dtype) << 8,
            finite(t, x)};
        return atom_poly(intern_atom(w));
      }
      case TermOp::alu: {
        const auto op = static_cast<AluOp>(n.aux);
        if (op > AluOp::min) limit(t, "alu " + std::string(alu_op_name(op)));
        if (op == AluOp::add) return flattened_sum(t);
        if (const auto i = inlined_factor(t)) return product_of_sum(t, ks[*i], ks[1 - *i]);
        const uint32_t a = kid(ks[0]), b = kid(ks[1]);
        switch (op) {
          case AluOp::subtract: {  // (add is a flattened sum, above)
            const uint32_t nb = is_inf(b) ? (b ^ kNegInf ^ kPosInf) : b;
            if (is_inf(a) || is_inf(nb)) {
              if (is_inf(a) && is_inf(nb) && a != nb) limit(t, "inf - inf");
              return is_inf(a) ? a : nb;
            }
            return add(a, b, kCoefMinusOne);
          }
          case AluOp::multiply:
            if (is_inf(a) || is_inf(b)) return inf_times(t, a, b);
            return mul(a, b);
          case AluOp::divide:
            if (is_inf(a) && !is_inf(b)) return inf_times(t, a, inverse(b));
            if (is_inf(b) && !is_inf(a)) return kZeroPoly;  // finite / +-inf
            return mul(finite(t, a), inverse(finite(t, b)));
          default: {  // max, min: an infinity is the identity or absorbs
            const uint32_t identity = op == AluOp::max ? kNegInf : kPosInf;
            std::vector<TermId> leaves;
            extremum_operands(t, leaves);
            std::vector<uint32_t> operands;
            for (TermId leaf : leaves) {
              const uint32_t x = kid(leaf);
              if (x == identity) continue;
              if (is_inf(x)) return x;
              operands.push_back(x);
            }
            if (operands.empty()) return identity;
            return max_min(op == AluOp::max ? AtomKind::max : AtomKind::min, operands);
          }
        }
      }
      case TermOp::act: {
        const auto f = static_cast<ActFunc>(n.aux);
        const uint32_t x = kid(ks[0]);
        if (f == ActFunc::copy) return x;
        if (x == kNegInf && f == ActFunc::exp) return kZeroPoly;  // exp(-inf) = 0
        if (is_inf(x) && f == ActFunc::reciprocal) return kZeroPoly;
        finite(t, x);
        switch (f) {
          case ActFunc::exp:
            return exp_of(x);
          case ActFunc::reciprocal:
            return inverse(x);
          case ActFunc::square:
            return mul(x, x);
          default: {
            // Uninterpreted: equal arguments give equal results, nothing more is assumed.
            const uint32_t w[2] = {
                static_cast<uint32_t>(AtomKind::func) | static_cast<uint32_t>(f) << 8, x};
            return atom_poly(intern_atom(w));
          }
        }
      }
      case TermOp::fma_chain:
        return flattened_sum(t);
      case TermOp::operands:
        limit(t, "an operand list");
      case TermOp::transpose_pe: {
        const auto col = store.transpose_column(t);
        if (n.payload >= col.size()) limit(t, "a transpose outside its column");
        return kid(col[n.payload]);
      }
      case TermOp::select: {
        const uint32_t a = kid(ks[1]), b = kid(ks[2]);
        if (a == b) return a;
        // A predicate without a real form (a comparison) is keyed by its term: the same term
        // has the same value, which is all an uninterpreted select needs.
        const bool pred_term = memo[ks[0]] == kFailed;
        const uint32_t w[5] = {static_cast<uint32_t>(AtomKind::select) | uint32_t(n.aux) << 8,
                               pred_term ? 1u : 0u, pred_term ? ks[0] : kid(ks[0]), a, b};
        return atom_poly(intern_atom(w));
      }
      case TermOp::opaque:
        limit(t, "an opaque term (" + store.opaque_reason(t) + ")");
    }
    limit(t, "an unknown term");
  }

  void fail(TermId t, uint32_t message) {
    memo[t] = kFailed;
    fails[t] = message;
  }

  uint32_t form(TermId root) {
    if (root >= store.size()) throw std::out_of_range("RealForms::form: no such term");
    if (memo.size() < store.size()) memo.resize(store.size(), kUnknown);
    std::vector<TermId> todo{root}, d;
    while (!todo.empty()) {
      const TermId t = todo.back();
      if (memo[t] != kUnknown) {
        todo.pop_back();
        continue;
      }
      d.clear();
      if (!is_opaque(t)) deps(t, d);
      bool pending = false;
      for (TermId k : d) {
        if (memo[k] == kUnknown) todo.push_back(k), pending = true;
      }
      if (pending) continue;
      todo.pop_back();
      const bool tolerant = store.node(t).op == TermOp::select;
      uint32_t failed_kid = kUnknown;
      for (size_t i = tolerant ? 1 : 0; i < d.size(); ++i) {
        if (memo[d[i]] == kFailed) failed_kid = d[i];
      }
      if (failed_kid != kUnknown) {
        fail(t, fails.at(failed_kid));
        continue;
      }
      try {
        memo[t] = compute(t);
      } catch (const RealFormLimit& e) {
        messages.push_back(e.what());
        fail(t, static_cast<uint32_t>(messages.size() - 1));
      }
    }
    if (memo[root] == kFailed) throw RealFormLimit(messages[fails.at(root)]);
    return memo[root];
  }

  // ---- the overflow gate's pattern ----
  bool nonpositive(TermId arg) {
    const uint32_t p = form(arg);
    if (is_inf(p)) return p == kNegInf;
    std::vector<M> v;
    decode(p, v);
    return nonpositive_sum(v, 0);
  }

  // Whether the sum v (sorted, merged) is provably <= 0. Besides the direct patterns below, a
  // MIN(T) with a positive coefficient is at most any of its operands and a MAX(T) with a
  // negative coefficient at most minus any of them, so v <= 0 follows when it does for v with
  // the atom replaced by one operand: a row max combined across key tiles as min(-max(tile 0),
  // -max(tile 1), ...) (the sd kernels' running negated max) then subtracted from one score.
  // Nothing is interned: a million exp arguments each trying 64 operands at two depths would
  // keep every candidate sum.
  bool nonpositive_sum(const std::vector<M>& v, int depth) {
    if (direct_nonpositive(v)) return true;
    if (depth >= 2) return false;
    for (size_t i = 0; i < v.size(); ++i) {
      const uint32_t a = mono_atom(v[i]);
      if (a == kUnknown) continue;
      const AtomKind kind = atom_kind(a);
      const Rat c = rat(v[i].coef);
      if (!(kind == AtomKind::min && c.num > 0) && !(kind == AtomKind::max && c.num < 0)) continue;
      try {
        const auto set = atoms.get(a).subspan(1);
        for (size_t k = 0; k < set.size() && k < 64; ++k) {
          if (is_inf(set[k])) continue;
          std::vector<M> w;
          for (size_t j = 0; j < v.size(); ++j) {
            if (j != i) w.push_back(v[j]);
          }
          const size_t from = w.size();
          decode(set[k], w);
          for (size_t j = from; j < w.size(); ++j) w[j].coef = coef_mul(w[j].coef, v[i].coef);
          merge_keys(w);
          if (nonpositive_sum(w, depth + 1)) return true;
        }
      } catch (const RealFormLimit&) {
      }
    }
    return false;
  }

  bool direct_nonpositive(const std::vector<M>& v) {
    if (v.empty()) return true;
    if (v.size() == 1 && v[0].n == 0 && v[0].exp == kZeroPoly) return rat(v[0].coef).num < 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const uint32_t a = mono_atom(v[i]);
      if (a == kUnknown) continue;
      const AtomKind kind = atom_kind(a);
      const Rat c = rat(v[i].coef);
      // k*y - k*MAX(S) or k*MIN(S) - k*y with k > 0: the rest of the sum is +-k*y.
      if (!(kind == AtomKind::max && c.num < 0) && !(kind == AtomKind::min && c.num > 0)) continue;
      try {
        const uint32_t by = intern_coef(rat_inv({-c.num, c.den}));  // 1/k for max, -1/k for min
        std::vector<M> rest;
        for (size_t j = 0; j < v.size(); ++j) {
          if (j == i) continue;
          rest.push_back(v[j]);
          rest.back().coef = coef_mul(v[j].coef, by);
        }
        // An operand of S is a polynomial with an id: a y that has none is no operand.
        const uint32_t y = find_poly(rest);
        if (y == kUnknown) continue;
        const auto set = atoms.get(a).subspan(1);
        if (std::binary_search(set.begin(), set.end(), y)) return true;
        const uint32_t ya = poly_atom(y);
        if (ya != kUnknown && atom_kind(ya) == kind) {
          const auto sub = atoms.get(ya).subspan(1);
          if (std::includes(set.begin(), set.end(), sub.begin(), sub.end())) return true;
        }
      } catch (const RealFormLimit&) {
      }
    }
    return false;
  }

  // ---- readable form ----
  void put_poly(uint32_t p, std::string& out, size_t limit) const {
    if (is_inf(p)) {
      out += p == kNegInf ? "-inf" : "inf";
      return;
    }
    std::vector<M> v;
    decode(p, v);
    if (v.empty()) out += "0";
    for (size_t i = 0; i < v.size() && out.size() <= limit; ++i) {
      Rat c = rat(v[i].coef);
      if (i > 0) out += c.num < 0 ? " - " : " + ";
      if (i > 0 && c.num < 0) c.num = -c.num;
      if (v[i].n == 0 && v[i].exp == kZeroPoly) {
        out += rat_str(c);
        continue;
      }
      if (c.num == -1 && c.den == 1) {
        out += "-";
      } else if (c.num != 1 || c.den != 1) {
        out += rat_str(c) + "·";
      }
      bool first = true;
      for_each_atom(v[i], [&](AtomPow ap) {
        if (out.size() > limit) return;
        if (!first) out += "·";
        first = false;
        put_atom(ap.atom, out, limit);
        if (ap.pow != 1) out += "^" + std::to_string(ap.pow);
      });
      if (v[i].exp != kZeroPoly && out.size() <= limit) {
        if (!first) out += "·";
        out += "exp(";
        put_poly(v[i].exp, out, limit);
        out += ")";
      }
    }
  }
  void put_atom(uint32_t a, std::string& out, size_t limit) const {
    const auto w = atoms.get(a);
    const auto kind = static_cast<AtomKind>(w[0] & 0xff);
    const uint32_t aux = w[0] >> 8;
    auto list = [&](std::string_view name, std::span<const uint32_t> ps) {
      out += name;
      out += "(";
      for (size_t i = 0; i < ps.size() && out.size() <= limit; ++i) {
        if (i > 0) out += ", ";
        put_poly(ps[i], out, limit);
      }
      out += ")";
    };
    switch (kind) {
      case AtomKind::input:
        out += store.str(w[1], 1);
        return;
      case AtomKind::opaque:
        out += "[#" + std::to_string(w[1]) + "]";
        return;
      case AtomKind::max:
        return list("max", w.subspan(1));
      case AtomKind::min:
        return list("min", w.subspan(1));
      case AtomKind::inv:
        return list("1/", w.subspan(1));
      case AtomKind::func:
        return list(act_func_name(static_cast<ActFunc>(aux)), w.subspan(1));
      case AtomKind::to_int:
        return list(dtype_name(static_cast<DType>(aux)), w.subspan(1));
      case AtomKind::constant: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(std::bit_cast<float>(w[1])));
        out += buf;
        return;
      }
      case AtomKind::select:
        out += aux ? "select~(" : "select(";
        if (w[1]) {
          out += store.str(w[2], 2);
        } else {
          put_poly(w[2], out, limit);
        }
        out += ", ";
        put_poly(w[3], out, limit);
        out += ", ";
        put_poly(w[4], out, limit);
        out += ")";
        return;
    }
  }
};

RealForms::RealForms(const TermStore& store, size_t max_monomials, size_t max_bytes)
    : impl_(new Impl(store, max_monomials, max_bytes)) {}

RealForms::~RealForms() {
  delete impl_;
}

RealId RealForms::form(TermId t) {
  return impl_->form(t);
}

void RealForms::set_opaque(const std::vector<uint8_t>& opaque) {
  impl_->opaque = opaque;
}

size_t RealForms::bytes() const {
  return impl_->bytes();
}

std::vector<uint8_t> may_be_infinite(const TermStore& store) {
  // Per term, whether it may be -inf (bit 1) or +inf (bit 2), from its kids' (kids are
  // interned before their users, so one pass in id order sees them first): max(-inf, s) and
  // exp(-inf) are finite, and a NaN constant counts as both.
  std::vector<uint8_t> inf(store.size(), 0);
  constexpr uint8_t kNeg = 1, kPos = 2, kBoth = 3;
  auto flip = [](uint8_t x) {
    return static_cast<uint8_t>((x & kNeg ? kPos : 0) | (x & kPos ? kNeg : 0));
  };
  for (TermId t = 0; t < store.size(); ++t) {
    const TermNode& n = store.node(t);
    const auto ks = store.kids(t);
    uint8_t any = 0;
    for (TermId k : ks) any |= inf[k];
    any = any ? kBoth : 0;
    const auto op = static_cast<AluOp>(n.aux);
    const auto f = static_cast<ActFunc>(n.aux);
    switch (n.op) {
      case TermOp::input:
        break;
      case TermOp::constant: {
        const float v = decode_to_float(n.dtype, static_cast<uint32_t>(n.payload));
        inf[t] = std::isnan(v) ? kBoth : std::isinf(v) ? (v < 0 ? kNeg : kPos) : 0;
        break;
      }
      case TermOp::alu:
        if (ks.size() == 2 && (op == AluOp::max || op == AluOp::min)) {
          const uint8_t x = inf[ks[0]], y = inf[ks[1]];
          const uint8_t absorbing = op == AluOp::max ? kPos : kNeg;  // the identity: the other
          inf[t] = static_cast<uint8_t>(((x | y) & absorbing) | (x & y & ~absorbing));
        } else if (ks.size() == 2 && op == AluOp::subtract) {
          inf[t] = inf[ks[0]] | flip(inf[ks[1]]);
        } else if (ks.size() == 2 && op == AluOp::add) {
          inf[t] = inf[ks[0]] | inf[ks[1]];
        } else if (ks.size() == 2 && op == AluOp::multiply) {
          // By a finite nonzero constant: the other's signs, flipped if it is negative.
          inf[t] = any;
          for (size_t i = 0; i < 2; ++i) {
            const TermNode& k = store.node(ks[i]);
            if (k.op != TermOp::constant) continue;
            const float v = decode_to_float(k.dtype, static_cast<uint32_t>(k.payload));
            if (std::isfinite(v) && v != 0) inf[t] = v < 0 ? flip(inf[ks[1 - i]]) : inf[ks[1 - i]];
          }
        } else {
          inf[t] = any;
        }
        break;
      case TermOp::act:
        if (f == ActFunc::exp) {
          inf[t] = inf[ks[0]] & kPos;
        } else if (f == ActFunc::copy) {
          inf[t] = inf[ks[0]];
        } else if (f == ActFunc::reciprocal) {
          inf[t] = 0;  // 1/+-inf = 0
        } else {
          inf[t] = any;
        }
        break;
      case TermOp::round:
        inf[t] = is_float(n.dtype) ? inf[ks[0]] : any;
        break;
      default:  // sums, transposes, selects, operand lists, opaque terms
        inf[t] = any;
    }
  }
  return inf;
}

std::vector<uint8_t> shared_subterms(const TermStore& store, std::span<const TermId> a,
                                     std::span<const TermId> b) {
  // Bit 1: below an `a` root; bit 2: below a `b` root.
  std::vector<uint8_t> seen(store.size(), 0);
  std::vector<TermId> todo;
  for (auto [roots, bit] : {std::pair{a, uint8_t{1}}, std::pair{b, uint8_t{2}}}) {
    for (TermId r : roots) {
      if (!(seen[r] & bit)) seen[r] |= bit, todo.push_back(r);
    }
    while (!todo.empty()) {
      const TermId t = todo.back();
      todo.pop_back();
      for (TermId k : store.kids(t)) {
        if (!(seen[k] & bit)) seen[k] |= bit, todo.push_back(k);
      }
    }
  }
  // A term that may be infinite in real arithmetic (the extended reals the forms use: a running
  // max starts at -inf) is never an atom: identities over atoms fail there (X - X is not 0 at
  // X = -inf).
  // Nor is a term with an opaque value below it (a value the model does not determine: it has no
  // form, and one shared would otherwise become provable). One opaque node per call keeps the
  // two programs' apart, so none is shared; this holds that without relying on it.
  const std::vector<uint8_t> inf = may_be_infinite(store);
  std::vector<uint8_t> opaque_below(store.size(), 0);
  for (TermId t = 0; t < seen.size(); ++t) {
    const TermOp op = store.node(t).op;
    opaque_below[t] = op == TermOp::opaque;
    for (TermId k : store.kids(t)) opaque_below[t] |= opaque_below[k];
    seen[t] = seen[t] == 3 && op != TermOp::input && op != TermOp::constant && inf[t] == 0 &&
              !opaque_below[t];
  }
  return seen;
}

bool RealForms::has_form(TermId t) const {
  return t < impl_->memo.size() && impl_->memo[t] != kUnknown && impl_->memo[t] != kFailed;
}

std::string RealForms::str(RealId r, size_t max_chars) const {
  std::string out;
  impl_->put_poly(r, out, max_chars);
  if (out.size() > max_chars) {
    // Cut at a UTF-8 character boundary ("·" is two bytes).
    size_t cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
    out.resize(cut);
    out += "…";
  }
  return out;
}

bool RealForms::exp_argument_nonpositive(TermId arg) {
  return impl_->nonpositive(arg);
}

}  // namespace ncv::equiv
