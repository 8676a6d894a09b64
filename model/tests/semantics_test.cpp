// Tests of model/semantics: the fast paths against the reference paths (bit for bit, on random
// shapes, layouts and hard values), and both against independent computations written here.
//
// Fast vs reference: every case lays its Views out in one byte arena (contiguous, strided with
// gaps, broadcast, reversed, indirect row_offsets, sometimes aliasing each other), fills it with
// values that include NaN payloads, +-Inf, -0, subnormals and extreme magnitudes, runs the
// instruction in both modes on two copies of the arena and compares every byte (and the
// activation registers). All randomness comes from fixed seeds.
#include "model/semantics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "model/semantics_internal.h"

namespace ncv {
namespace {

using Arena = std::vector<uint8_t>;

float f32(uint32_t b) {
  return std::bit_cast<float>(b);
}
uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
const float kInf = std::numeric_limits<float>::infinity();

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g_); }
  uint32_t u32() { return static_cast<uint32_t>(g_()); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uni(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

// ---------------------------------------------------------------------------------------------
// Values: raw bit patterns per dtype, by category.

struct FloatFormat {
  int exp_bits, mant_bits;
};
FloatFormat format_of(DType t) {
  switch (t) {
    case DType::fp32:
      return {8, 23};
    case DType::bf16:
      return {8, 7};
    case DType::fp16:
      return {5, 10};
    case DType::fp8_e5m2:
      return {5, 2};
    default:
      return {4, 3};  // e4m3, e4m3fn
  }
}

uint32_t random_bits(Rng& rng, DType t) {
  const int size_bits = static_cast<int>(dtype_size(t)) * 8;
  const uint32_t all = size_bits == 32 ? 0xffffffffu : ((1u << size_bits) - 1);
  if (is_integer(t)) {
    const double c = rng.real(0, 1);
    if (c < 0.5) return encode_from_float(t, static_cast<float>(rng.uni(-20, 300)));
    if (c < 0.7) return rng.pick(std::vector<uint32_t>{0u, all, all >> 1, (all >> 1) + 1, 1u});
    return rng.u32() & all;
  }
  const FloatFormat f = format_of(t);
  const uint32_t exp_max = (1u << f.exp_bits) - 1, mant_all = (1u << f.mant_bits) - 1;
  const uint32_t sign = rng.coin(0.5) ? 1u << (size_bits - 1) : 0u;
  auto make = [&](uint32_t e, uint32_t m) { return sign | (e << f.mant_bits) | (m & mant_all); };
  const double c = rng.real(0, 1);
  if (c < 0.05) {  // NaN with a random payload (fp32: quiet or signalling)
    if (t == DType::fp8_e4m3fn) return make(exp_max, mant_all);
    return make(exp_max, std::max<uint32_t>(1, rng.u32() & mant_all));
  }
  if (c < 0.09) return make(exp_max, 0);                                      // Inf
  if (c < 0.15) return make(0, 0);                                            // +-0
  if (c < 0.21) return make(0, std::max<uint32_t>(1, rng.u32() & mant_all));  // subnormal
  if (c < 0.25) return make(exp_max - 1, rng.u32());                          // huge
  if (c < 0.27) return make(1, rng.u32());                                    // tiny normal
  if (c < 0.40) return rng.u32() & all;                                       // anything
  const float v =
      static_cast<float>(rng.real(-1, 1) * std::ldexp(1.0, static_cast<int>(rng.uni(-6, 6))));
  return encode_from_float(t, v);
}

// Finite "ordinary" values only (for the independent numeric checks).
float random_plain(Rng& rng, int exp_lo, int exp_hi) {
  return static_cast<float>(rng.real(-1, 1) *
                            std::ldexp(1.0, static_cast<int>(rng.uni(exp_lo, exp_hi))));
}

// ---------------------------------------------------------------------------------------------
// View layouts in an arena.

struct VDesc {
  DType dtype = DType::fp32;
  int64_t rows = 1, row_stride = 0, offset = 0;
  int free_rank = 0;
  std::array<int64_t, kMaxFreeDims> sizes{}, strides{};
  std::vector<int64_t> row_offsets;
  int64_t region = 0;  // bytes from offset's region start

  View on(Arena& a) const {
    View v;
    v.base = a.data() + offset;
    v.dtype = dtype;
    v.rows = rows;
    v.row_stride = row_stride;
    v.free_rank = free_rank;
    v.sizes = sizes;
    v.strides = strides;
    v.row_offsets = row_offsets.empty() ? nullptr : row_offsets.data();
    return v;
  }
  int64_t free_elems() const {
    int64_t n = 1;
    for (int d = 0; d < free_rank; ++d) n *= sizes[d];
    return n;
  }
};

struct LayoutOpts {
  bool broadcast = false;  // stride-0 free dims / rows allowed
  bool fancy = true;       // gaps, reversed dims, row_offsets allowed
};

class Layout {
 public:
  explicit Layout(Rng& rng) : rng_(rng) {}

  // A fresh region (or, with `alias_of`, one that starts inside another view's region).
  VDesc make(DType t, int64_t rows, const std::vector<int64_t>& free, LayoutOpts o = {},
             const VDesc* alias_of = nullptr) {
    VDesc v;
    v.dtype = t;
    v.rows = rows;
    v.free_rank = static_cast<int>(free.size());
    const auto es = static_cast<int64_t>(dtype_size(t));
    int64_t cur = es * (o.fancy && rng_.coin(0.2) ? rng_.uni(2, 3) : 1);
    for (int d = v.free_rank - 1; d >= 0; --d) {
      v.sizes[d] = free[d];
      if (o.broadcast && rng_.coin(0.15)) {
        v.strides[d] = 0;
        continue;
      }
      v.strides[d] = cur;
      cur = cur * free[d] + (o.fancy && rng_.coin(0.2) ? es * rng_.uni(1, 3) : 0);
    }
    if (o.fancy && v.free_rank > 0 && rng_.coin(0.1)) {  // one reversed dim
      const int d = static_cast<int>(rng_.uni(0, v.free_rank - 1));
      v.strides[d] = -v.strides[d];
    }
    int64_t lo = 0, hi = es;
    for (int d = 0; d < v.free_rank; ++d) {
      const int64_t reach = (v.sizes[d] - 1) * v.strides[d];
      (reach < 0 ? lo : hi) += reach;
    }
    const int64_t span = hi - lo;
    v.row_stride = span + (o.fancy && rng_.coin(0.3) ? rng_.uni(0, 9) : 0);
    if (o.fancy && rows > 1 && span > 1 && rng_.coin(0.05)) v.row_stride = rng_.uni(1, span - 1);
    if (o.broadcast && rows > 1 && rng_.coin(0.05)) v.row_stride = 0;
    if (o.fancy && rows > 1 && v.row_stride > 0 && rng_.coin(0.15)) {
      std::vector<int64_t> perm(rows);
      for (int64_t r = 0; r < rows; ++r) perm[r] = r;
      for (int64_t r = rows - 1; r > 0; --r) std::swap(perm[r], perm[rng_.uni(0, r)]);
      v.row_offsets.resize(rows);
      for (int64_t r = 0; r < rows; ++r) v.row_offsets[r] = (perm[r] - r) * v.row_stride;
    }
    v.region = (rows - 1) * v.row_stride + span;
    int64_t start;
    if (alias_of != nullptr) {
      start = alias_of->offset + alias_lo(*alias_of) +
              rng_.uni(0, std::max<int64_t>(0, alias_of->region / 3));
      end_ = std::max(end_, start + v.region);
    } else {
      start = end_ + rng_.uni(0, 7);
      end_ = start + v.region;
    }
    v.offset = start - lo;
    descs_.push_back(v);
    return v;
  }

  // The arena: random bytes, then every view's elements set to random values of its dtype.
  Arena fill() {
    Arena a(static_cast<size_t>(end_ + 16));
    for (auto& b : a) b = static_cast<uint8_t>(rng_.u32());
    for (const VDesc& d : descs_) {
      const View v = d.on(a);
      for (int64_t r = 0; r < v.rows; ++r) {
        for (int64_t f = 0; f < v.free_elems(); ++f) {
          store_bits(v.dtype, v.at(r, f), random_bits(rng_, v.dtype));
        }
      }
    }
    return a;
  }

 private:
  static int64_t alias_lo(const VDesc& v) {
    int64_t lo = 0;
    for (int d = 0; d < v.free_rank; ++d)
      lo += std::min<int64_t>(0, (v.sizes[d] - 1) * v.strides[d]);
    return lo;
  }
  Rng& rng_;
  int64_t end_ = 0;
  std::vector<VDesc> descs_;
};

std::vector<int64_t> random_free_shape(Rng& rng, int64_t max_elems) {
  const int rank = static_cast<int>(rng.uni(1, 4));
  std::vector<int64_t> s(rank);
  for (auto& x : s) x = rank == 1 ? rng.uni(1, 512) : rng.uni(1, 12);
  auto prod = [&] {
    int64_t p = 1;
    for (auto x : s) p *= x;
    return p;
  };
  while (prod() > max_elems) *std::max_element(s.begin(), s.end()) /= 2;
  for (auto& x : s) x = std::max<int64_t>(x, 1);
  return s;
}
// The same element count, dims merged differently.
std::vector<int64_t> reshape(Rng& rng, std::vector<int64_t> s) {
  while (s.size() > 1 && rng.coin(0.4)) {
    const auto d = static_cast<size_t>(rng.uni(0, static_cast<int64_t>(s.size()) - 2));
    s[d] *= s[d + 1];
    s.erase(s.begin() + static_cast<int64_t>(d) + 1);
  }
  return s;
}
int64_t random_rows(Rng& rng) {
  return rng.coin(0.3) ? rng.uni(1, 128) : rng.uni(1, 6);
}

const std::vector<DType> kFloatTypes = {DType::fp32,     DType::bf16,       DType::fp16,
                                        DType::fp8_e4m3, DType::fp8_e4m3fn, DType::fp8_e5m2};
const std::vector<DType> kIntTypes = {DType::int32, DType::uint8, DType::uint16, DType::uint32};
const std::vector<DType> kAllTypes(std::begin(kAllDTypes), std::end(kAllDTypes));
DType any_type(Rng& rng) {
  return rng.coin(0.7) ? rng.pick(kFloatTypes) : rng.pick(kAllTypes);
}

const std::vector<AluOp> kFloatOps = {
    AluOp::add,       AluOp::subtract, AluOp::multiply, AluOp::divide,  AluOp::max,
    AluOp::min,       AluOp::pow,      AluOp::abs_max,  AluOp::abs_min, AluOp::is_equal,
    AluOp::not_equal, AluOp::is_gt,    AluOp::is_ge,    AluOp::is_lt,   AluOp::is_le};
const std::vector<AluOp> kBitOps = {AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor,
                                    AluOp::shift_left, AluOp::shift_right};

// Runs `run(mode, arena)` on two copies of `arena` and requires identical bytes (and `extra`
// state, e.g. registers, compared by the caller through the returned arenas).
void expect_same(const Arena& arena, const std::function<void(ExecMode, Arena&)>& run,
                 const std::string& what) {
  Arena fast = arena, ref = arena;
  run(ExecMode::fast, fast);
  run(ExecMode::reference, ref);
  if (fast != ref) {
    size_t i = 0;
    while (fast[i] == ref[i]) ++i;
    ADD_FAILURE() << what << ": fast and reference differ at arena byte " << i << " (fast 0x"
                  << std::hex << int{fast[i]} << ", reference 0x" << int{ref[i]} << ")";
  }
}

std::string case_name(const char* fn, int i) {
  return std::string(fn) + " case " + std::to_string(i);
}

ScalarArg random_scalar(Rng& rng, Layout& l, int64_t rows, std::optional<VDesc>& col) {
  if (rng.coin(0.5)) {
    col.reset();
    return f32(random_bits(rng, DType::fp32));
  }
  col = l.make(rng.coin(0.7) ? DType::fp32 : any_type(rng), rows,
               rng.coin(0.5) ? std::vector<int64_t>{1} : std::vector<int64_t>{});
  return 0.0f;  // replaced by the View at run time
}
ScalarArg bind_scalar(const ScalarArg& s, const std::optional<VDesc>& col, Arena& a) {
  return col ? ScalarArg{col->on(a)} : s;
}

// ---------------------------------------------------------------------------------------------
// Fast vs reference.

TEST(SemanticsFastVsReference, Copy) {
  Rng rng(1);
  for (int i = 0; i < 250; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const DType st = any_type(rng), dt = rng.coin(0.5) ? st : any_type(rng);
    const VDesc src = l.make(st, rows, shape, {.broadcast = true});
    const bool alias = rng.coin(0.2);
    const VDesc dst = l.make(dt, rows, reshape(rng, shape), {}, alias ? &src : nullptr);
    expect_same(
        l.fill(), [&](ExecMode m, Arena& a) { exec_copy(m, dst.on(a), src.on(a)); },
        case_name("copy", i));
  }
}

TEST(SemanticsFastVsReference, TensorScalar) {
  Rng rng(2);
  for (int i = 0; i < 300; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const bool bitwise = rng.coin(0.25);
    const DType st = bitwise ? rng.pick(kIntTypes) : any_type(rng);
    const DType dt = bitwise ? rng.pick(kIntTypes) : any_type(rng);
    const AluOp op0 = bitwise ? rng.pick(kBitOps) : rng.pick(kFloatOps);
    std::optional<AluOp> op1;
    if (rng.coin(0.6)) op1 = bitwise && rng.coin(0.7) ? rng.pick(kBitOps) : rng.pick(kFloatOps);
    const VDesc src = l.make(st, rows, shape, {.broadcast = true});
    std::optional<VDesc> c0, c1;
    const ScalarArg a0 = random_scalar(rng, l, rows, c0), a1 = random_scalar(rng, l, rows, c1);
    const bool r0 = rng.coin(0.5), r1 = rng.coin(0.5);
    const bool in_place = rng.coin(0.2) && dtype_size(dt) == dtype_size(st);
    VDesc dst =
        in_place ? src : l.make(dt, rows, reshape(rng, shape), {}, rng.coin(0.1) ? &src : nullptr);
    if (in_place) dst.dtype = dt;
    expect_same(
        l.fill(),
        [&](ExecMode m, Arena& a) {
          exec_tensor_scalar(m, dst.on(a), src.on(a), op0, bind_scalar(a0, c0, a), r0, op1,
                             bind_scalar(a1, c1, a), r1);
        },
        case_name("tensor_scalar", i));
  }
}

TEST(SemanticsFastVsReference, TensorTensorMemsetReciprocal) {
  Rng rng(3);
  for (int i = 0; i < 300; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const bool bitwise = rng.coin(0.25);
    auto type = [&] { return bitwise ? rng.pick(kIntTypes) : any_type(rng); };
    const AluOp op = bitwise ? rng.pick(kBitOps) : rng.pick(kFloatOps);
    const VDesc s0 = l.make(type(), rows, shape, {.broadcast = true});
    const VDesc s1 = l.make(type(), rows, reshape(rng, shape), {.broadcast = true});
    const VDesc dst = l.make(type(), rows, reshape(rng, shape), {}, rng.coin(0.2) ? &s1 : nullptr);
    const float value = f32(random_bits(rng, DType::fp32));
    expect_same(
        l.fill(),
        [&](ExecMode m, Arena& a) {
          switch (i % 3) {
            case 0:
              exec_tensor_tensor(m, dst.on(a), s0.on(a), s1.on(a), op);
              break;
            case 1:
              exec_memset(m, dst.on(a), value);
              break;
            default:
              exec_reciprocal(m, dst.on(a), s0.on(a));
          }
        },
        case_name("tensor_tensor/memset/reciprocal", i));
  }
}

TEST(SemanticsFastVsReference, Activation) {
  Rng rng(4);
  const ActFunc funcs[] = {ActFunc::copy,    ActFunc::exp,  ActFunc::log,   ActFunc::relu,
                           ActFunc::sigmoid, ActFunc::tanh, ActFunc::gelu,  ActFunc::silu,
                           ActFunc::square,  ActFunc::sqrt, ActFunc::rsqrt, ActFunc::reciprocal,
                           ActFunc::sin,     ActFunc::abs};
  const ReduceCmd cmds[] = {ReduceCmd::idle, ReduceCmd::reset, ReduceCmd::reduce,
                            ReduceCmd::reset_reduce};
  for (int i = 0; i < 250; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const VDesc src = l.make(any_type(rng), rows, shape, {.broadcast = true});
    const VDesc dst =
        l.make(any_type(rng), rows, reshape(rng, shape), {}, rng.coin(0.15) ? &src : nullptr);
    std::optional<VDesc> cs, cb, rr;
    const ScalarArg scale = random_scalar(rng, l, rows, cs);
    std::optional<ScalarArg> bias;
    if (rng.coin(0.6)) bias = random_scalar(rng, l, rows, cb);
    if (rng.coin(0.5)) rr = l.make(rng.coin(0.7) ? DType::fp32 : any_type(rng), rows, {1});
    const ActFunc func = funcs[i % 14];
    const ReduceCmd cmd = cmds[rng.uni(0, 3)];
    std::vector<float> regs0(rows);
    for (auto& r : regs0) r = f32(random_bits(rng, DType::fp32));
    std::vector<float> regs_fast = regs0, regs_ref = regs0;
    expect_same(
        l.fill(),
        [&](ExecMode m, Arena& a) {
          float* regs = m == ExecMode::fast ? regs_fast.data() : regs_ref.data();
          std::optional<ScalarArg> b;
          if (bias) b = bind_scalar(*bias, cb, a);
          exec_activation(m, dst.on(a), src.on(a), func, bind_scalar(scale, cs, a), b, cmd, regs,
                          rr ? std::optional<View>(rr->on(a)) : std::nullopt);
        },
        case_name("activation", i));
    ASSERT_EQ(0, std::memcmp(regs_fast.data(), regs_ref.data(), rows * sizeof(float)))
        << "activation registers, case " << i;
  }
}

TEST(SemanticsFastVsReference, Reductions) {
  Rng rng(5);
  for (int i = 0; i < 300; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const bool bitwise = rng.coin(0.2);
    auto type = [&] { return bitwise ? rng.pick(kIntTypes) : any_type(rng); };
    const std::vector<AluOp> reduce_ops =
        bitwise ? std::vector<AluOp>{AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor}
                : std::vector<AluOp>{AluOp::add, AluOp::subtract, AluOp::multiply,
                                     AluOp::max, AluOp::min,      AluOp::abs_max};
    const AluOp op = rng.pick(reduce_ops);
    const VDesc src = l.make(type(), rows, shape, {.broadcast = true});
    if (i % 2 == 0) {
      const int axes = static_cast<int>(rng.uni(0, static_cast<int64_t>(shape.size())));
      const std::vector<int64_t> kept =
          axes == static_cast<int>(shape.size())
              ? std::vector<int64_t>{1}
              : std::vector<int64_t>(shape.begin(), shape.end() - axes);
      const VDesc dst = l.make(type(), rows, kept, {}, rng.coin(0.2) ? &src : nullptr);
      const bool negate = rng.coin(0.5);
      expect_same(
          l.fill(),
          [&](ExecMode m, Arena& a) {
            exec_tensor_reduce(m, dst.on(a), src.on(a), op, axes, negate);
          },
          case_name("tensor_reduce", i));
    } else {
      const AluOp op0 = bitwise ? rng.pick(kBitOps) : rng.pick(kFloatOps);
      std::optional<VDesc> c0;
      const ScalarArg a0 = random_scalar(rng, l, rows, c0);
      const VDesc dst =
          l.make(type(), rows, reshape(rng, shape), {}, rng.coin(0.2) ? &src : nullptr);
      const VDesc res = l.make(rng.coin(0.6) ? DType::fp32 : type(), rows, {1}, {},
                               rng.coin(0.2) ? &dst : nullptr);
      const bool rev = rng.coin(0.5);
      expect_same(
          l.fill(),
          [&](ExecMode m, Arena& a) {
            exec_tensor_scalar_reduce(m, dst.on(a), src.on(a), op0, bind_scalar(a0, c0, a), rev, op,
                                      res.on(a));
          },
          case_name("tensor_scalar_reduce", i));
    }
  }
}

TEST(SemanticsFastVsReference, MatmulAndTransposes) {
  Rng rng(6);
  const std::vector<DType> mm_types = {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn,
                                       DType::fp8_e5m2};
  for (int i = 0; i < 120; ++i) {
    Layout l(rng);
    const bool big = i == 0;  // one full-size tile: K = M = 128, N = 512
    int64_t k = big ? 128 : rng.uni(1, 128), m = big ? 128 : rng.uni(1, 128);
    int64_t n = big ? 512 : rng.uni(1, 512);
    while (!big && k * m * n > 200000) (n > 16 ? n : m > 8 ? m : k) /= 2;
    const bool f32in = rng.coin(0.3);
    const DType ts = f32in ? DType::fp32 : rng.pick(mm_types),
                tm = f32in ? DType::fp32 : rng.pick(mm_types);
    const LayoutOpts in_opts{.broadcast = true, .fancy = !big};
    const std::vector<int64_t> st_shape =
        m % 2 == 0 && rng.coin(0.3) ? std::vector<int64_t>{2, m / 2} : std::vector<int64_t>{m};
    const VDesc st = l.make(ts, k, st_shape, in_opts);
    const VDesc mv = l.make(
        tm, k,
        n % 4 == 0 && rng.coin(0.3) ? std::vector<int64_t>{n / 4, 4} : std::vector<int64_t>{n},
        in_opts);
    const VDesc dst = l.make(rng.coin(0.8) ? DType::fp32 : DType::bf16, m, {n}, {.fancy = !big});
    const bool acc = rng.coin(0.5);
    expect_same(
        l.fill(),
        [&](ExecMode md, Arena& a) { exec_matmul(md, dst.on(a), st.on(a), mv.on(a), acc); },
        case_name("matmul", i));
  }
  for (int i = 0; i < 120; ++i) {
    Layout l(rng);
    const bool tensor = i % 2 == 0;
    const int64_t p = rng.uni(1, tensor ? 128 : 32), f = rng.uni(1, tensor ? 128 : 32);
    const DType t = tensor ? rng.pick(kFloatTypes) : any_type(rng);
    const auto fshape =
        f % 2 == 0 && rng.coin(0.3) ? std::vector<int64_t>{2, f / 2} : std::vector<int64_t>{f};
    const VDesc src = l.make(t, p, fshape, {.broadcast = true});
    const VDesc dst = l.make(tensor ? (rng.coin(0.7) ? DType::fp32 : t) : t, f, {p}, {},
                             !tensor && rng.coin(0.2) ? &src : nullptr);
    expect_same(
        l.fill(),
        [&](ExecMode m, Arena& a) {
          if (tensor)
            exec_transpose_tensor(m, dst.on(a), src.on(a));
          else
            exec_transpose_vector(m, dst.on(a), src.on(a));
        },
        case_name(tensor ? "transpose_tensor" : "transpose_vector", i));
  }
}

TEST(SemanticsFastVsReference, SelectIotaPredicated) {
  Rng rng(7);
  const CmpOp cmps[] = {CmpOp::eq, CmpOp::ne, CmpOp::lt, CmpOp::le, CmpOp::gt, CmpOp::ge};
  const std::vector<DType> pred_types = {DType::uint8, DType::uint16, DType::uint32, DType::int32};
  for (int i = 0; i < 300; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const DType dt = any_type(rng);
    std::vector<int64_t> steps(shape.size());
    for (auto& s : steps) s = rng.uni(-5, 5);
    const int64_t offset = rng.uni(-300, 300), cm = rng.uni(-4, 4);
    switch (i % 3) {
      case 0: {
        const VDesc on_true = l.make(rng.coin(0.7) ? dt : any_type(rng), rows, reshape(rng, shape),
                                     {.broadcast = true});
        const VDesc dst = l.make(dt, rows, shape, {}, rng.coin(0.2) ? &on_true : nullptr);
        const CmpOp c = cmps[rng.uni(0, 5)];
        const float off = f32(random_bits(rng, DType::fp32));
        expect_same(
            l.fill(),
            [&](ExecMode m, Arena& a) {
              exec_affine_select(m, dst.on(a), on_true.on(a), offset, cm, steps.data(), c, off);
            },
            case_name("affine_select", i));
        break;
      }
      case 1: {
        const VDesc dst = l.make(dt, rows, shape);
        const int64_t big = rng.coin(0.2) ? int64_t{1} << 31 : 0;  // saturation / rounding
        expect_same(
            l.fill(),
            [&](ExecMode m, Arena& a) { exec_iota(m, dst.on(a), offset - big, cm, steps.data()); },
            case_name("iota", i));
        break;
      }
      default: {
        const VDesc pred =
            l.make(rng.pick(pred_types), rows, reshape(rng, shape), {.broadcast = true});
        const bool tile = rng.coin(0.7);
        std::optional<VDesc> src;
        if (tile)
          src = l.make(rng.coin(0.8) ? dt : any_type(rng), rows, reshape(rng, shape),
                       {.broadcast = true});
        const VDesc dst = l.make(dt, rows, shape, {}, rng.coin(0.2) ? &pred : nullptr);
        const float imm = f32(random_bits(rng, DType::fp32));
        const bool rev = rng.coin(0.5);
        expect_same(
            l.fill(),
            [&](ExecMode m, Arena& a) {
              std::variant<float, View> s = imm;
              if (src) s = src->on(a);
              exec_copy_predicated(m, dst.on(a), s, pred.on(a), rev);
            },
            case_name("copy_predicated", i));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Independent checks. A plain dense tile in its own buffer.

struct Tile {
  DType dtype;
  int64_t rows, cols;
  Arena bytes;
  Tile(DType t, int64_t r, int64_t c) : dtype(t), rows(r), cols(c), bytes(r * c * dtype_size(t)) {}
  View view() {
    View v;
    v.base = bytes.data();
    v.dtype = dtype;
    v.rows = rows;
    v.row_stride = cols * static_cast<int64_t>(dtype_size(dtype));
    v.free_rank = 1;
    v.sizes[0] = cols;
    v.strides[0] = static_cast<int64_t>(dtype_size(dtype));
    return v;
  }
  uint32_t raw(int64_t r, int64_t c) const {
    return load_bits(dtype, bytes.data() + (r * cols + c) * dtype_size(dtype));
  }
  float get(int64_t r, int64_t c) const { return decode_to_float(dtype, raw(r, c)); }
  void set_raw(int64_t r, int64_t c, uint32_t b) {
    store_bits(dtype, bytes.data() + (r * cols + c) * dtype_size(dtype), b);
  }
  void set(int64_t r, int64_t c, float v) { set_raw(r, c, encode_from_float(dtype, v)); }
};

const ExecMode kModes[] = {ExecMode::fast, ExecMode::reference};

TEST(SemanticsIndependent, MatmulSmallIntegersIsExact) {
  Rng rng(11);
  for (int it = 0; it < 6; ++it) {
    const int64_t k = it == 0 ? 128 : rng.uni(1, 128), m = it == 0 ? 128 : rng.uni(1, 128);
    const int64_t n = it == 0 ? 512 : rng.uni(1, 200);
    Tile st(DType::bf16, k, m), mv(DType::bf16, k, n);
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < m; ++c) st.set(r, c, static_cast<float>(rng.uni(-8, 8)));
      for (int64_t c = 0; c < n; ++c) mv.set(r, c, static_cast<float>(rng.uni(-8, 8)));
    }
    for (ExecMode mode : kModes) {
      for (bool acc : {false, true}) {
        Tile dst(DType::fp32, m, n);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) dst.set(r, c, acc ? 1000.0f : kInf);
        exec_matmul(mode, dst.view(), st.view(), mv.view(), acc);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            int64_t exact = acc ? 1000 : 0;
            for (int64_t kk = 0; kk < k; ++kk)
              exact += static_cast<int64_t>(st.get(kk, i)) * static_cast<int64_t>(mv.get(kk, j));
            ASSERT_EQ(static_cast<float>(exact), dst.get(i, j)) << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(SemanticsIndependent, MatmulKernelsAgree) {
  // The FMA/AVX2 microkernel (when this CPU runs it) and the portable std::fma loop.
  if (!sem::matmul_fma_supported()) GTEST_SKIP() << "no FMA/AVX2 on this CPU";
  Rng rng(15);
  for (int it = 0; it < 40; ++it) {
    const int64_t k = rng.uni(0, 130), m = rng.uni(1, 40), n = rng.uni(1, 100);
    std::vector<float> a(k * m), b(k * n), c1(m * n), c2(m * n);
    for (auto& x : a) x = f32(random_bits(rng, DType::fp32));
    for (auto& x : b)
      x = rng.coin(0.5) ? f32(random_bits(rng, DType::fp32)) : random_plain(rng, -3, 3);
    ASSERT_TRUE(sem::matmul_f32_fma(a.data(), b.data(), c1.data(), k, m, n));
    sem::matmul_f32_portable(a.data(), b.data(), c2.data(), k, m, n);
    ASSERT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float))) << "case " << it;
  }
}

// fma(a, b, c) rounded once, computed in long double: the product is exact (48 <= 64 bits), the
// sum's long double rounding error is recovered with TwoSum and only matters when the long double
// sum sits exactly on a midpoint between two floats.
float fma_long_double(float a, float b, float c) {
  const long double p = static_cast<long double>(a) * b;
  const long double s = p + c;
  const long double bb = s - p;
  const long double err = (p - (s - bb)) + (c - bb);
  const float r = static_cast<float>(s);
  if (err == 0 || static_cast<long double>(r) == s) return r;
  const float other = std::nextafter(r, s > r ? kInf : -kInf);
  if (std::fabs(s - r) != std::fabs(static_cast<long double>(other) - s)) return r;  // not a tie
  return (err > 0) == (other > r) ? other : r;
}

TEST(SemanticsIndependent, MatmulFp32IsAFusedChain) {
  Rng rng(12);
  int differs_from_unfused = 0;
  for (int it = 0; it < 8; ++it) {
    const int64_t k = rng.uni(1, 128), m = rng.uni(1, 40), n = rng.uni(1, 70);
    Tile st(DType::fp32, k, m), mv(DType::fp32, k, n);
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < m; ++c) st.set(r, c, random_plain(rng, -20, 20));
      for (int64_t c = 0; c < n; ++c) mv.set(r, c, random_plain(rng, -20, 20));
    }
    for (ExecMode mode : kModes) {
      Tile dst(DType::fp32, m, n);
      exec_matmul(mode, dst.view(), st.view(), mv.view(), false);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float acc = 0.0f, unfused = 0.0f;
          for (int64_t kk = 0; kk < k; ++kk) {
            acc = fma_long_double(st.get(kk, i), mv.get(kk, j), acc);
            volatile float prod = st.get(kk, i) * mv.get(kk, j);  // a separate rounding
            unfused = unfused + prod;
          }
          ASSERT_EQ(bits(acc), bits(dst.get(i, j))) << i << "," << j;
          differs_from_unfused += bits(acc) != bits(unfused);
        }
      }
    }
  }
  EXPECT_GT(differs_from_unfused, 0) << "the test inputs never distinguish fma from mul+add";
}

