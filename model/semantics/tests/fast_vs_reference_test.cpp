// Tests of model/semantics: the fast paths against the reference paths, bit for bit.
//
// Every case lays its Views out in one byte arena (contiguous, strided with gaps, broadcast,
// reversed, indirect row_offsets, sometimes aliasing each other), fills it with values that
// include NaN payloads, +-Inf, -0, subnormals and extreme magnitudes, runs the instruction in
// both modes on two copies of the arena and compares every byte (and the activation registers).
// All randomness comes from fixed seeds.
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

#include "model/semantics/internal.h"
#include "model/semantics/semantics.h"
#include "model/semantics/tests/test_values.h"

namespace ncv {
namespace {

using namespace semtest;  // NOLINT

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
    AluOp::not_equal, AluOp::is_gt,    AluOp::is_ge,    AluOp::is_lt,   AluOp::is_le,
    AluOp::abs,       AluOp::square,   AluOp::relu,     AluOp::rsqrt,   AluOp::reciprocal};
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
    return from_bits(random_bits(rng, DType::fp32));
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

// GpSimd's native int32 arithmetic (tensor_tensor_native_int): both paths, int32 and uint32
// tiles, every such operator, aliasing included; the same undefined-result reason from both
// (a result beyond dst's range). Random bits overflow almost always, so three cases in four draw
// their inputs from [0, 2^15), where only a negative difference into uint32 overflows.
TEST(SemanticsFastVsReference, TensorTensorGpSimdIntegerArithmetic) {
  Rng rng(45);
  const std::vector<DType> int32s = {DType::int32, DType::uint32};
  const std::vector<AluOp> ops = {AluOp::add,     AluOp::subtract, AluOp::multiply,
                                  AluOp::max,     AluOp::min,      AluOp::abs_max,
                                  AluOp::abs_min, AluOp::is_equal, AluOp::is_lt};
  int undefined = 0;
  for (int i = 0; i < 100; ++i) {
    Layout l(rng);
    const int64_t rows = random_rows(rng);
    const auto shape = random_free_shape(rng, 1024);
    const AluOp op = rng.pick(ops);
    const VDesc s0 = l.make(rng.pick(int32s), rows, shape, {.broadcast = true});
    const VDesc s1 = l.make(rng.pick(int32s), rows, reshape(rng, shape), {.broadcast = true});
    const VDesc dst =
        l.make(rng.pick(int32s), rows, reshape(rng, shape), {}, rng.coin(0.2) ? &s1 : nullptr);
    Arena arena = l.fill();
    if (rng.coin(0.75)) {
      for (const VDesc& d : {s0, s1}) {
        const View v = d.on(arena);
        for (int64_t r = 0; r < v.rows; ++r) {
          for (int64_t f = 0; f < v.free_elems(); ++f)
            store_bits(v.dtype, v.at(r, f), rng.u32() >> 17);
        }
      }
    }
    std::string why[2];
    expect_same(
        arena,
        [&](ExecMode m, Arena& a) {
          why[m == ExecMode::fast ? 0 : 1] =
              exec_tensor_tensor(m, dst.on(a), s0.on(a), s1.on(a), op, Engine::GpSimd);
        },
        case_name("tensor_tensor on GpSimd, int32", i));
    EXPECT_EQ(why[0], why[1]) << case_name("tensor_tensor on GpSimd, int32", i);
    undefined += why[0].empty() ? 0 : 1;
  }
  // Both outcomes are exercised.
  EXPECT_GT(undefined, 10);
  EXPECT_LT(undefined, 60);
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
    const float value = from_bits(random_bits(rng, DType::fp32));
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
  int out_of_range_cases = 0;
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
    for (auto& r : regs0) r = from_bits(random_bits(rng, DType::fp32));
    std::vector<float> regs_fast = regs0, regs_ref = regs0;
    // Inputs outside func's range: the default NaN, or (every third case) a caller's substitute;
    // both modes write it and count the same inputs, the same one first.
    ActOutOfRange oor_fast, oor_ref;
    if (i % 3 == 1) oor_fast.substitute = oor_ref.substitute = 0x1p100f;
    expect_same(
        l.fill(),
        [&](ExecMode m, Arena& a) {
          const bool fast = m == ExecMode::fast;
          float* regs = fast ? regs_fast.data() : regs_ref.data();
          std::optional<ScalarArg> b;
          if (bias) b = bind_scalar(*bias, cb, a);
          exec_activation(m, dst.on(a), src.on(a), func, bind_scalar(scale, cs, a), b, cmd, regs,
                          rr ? std::optional<View>(rr->on(a)) : std::nullopt,
                          i % 3 == 0 ? nullptr
                          : fast     ? &oor_fast
                                     : &oor_ref);
        },
        case_name("activation", i));
    ASSERT_EQ(0, std::memcmp(regs_fast.data(), regs_ref.data(), rows * sizeof(float)))
        << "activation registers, case " << i;
    ASSERT_EQ(oor_fast.count, oor_ref.count) << "out-of-range inputs, case " << i;
    if (oor_fast.count > 0) {
      ASSERT_EQ(to_bits(oor_fast.first), to_bits(oor_ref.first)) << "first one, case " << i;
      ++out_of_range_cases;
    }
  }
  EXPECT_GT(out_of_range_cases, 10) << "the random inputs must reach the ranges' outside";
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

// Mostly finite values (specials in about 1 of 40 elements), so that the fast paths meant for
// finite data (transposes, reductions) run as well as their fallbacks.
Arena fill_mostly_finite(Rng& rng, size_t bytes, const std::vector<VDesc>& views) {
  Arena a(bytes);
  for (auto& b : a) b = static_cast<uint8_t>(rng.u32());
  for (const VDesc& d : views) {
    const View v = d.on(a);
    for (int64_t r = 0; r < v.rows; ++r) {
      for (int64_t f = 0; f < v.free_elems(); ++f) {
        const uint32_t b =
            rng.coin(0.975)
                ? encode_from_float(v.dtype, rng.coin(0.05) ? -0.0f : random_plain(rng, -4, 4))
                : random_bits(rng, v.dtype);
        store_bits(v.dtype, v.at(r, f), b);
      }
    }
  }
  return a;
}

TEST(SemanticsFastVsReference, TensorTransposeMostlyFinite) {
  Rng rng(9);
  for (int i = 0; i < 60; ++i) {
    Layout l(rng);
    const int64_t p = rng.uni(1, 128), f = rng.uni(1, 128);
    const VDesc src = l.make(rng.pick(kFloatTypes), p, {f}, {.fancy = rng.coin(0.3)});
    const VDesc dst = l.make(rng.coin(0.7) ? DType::fp32 : DType::bf16, f, {p});
    const Arena a =
        fill_mostly_finite(rng, static_cast<size_t>(dst.offset + dst.region + 64), {src, dst});
    expect_same(
        a, [&](ExecMode m, Arena& x) { exec_transpose_tensor(m, dst.on(x), src.on(x)); },
        case_name("transpose_tensor mostly finite", i));
  }
}

// Two views of one partition-major array, as the interpreter lays out SBUF: equal row strides,
// columns interleaved, sometimes overlapping (also across rows). Streaming rows must give the
// staged result in every case.
TEST(SemanticsFastVsReference, InterleavedPartitionRows) {
  Rng rng(8);
  for (int i = 0; i < 600; ++i) {
    const int64_t stride = rng.uni(4, 32) * 4, rows = rng.uni(1, 12);
    const int64_t margin = 3 * stride;
    auto view = [&](DType t, int64_t offset, int64_t n) {
      VDesc v;
      v.dtype = t;
      v.rows = rows;
      v.row_stride = stride;
      v.offset = margin + offset;
      v.free_rank = 1;
      v.sizes[0] = n;
      v.strides[0] = static_cast<int64_t>(dtype_size(t));
      return v;
    };
    const DType st = rng.pick(kFloatTypes), dt = rng.coin(0.5) ? st : rng.pick(kFloatTypes);
    const int64_t n = rng.uni(1, stride / 4);
    const int64_t src_off = rng.uni(0, stride - n * 4);
    const int64_t dst_off = src_off + rng.uni(-2, 2) * stride + rng.uni(-n * 4, n * 4);
    const VDesc src = view(st, src_off, n), dst = view(dt, dst_off, n);
    const VDesc col = view(DType::fp32, dst_off, 1);
    const size_t bytes = static_cast<size_t>(2 * margin + (rows + 1) * stride);
    const Arena a = fill_mostly_finite(rng, bytes, {src});
    const int what = i % 4;
    const AluOp reduce_op = rng.coin(0.5) ? AluOp::add : AluOp::max;
    const bool negate = rng.coin(0.5);
    expect_same(
        a,
        [&](ExecMode m, Arena& x) {
          if (what == 0) exec_copy(m, dst.on(x), src.on(x));
          if (what == 1) {
            exec_tensor_scalar(m, dst.on(x), src.on(x), AluOp::multiply, ScalarArg{0.75f}, false,
                               std::nullopt, ScalarArg{0.0f}, false);
          }
          if (what == 2) {
            exec_tensor_reduce(m, col.on(x), src.on(x), reduce_op, 1, negate);
          }
          if (what == 3) {
            exec_activation(m, dst.on(x), src.on(x), ActFunc::exp, ScalarArg{1.0f}, std::nullopt,
                            ReduceCmd::idle, nullptr, std::nullopt);
          }
        },
        case_name("interleaved rows", i));
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
        const float off = from_bits(random_bits(rng, DType::fp32));
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
        const float imm = from_bits(random_bits(rng, DType::fp32));
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

}  // namespace
}  // namespace ncv
