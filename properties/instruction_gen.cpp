#include "properties/instruction_gen.h"

#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <numeric>

#include "properties/instruction_exact.h"

namespace ncv::props::instr {

uint64_t SplitMix::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t SplitMix::in(int64_t lo, int64_t hi) {
  const auto span = static_cast<uint64_t>(hi - lo) + 1u;
  return lo + static_cast<int64_t>(span == 0 ? next() : next() % span);
}

bool SplitMix::chance(int percent) {
  return in(0, 99) < percent;
}

std::string_view value_mix_name(ValueMix m) {
  switch (m) {
    case ValueMix::hard:
      return "hard";
    case ValueMix::ordinary:
      return "ordinary";
    case ValueMix::small_ints:
      return "small_ints";
    case ValueMix::wide_ints:
      return "wide_ints";
    case ValueMix::raw_bits:
      return "raw_bits";
    case ValueMix::predicates:
      return "predicates";
  }
  return "?";
}

namespace {

// Field layout of a float dtype: total bits and stored fraction bits.
struct Layout {
  int total;
  int mant;
  bool fn;  // e4m3fn: no Inf, only S.1111.111 is NaN
  int exp_bits() const { return total - 1 - mant; }
  uint32_t all_ones_exp() const { return (1u << exp_bits()) - 1u; }
  uint32_t bias() const { return (1u << (exp_bits() - 1)) - 1u; }
  uint32_t make(bool neg, uint32_t exp, uint32_t frac) const {
    return (neg ? 1u << (total - 1) : 0u) | (exp << mant) | frac;
  }
  uint32_t max_finite(bool neg) const {
    return fn ? make(neg, all_ones_exp(), (1u << mant) - 2u)
              : make(neg, all_ones_exp() - 1u, (1u << mant) - 1u);
  }
  uint32_t max_normal_exp() const { return fn ? all_ones_exp() : all_ones_exp() - 1u; }
};

Layout layout_of(DType t) {
  switch (t) {
    case DType::fp32:
      return {32, 23, false};
    case DType::bf16:
      return {16, 7, false};
    case DType::fp16:
      return {16, 10, false};
    case DType::fp8_e4m3:
      return {8, 3, false};
    case DType::fp8_e4m3fn:
      return {8, 3, true};
    default:
      return {8, 2, false};  // fp8_e5m2
  }
}

uint32_t width_mask(DType t) {
  const size_t bytes = dtype_size(t);
  return bytes == 4 ? 0xffffffffu : (1u << (8 * bytes)) - 1u;
}

uint32_t small_int(DType t, SplitMix& r) {
  const bool unsigned_int = is_integer(t) && t != DType::int32;
  const int64_t k = unsigned_int ? r.in(0, 16) : r.in(-8, 8);
  if (is_integer(t)) return static_cast<uint32_t>(k) & width_mask(t);
  return exact::from_f32(t, exact::f32_bits(static_cast<float>(k)));
}

uint32_t wide_int(DType t, SplitMix& r) {
  const bool unsigned_int = is_integer(t) && t != DType::int32;
  const int64_t k = unsigned_int ? r.in(0, 32767) : r.in(-32767, 32767);
  if (is_integer(t)) return static_cast<uint32_t>(k) & width_mask(t);
  return exact::from_f32(t, exact::f32_bits(static_cast<float>(k)));
}

uint32_t ordinary_float(const Layout& l, SplitMix& r) {
  const auto bias = static_cast<int64_t>(l.bias());
  const auto exp = static_cast<uint32_t>(
      std::clamp<int64_t>(bias + r.in(-3, 3), 1, static_cast<int64_t>(l.max_normal_exp())));
  uint32_t frac = static_cast<uint32_t>(r.next()) & ((1u << l.mant) - 1u);
  if (l.fn && exp == l.all_ones_exp() && frac == (1u << l.mant) - 1u) frac -= 1;  // not the NaN
  return l.make(r.chance(50), exp, frac);
}

uint32_t hard_float(const Layout& l, SplitMix& r) {
  const bool neg = r.chance(50);
  const uint32_t frac_mask = (1u << l.mant) - 1u;
  const uint32_t frac = static_cast<uint32_t>(r.next()) & frac_mask;
  const int64_t c = r.in(0, 99);
  if (c < 8) {  // NaN: quiet or signalling, any payload (e4m3fn has a single NaN)
    if (l.fn) return l.make(neg, l.all_ones_exp(), frac_mask);
    return l.make(neg, l.all_ones_exp(), frac == 0 ? 1u : frac);
  }
  if (c < 14) return l.fn ? l.max_finite(neg) : l.make(neg, l.all_ones_exp(), 0);  // +-Inf
  if (c < 22) return l.make(neg, 0, 0);                                            // +-0
  if (c < 27) return l.make(neg, 0, r.chance(50) ? 1u : frac_mask);  // min / max subnormal
  if (c < 34) return l.make(neg, 0, frac == 0 ? 1u : frac);          // subnormal
  if (c < 38) return l.max_finite(neg);
  if (c < 41) return l.make(neg, 1, 0);  // min normal
  if (c < 55) {                          // any normal exponent
    const auto exp = static_cast<uint32_t>(r.in(1, l.max_normal_exp()));
    uint32_t f = frac;
    if (l.fn && exp == l.all_ones_exp() && f == frac_mask) f -= 1;
    return l.make(neg, exp, f);
  }
  if (c < 60) return l.make(neg, l.bias(), 0);  // +-1
  return ordinary_float(l, r);
}

uint32_t hard_int(DType t, SplitMix& r) {
  const uint32_t mask = width_mask(t);
  const bool signed_int = t == DType::int32;
  switch (r.in(0, 9)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return signed_int ? 0x7fffffffu : mask;  // max
    case 3:
      return signed_int ? 0x80000000u : 0u;  // min
    case 4:
      return signed_int ? 0xffffffffu : mask - 1u;  // -1 / max - 1
    case 5:
      return ((1u << 24) + 1u) & mask;  // not exact in fp32 (when it fits)
    case 6:
    case 7:
      return static_cast<uint32_t>(r.next()) & mask;
    default:
      return small_int(t, r);
  }
}

uint32_t one_value(DType t, ValueMix mix, SplitMix& r) {
  const uint32_t mask = width_mask(t);
  switch (mix) {
    case ValueMix::raw_bits:
      return static_cast<uint32_t>(r.next()) & mask;
    case ValueMix::small_ints:
      return small_int(t, r);
    case ValueMix::wide_ints:
      return wide_int(t, r);
    case ValueMix::predicates: {
      const int64_t c = r.in(0, 9);
      const uint32_t v = c < 5 ? 0u : c < 8 ? 1u : static_cast<uint32_t>(r.next());
      return is_integer(t) ? v & mask : exact::from_f32(t, exact::f32_bits(static_cast<float>(v)));
    }
    case ValueMix::ordinary:
      return is_integer(t) ? small_int(t, r) : ordinary_float(layout_of(t), r);
    case ValueMix::hard:
      return is_integer(t) ? hard_int(t, r) : hard_float(layout_of(t), r);
  }
  return 0;
}

}  // namespace

std::vector<uint32_t> fill_values(DType t, int64_t n, ValueMix mix, uint64_t seed) {
  SplitMix r(seed);
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = one_value(t, mix, r);
  return v;
}

uint64_t pick_seed() {
  return *rc::gen::arbitrary<uint64_t>();
}

ValueMix pick_value_mix(const std::vector<ValueMix>& allowed) {
  return pick_one(allowed);
}

DType pick_dtype(const std::vector<DType>& allowed) {
  return pick_one(allowed);
}

bool pick_bool(int percent_true) {
  return *rc::gen::inRange(0, 100) < percent_true;
}

int64_t pick_int(int64_t lo, int64_t hi) {
  return *rc::gen::inRange<int64_t>(lo, hi + 1);
}

int64_t pick_size(int64_t lo, int64_t hi) {
  std::vector<int64_t> edges = {lo, hi};
  for (int64_t e : {1, 2, 31, 32, 33, 64, 65, 127, 128, 512}) {
    if (e > lo && e < hi) edges.push_back(e);
  }
  if (pick_bool(25)) return pick_one(edges);
  return pick_int(lo, hi);
}

std::vector<int64_t> pick_free_shape(int64_t max_elems, int max_rank) {
  const int rank = static_cast<int>(pick_int(1, max_rank));
  std::vector<int64_t> shape;
  int64_t room = max_elems;
  for (int d = 0; d < rank; ++d) {
    // Later dims get what the earlier ones left: sqrt-ish splits keep every dim non-trivial.
    const int64_t cap = d + 1 == rank ? room : std::max<int64_t>(1, room / 2);
    shape.push_back(pick_size(1, std::max<int64_t>(1, std::min(cap, room))));
    room = std::max<int64_t>(1, room / shape.back());
  }
  return shape;
}

float pick_immediate(ValueMix mix) {
  const auto bits = fill_values(DType::fp32, 1, mix, pick_seed());
  return std::bit_cast<float>(bits[0]);
}

bool partition_start_legal(int64_t rows, int64_t start) {
  if (rows < 1 || rows > 128 || start < 0) return false;
  if (rows > 64) return start == 0;
  if (rows > 32) return start == 0 || start == 64;
  return start % 32 == 0 && start <= 96;
}

int64_t pick_partition_start(int64_t rows) {
  std::vector<int64_t> legal;
  for (int64_t s = 0; s + rows <= 128; ++s) {
    if (partition_start_legal(rows, s)) legal.push_back(s);
  }
  return pick_one(legal);
}

PlacedView pick_view(int64_t rows, const std::vector<int64_t>& free, const ViewOptions& o) {
  const size_t rank = free.size() + 1;
  PlacedView p;
  p.view.dims.resize(rank);
  p.shape.resize(rank);
  std::vector<int> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (o.permute && free.size() >= 2 && pick_bool(30)) {
    for (size_t i = rank - 1; i >= 2; --i) {
      std::swap(perm[i], perm[static_cast<size_t>(pick_int(1, static_cast<int64_t>(i)))]);
    }
  }
  if (!std::is_sorted(perm.begin(), perm.end())) p.view.perm = perm;

  const int64_t start0 = o.on_chip ? pick_partition_start(rows) : (o.strided ? pick_int(0, 2) : 0);
  const int64_t room0 = o.on_chip ? 128 - start0 - rows : 3;
  const int64_t extra0 = pick_bool(70) ? 0 : pick_int(0, room0);
  p.view.dims[0] = DimSlice{start0, rows, 1};
  p.shape[0] = start0 + rows + extra0;

  auto place_free = [&](bool plain) {
    for (size_t k = 1; k < rank; ++k) {
      const auto td = static_cast<size_t>(perm[k]);
      const int64_t f = free[k - 1];
      int64_t step = 1, start = 0, extra = 0;
      if (!plain && o.strided) {
        step = pick_one<int64_t>({1, 1, 1, 1, 1, 1, 2, 2, 3});
        start = pick_bool(70) ? 0 : pick_int(1, 3);
        extra = pick_bool(70) ? 0 : pick_int(1, 2);
      }
      if (!plain && o.broadcast && pick_bool(10)) step = 0;
      p.view.dims[td] = DimSlice{start, f, step};
      p.shape[td] = start + (f - 1) * step + 1 + extra;
    }
  };
  place_free(false);
  if (o.max_row_elems > 0) {
    int64_t row_elems = 1;
    for (size_t d = 1; d < rank; ++d) row_elems *= p.shape[d];
    if (row_elems > o.max_row_elems) place_free(true);
  }
  return p;
}

std::optional<ViewSpec> pick_view_within(const std::vector<int64_t>& shape, int64_t rows,
                                         const std::vector<int64_t>& free) {
  if (shape.size() != free.size() + 1 || rows > shape[0]) return std::nullopt;
  std::vector<int64_t> starts;
  for (int64_t s = 0; s + rows <= shape[0]; ++s) {
    if (partition_start_legal(rows, s)) starts.push_back(s);
  }
  if (starts.empty()) return std::nullopt;
  ViewSpec v;
  v.dims.resize(shape.size());
  v.dims[0] = DimSlice{pick_one(starts), rows, 1};
  for (size_t d = 1; d < shape.size(); ++d) {
    const int64_t f = free[d - 1];
    const int64_t max_step = f > 1 ? (shape[d] - 1) / (f - 1) : 1;
    if (f > shape[d] || max_step < 1) return std::nullopt;
    const int64_t step = pick_int(1, std::min<int64_t>(max_step, 2));
    const int64_t start = pick_int(0, shape[d] - ((f - 1) * step + 1));
    v.dims[d] = DimSlice{start, f, step};
  }
  return v;
}

}  // namespace ncv::props::instr