TEST(SemanticsIndependent, TensorTransposeZeroAndNaN) {
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 4, 3), dst(DType::fp32, 3, 4), vdst(DType::fp32, 3, 4);
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 3; ++c) src.set(r, c, static_cast<float>(r * 3 + c + 1));
    src.set(1, 0, -0.0f);
    src.set(2, 1, f32(0x7fc01234u));  // NaN in column 1
    src.set(0, 2, kInf);              // Inf in column 2
    exec_transpose_tensor(mode, dst.view(), src.view());
    exec_transpose_vector(mode, vdst.view(), src.view());
    EXPECT_EQ(bits(dst.get(0, 1)), 0u) << "-0 becomes +0";
    EXPECT_EQ(bits(vdst.get(0, 1)), bits(-0.0f)) << "vector transpose is bit-exact";
    EXPECT_EQ(vdst.raw(1, 2), 0x7fc01234u);
    EXPECT_EQ(dst.get(0, 3), 10.0f);
    for (int64_t p = 0; p < 4; ++p) {
      EXPECT_EQ(dst.raw(1, p), 0x7fc00000u) << "a NaN poisons its whole output row";
      if (p == 0)
        EXPECT_EQ(dst.get(2, p), kInf);
      else
        EXPECT_EQ(dst.raw(2, p), 0x7fc00000u) << "Inf * 0 poisons the rest of its row";
    }
  }
}

TEST(SemanticsIndependent, TensorReduceAddIsSequential) {
  Rng rng(13);
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 16, 300), dst(DType::fp32, 16, 1);
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 300; ++c) src.set(r, c, random_plain(rng, -30, 30));
    exec_tensor_reduce(mode, dst.view(), src.view(), AluOp::add, 1, false);
    for (int64_t r = 0; r < 16; ++r) {
      float s = 0.0f;
      for (int64_t c = 0; c < 300; ++c) s = s + src.get(r, c);
      EXPECT_EQ(bits(s), dst.raw(r, 0));
    }
    exec_tensor_reduce(mode, dst.view(), src.view(), AluOp::max, 1, true);
    for (int64_t r = 0; r < 16; ++r) {
      float mx = -kInf;
      for (int64_t c = 0; c < 300; ++c) mx = std::max(mx, src.get(r, c));
      EXPECT_EQ(-mx, dst.get(r, 0));
    }
    src.set(3, 7, f32(0xffc0beefu));
    exec_tensor_reduce(mode, dst.view(), src.view(), AluOp::max, 1, false);
    EXPECT_EQ(dst.raw(3, 0), 0xffc0beefu) << "max propagates the NaN";
  }
}

TEST(SemanticsIndependent, ActivationMatchesLibmAndRanges) {
  Rng rng(14);
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 8, 200), dst(DType::fp32, 8, 200);
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < 200; ++c) src.set(r, c, random_plain(rng, -4, 6));
    exec_activation(mode, dst.view(), src.view(), ActFunc::exp, 0.5f, ScalarArg{-1.0f},
                    ReduceCmd::idle, nullptr, std::nullopt);
    for (int64_t r = 0; r < 8; ++r) {
      for (int64_t c = 0; c < 200; ++c) {
        volatile float t = src.get(r, c) * 0.5f;  // volatile: never contracted into an fma
        const float u = t + -1.0f;
        ASSERT_EQ(bits(std::exp(u)), dst.raw(r, c));
      }
    }
  }
  EXPECT_EQ(bits(act_apply(ActFunc::sqrt, 0.0f)), 0x7fc00000u) << "sqrt range starts at 2^-116";
  EXPECT_EQ(act_apply(ActFunc::sqrt, 0x1p-116f), 0x1p-58f);
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::log, 0x1p-65f)));
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::sin, 3.2f)));
  EXPECT_EQ(act_apply(ActFunc::sin, 0.5f), std::sin(0.5f));
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::reciprocal, 0x1p43f)));
  EXPECT_EQ(act_apply(ActFunc::reciprocal, -4.0f), -0.25f);
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::rsqrt, 0x1p98f)));
  EXPECT_EQ(act_apply(ActFunc::rsqrt, 4.0f), 0.5f);
  EXPECT_EQ(bits(act_apply(ActFunc::gelu, -kInf)), bits(-0.0f));
  EXPECT_EQ(act_apply(ActFunc::relu, -3.0f), 0.0f);
  EXPECT_EQ(bits(act_apply(ActFunc::exp, f32(0xff812345u))), 0xffc12345u) << "NaN in, that NaN out";
  EXPECT_EQ(act_apply(ActFunc::sigmoid, 0.0f), 0.5f);
}

TEST(SemanticsIndependent, ActivationRegisterStateMachine) {
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 2, 3), dst(DType::bf16, 2, 3), res(DType::fp32, 2, 1);
    for (int64_t c = 0; c < 3; ++c) {
      src.set(0, c, static_cast<float>(c + 1));  // 1 2 3
      src.set(1, c, 0.5f);
    }
    float regs[2] = {100.0f, 200.0f};
    auto run = [&](ReduceCmd cmd, bool readout) {
      exec_activation(mode, dst.view(), src.view(), ActFunc::copy, 1.0f, std::nullopt, cmd, regs,
                      readout ? std::optional<View>(res.view()) : std::nullopt);
    };
    run(ReduceCmd::idle, true);
    EXPECT_EQ(res.get(0, 0), 100.0f);
    run(ReduceCmd::reduce, false);
    EXPECT_EQ(regs[0], 106.0f);
    EXPECT_EQ(regs[1], 201.5f);
    run(ReduceCmd::reset, true);
    EXPECT_EQ(res.get(1, 0), 0.0f);
    EXPECT_EQ(regs[0], 0.0f);
    run(ReduceCmd::reduce, false);
    run(ReduceCmd::reduce, true);
    EXPECT_EQ(res.get(0, 0), 12.0f);
    EXPECT_EQ(res.get(1, 0), 3.0f);
    run(ReduceCmd::reset_reduce, true);
    EXPECT_EQ(res.get(0, 0), 6.0f);
    EXPECT_EQ(regs[1], 1.5f);
    // The registers accumulate the fp32 outputs, not the dst (bf16) values.
    src.set(0, 0, 1.00390625f);  // 1 + 2^-8: not a bf16 value
    run(ReduceCmd::reset_reduce, false);
    EXPECT_EQ(regs[0], 6.00390625f);
    EXPECT_EQ(dst.get(0, 0), 1.0f);
  }
}

TEST(SemanticsIndependent, AluRules) {
  EXPECT_EQ(alu_apply(AluOp::subtract, 5.0f, 3.0f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::divide, 1.0f, 4.0f), 0.25f);
  EXPECT_EQ(alu_apply(AluOp::pow, 2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_max, -7.0f, 3.0f), 7.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, -7.0f, 3.0f), 3.0f);
  EXPECT_EQ(bits(alu_apply(AluOp::max, -0.0f, 0.0f)), 0u);
  EXPECT_EQ(bits(alu_apply(AluOp::min, 0.0f, -0.0f)), bits(-0.0f));
  const float nan_a = f32(0x7fc0aaaau), nan_b = f32(0xff80bbbbu);  // quiet, signalling
  EXPECT_EQ(bits(alu_apply(AluOp::add, nan_a, nan_b)), 0x7fc0aaaau) << "first NaN operand";
  EXPECT_EQ(bits(alu_apply(AluOp::add, 1.0f, nan_b)), 0xffc0bbbbu) << "quieted";
  EXPECT_EQ(bits(alu_apply(AluOp::max, 1.0f, nan_a)), 0x7fc0aaaau);
  EXPECT_EQ(bits(alu_apply(AluOp::min, nan_a, -kInf)), 0x7fc0aaaau);
  EXPECT_EQ(bits(alu_apply(AluOp::subtract, kInf, kInf)), 0x7fc00000u) << "default NaN";
  EXPECT_TRUE(std::isnan(alu_apply(AluOp::pow, nan_a, 0.0f)));
  // Comparisons: 1.0 / 0.0, IEEE with NaN.
  EXPECT_EQ(alu_apply(AluOp::is_gt, 2.0f, 1.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_ge, 1.0f, 1.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_lt, 2.0f, 1.0f), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::is_le, -0.0f, 0.0f), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_equal, nan_a, nan_a), 0.0f);
  EXPECT_EQ(alu_apply(AluOp::not_equal, nan_a, nan_a), 1.0f);
  EXPECT_EQ(alu_apply(AluOp::is_gt, nan_a, 1.0f), 0.0f);
  // Bitwise through the integer domain (immediates round to nearest even).
  EXPECT_EQ(alu_apply(AluOp::bitwise_and, 12.0f, 10.0f), 8.0f);
  EXPECT_EQ(alu_apply(AluOp::bitwise_or, 2.5f, 3.5f), 6.0f);  // 2 | 4
  EXPECT_EQ(alu_apply(AluOp::shift_left, 1.0f, 40.0f), 0.0f);
}

TEST(SemanticsIndependent, IntegerResultsAndBitwiseOps) {
  for (ExecMode mode : kModes) {
    // Saturating conversions of fp32 results.
    Tile src(DType::fp32, 1, 6), i32(DType::int32, 1, 6), u8(DType::uint8, 1, 6);
    const float in[] = {3e9f, -3e9f, 2.5f, -5.0f, 300.0f, std::nanf("")};
    for (int c = 0; c < 6; ++c) src.set(0, c, in[c]);
    exec_tensor_scalar(mode, i32.view(), src.view(), AluOp::add, 0.0f, false, std::nullopt, 0.0f,
                       false);
    exec_tensor_scalar(mode, u8.view(), src.view(), AluOp::add, 0.0f, false, std::nullopt, 0.0f,
                       false);
    const uint32_t want_i32[] = {0x7fffffffu, 0x80000000u, 2u, static_cast<uint32_t>(-5), 300u, 0u};
    const uint32_t want_u8[] = {255u, 0u, 2u, 0u, 255u, 0u};
    for (int c = 0; c < 6; ++c) {
      EXPECT_EQ(i32.raw(0, c), want_i32[c]) << c;
      EXPECT_EQ(u8.raw(0, c), want_u8[c]) << c;
    }
    // Bitwise on int32 / uint32 values, exact beyond 2^24, shifts, saturation.
    Tile a(DType::int32, 1, 5), b(DType::uint32, 1, 5), out(DType::int32, 1, 5),
        uout(DType::uint8, 1, 5);
    const int32_t av[] = {-1, 0x01234567, -16, 0x40000000, 7};
    const uint32_t bv[] = {0xf0f0f0f0u, 0x00ff00ffu, 2u, 1u, 33u};
    for (int c = 0; c < 5; ++c) {
      a.set_raw(0, c, static_cast<uint32_t>(av[c]));
      b.set_raw(0, c, bv[c]);
    }
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::bitwise_and);
    EXPECT_EQ(out.raw(0, 0), 0x7fffffffu) << "0xf0f0f0f0 (as uint32 value) saturates into int32";
    EXPECT_EQ(out.raw(0, 1), 0x00230067u);
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::shift_right);
    EXPECT_EQ(out.raw(0, 2), static_cast<uint32_t>(-4)) << "arithmetic shift of a negative int32";
    EXPECT_EQ(out.raw(0, 4), 0u) << "shift count 33 gives 0";
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::shift_left);
    EXPECT_EQ(out.raw(0, 3), 0x7fffffffu) << "2^31 saturates";
    exec_tensor_tensor(mode, uout.view(), a.view(), b.view(), AluOp::bitwise_xor);
    EXPECT_EQ(uout.raw(0, 4), 38u);  // 7 ^ 33
    EXPECT_EQ(uout.raw(0, 2), 0u);   // -14 saturates to 0
    // Immediates round to nearest even before a bitwise op.
    exec_tensor_scalar(mode, out.view(), a.view(), AluOp::bitwise_and, 6.5f, false,
                       AluOp::shift_left, 1.0f, false);
    EXPECT_EQ(out.raw(0, 4), 12u);  // (7 & 6) << 1
  }
}

TEST(SemanticsIndependent, IotaAndAffineSelectValues) {
  for (ExecMode mode : kModes) {
    Tile i32(DType::int32, 3, 4), bf(DType::bf16, 3, 4), u8(DType::uint8, 3, 4);
    const int64_t steps[] = {5};
    exec_iota(mode, i32.view(), -7, 100, steps);
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(static_cast<int32_t>(i32.raw(r, c)), -7 + 100 * r + 5 * c);
    }
    exec_iota(mode, u8.view(), -7, 100, steps);
    EXPECT_EQ(u8.raw(0, 0), 0u);
    EXPECT_EQ(u8.raw(2, 3), 208u);
    const int64_t big_steps[] = {1};
    exec_iota(mode, bf.view(), 257, 0, big_steps);
    EXPECT_EQ(bf.get(0, 0), 256.0f) << "257 rounds to the nearest even bf16";
    EXPECT_EQ(bf.get(0, 1), 258.0f);
    // Causal mask: keep (r - c >= 0), else -inf; two free dims with their own steps.
    Tile on_true(DType::fp32, 3, 4), dst(DType::fp32, 3, 4);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) on_true.set(r, c, static_cast<float>(10 * r + c));
    View d = dst.view(), t = on_true.view();
    for (View* v : {&d, &t}) {
      v->free_rank = 2;
      v->sizes = {2, 2, 0, 0};
      v->strides = {8, 4, 0, 0};
    }
    const int64_t st2[] = {-2, -1};
    exec_affine_select(mode, d, t, 0, 1, st2, CmpOp::ge, -kInf);
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t c = 0; c < 4; ++c) {
        EXPECT_EQ(dst.get(r, c), r - c >= 0 ? static_cast<float>(10 * r + c) : -kInf)
            << r << "," << c;
      }
    }
  }
}

TEST(SemanticsIndependent, PredicatedCopyAndScalarReduce) {
  for (ExecMode mode : kModes) {
    Tile dst(DType::fp32, 2, 4), src(DType::fp32, 2, 4), pred(DType::uint16, 2, 4),
        res(DType::fp32, 2, 1);
    for (int64_t c = 0; c < 4; ++c) {
      for (int64_t r = 0; r < 2; ++r) {
        dst.set(r, c, -1.0f);
        src.set(r, c, static_cast<float>(r * 4 + c));
        pred.set_raw(r, c, c % 2 == 0 ? 0x100u : 0u);
      }
    }
    exec_copy_predicated(mode, dst.view(), src.view(), pred.view(), false);
    EXPECT_EQ(dst.get(1, 0), 4.0f);
    EXPECT_EQ(dst.get(1, 1), -1.0f);
    exec_copy_predicated(mode, dst.view(), 9.0f, pred.view(), true);
    EXPECT_EQ(dst.get(0, 1), 9.0f);
    EXPECT_EQ(dst.get(0, 2), 2.0f);
    exec_tensor_scalar_reduce(mode, dst.view(), src.view(), AluOp::multiply, 2.0f, false,
                              AluOp::max, res.view());
    EXPECT_EQ(dst.get(1, 3), 14.0f);
    EXPECT_EQ(res.get(0, 0), 6.0f);
    EXPECT_EQ(res.get(1, 0), 14.0f);
  }
}

}  // namespace
}  // namespace ncv
