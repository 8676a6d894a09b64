// Tests of model/semantics against independent computations written here: exact integer
// matmuls, long double fma chains, sequential sums, libm, the activation register state
// machine, ALU and integer rules.
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

#include "model/numerics/tests/exp_reference.h"
#include "model/semantics/internal.h"
#include "model/semantics/semantics.h"
#include "model/semantics/tests/dense_tile.h"
#include "model/semantics/tests/test_values.h"

namespace ncv {
namespace {

using namespace semtest;  // NOLINT

// ---------------------------------------------------------------------------------------------
// Independent checks, on dense tiles in their own buffers (dense_tile.h).

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
  // Every vector microkernel this CPU runs against the portable std::fma loop.
  if (semantics::matmul_kernels().empty()) GTEST_SKIP() << "no vector matmul kernel on this CPU";
  for (const semantics::MatmulKernel* kern : semantics::matmul_kernels()) {
    Rng rng(15);
    for (int it = 0; it < 60; ++it) {
      const int64_t k = rng.uni(0, 130), m = rng.uni(1, 40), n = rng.uni(1, 100);
      std::vector<float> a(k * m), b(k * n), c1(m * n), c2(m * n);
      for (auto& x : a) x = from_bits(random_bits(rng, DType::fp32));
      for (auto& x : b)
        x = rng.coin(0.5) ? from_bits(random_bits(rng, DType::fp32)) : random_plain(rng, -3, 3);
      const int64_t mb = (m + kern->mr - 1) / kern->mr, nb = (n + kern->nr - 1) / kern->nr;
      std::vector<float> ap(std::max<int64_t>(mb * k * kern->mr, 1)),
          bp(std::max<int64_t>(nb * k * kern->nr, 1));
      semantics::pack_matmul_a(*kern, a.data(), ap.data(), k, m);
      semantics::pack_matmul_b(*kern, b.data(), bp.data(), k, n);
      ASSERT_TRUE(kern->run(ap.data(), bp.data(), c1.data(), k, m, n));
      semantics::matmul_f32_portable(a.data(), b.data(), c2.data(), k, m, n);
      ASSERT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)))
          << kern->name << " case " << it;
    }
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
          ASSERT_EQ(to_bits(acc), to_bits(dst.get(i, j))) << i << "," << j;
          differs_from_unfused += to_bits(acc) != to_bits(unfused);
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
    src.set(2, 1, from_bits(0x7fc01234u));  // NaN in column 1
    src.set(0, 2, kInf);                    // Inf in column 2
    exec_transpose_tensor(mode, dst.view(), src.view());
    exec_transpose_vector(mode, vdst.view(), src.view());
    EXPECT_EQ(to_bits(dst.get(0, 1)), 0u) << "-0 becomes +0";
    EXPECT_EQ(to_bits(vdst.get(0, 1)), to_bits(-0.0f)) << "vector transpose is bit-exact";
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
      EXPECT_EQ(to_bits(s), dst.raw(r, 0));
    }
    exec_tensor_reduce(mode, dst.view(), src.view(), AluOp::max, 1, true);
    for (int64_t r = 0; r < 16; ++r) {
      float mx = -kInf;
      for (int64_t c = 0; c < 300; ++c) mx = std::max(mx, src.get(r, c));
      EXPECT_EQ(-mx, dst.get(r, 0));
    }
    src.set(3, 7, from_bits(0xffc0beefu));
    exec_tensor_reduce(mode, dst.view(), src.view(), AluOp::max, 1, false);
    EXPECT_EQ(dst.raw(3, 0), 0xffc0beefu) << "max propagates the NaN";
  }
}

TEST(SemanticsIndependent, ActivationIsFaithfulAndKeepsRanges) {
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
        ASSERT_TRUE(exptest::is_faithful_exp(u, from_bits(dst.raw(r, c))));
      }
    }
  }
  EXPECT_EQ(to_bits(act_apply(ActFunc::sqrt, 0.0f)), 0x7fc00000u) << "sqrt range starts at 2^-116";
  EXPECT_EQ(act_apply(ActFunc::sqrt, 0x1p-116f), 0x1p-58f);
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::log, 0x1p-65f)));
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::sin, 3.2f)));
  EXPECT_EQ(act_apply(ActFunc::sin, 0.5f), std::sin(0.5f));
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::reciprocal, 0x1p43f)));
  EXPECT_EQ(act_apply(ActFunc::reciprocal, -4.0f), -0.25f);
  EXPECT_TRUE(std::isnan(act_apply(ActFunc::rsqrt, 0x1p98f)));
  EXPECT_EQ(act_apply(ActFunc::rsqrt, 4.0f), 0.5f);
  EXPECT_EQ(to_bits(act_apply(ActFunc::gelu, -kInf)), to_bits(-0.0f));
  EXPECT_EQ(act_apply(ActFunc::relu, -3.0f), 0.0f);
  EXPECT_EQ(to_bits(act_apply(ActFunc::exp, from_bits(0xff812345u))), 0xffc12345u)
      << "NaN in, that NaN out";
  EXPECT_EQ(act_apply(ActFunc::sigmoid, 0.0f), 0.5f);
}

// Outside a function's documented range the ISA gives no value: exec_activation writes and
// accumulates the caller's substitute there (the default NaN without one), counts those inputs
// and keeps the first; inside the range, and for a function without one, nothing is counted.
TEST(SemanticsIndependent, ActivationOutsideItsRangeWritesTheSubstitute) {
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 2, 4), dst(DType::fp32, 2, 4), res(DType::fp32, 2, 1);
    const float row0[] = {0.5f, 0.0f, -2.0f, 0x1p43f};  // reciprocal: 0 and 2^43 are outside
    for (int64_t c = 0; c < 4; ++c) {
      src.set(0, c, row0[c]);
      src.set(1, c, 1.0f);
    }
    float regs[2] = {0.0f, 0.0f};
    ActOutOfRange oor{.substitute = 7.0f};
    exec_activation(mode, dst.view(), src.view(), ActFunc::reciprocal, 1.0f, std::nullopt,
                    ReduceCmd::reset_reduce, regs, res.view(), &oor);
    EXPECT_EQ(oor.count, 2);
    EXPECT_EQ(to_bits(oor.first), to_bits(0.0f));
    EXPECT_EQ(dst.get(0, 0), 2.0f);
    EXPECT_EQ(dst.get(0, 1), 7.0f);
    EXPECT_EQ(dst.get(0, 2), -0.5f);
    EXPECT_EQ(dst.get(0, 3), 7.0f);
    EXPECT_EQ(res.get(0, 0), 2.0f + 7.0f - 0.5f + 7.0f) << "the substitute is accumulated";
    EXPECT_EQ(res.get(1, 0), 4.0f);
    // The count adds up over calls; the first stays the first call's.
    src.set(1, 2, 4.0f);  // sin: 4 and row 0's 2^43 are outside [-pi, pi]
    exec_activation(mode, dst.view(), src.view(), ActFunc::sin, 1.0f, std::nullopt, ReduceCmd::idle,
                    nullptr, std::nullopt, &oor);
    EXPECT_EQ(oor.count, 4);
    EXPECT_EQ(to_bits(oor.first), to_bits(0.0f));
    EXPECT_EQ(dst.get(1, 2), 7.0f);
    EXPECT_EQ(dst.get(1, 0), std::sin(1.0f));
    // Without one: the default NaN, act_apply's value.
    exec_activation(mode, dst.view(), src.view(), ActFunc::sin, 1.0f, std::nullopt, ReduceCmd::idle,
                    nullptr, std::nullopt);
    EXPECT_EQ(dst.raw(1, 2), 0x7fc00000u);
    // exp has no range: even inf is counted nowhere.
    src.set(0, 0, kInf);
    exec_activation(mode, dst.view(), src.view(), ActFunc::exp, 1.0f, std::nullopt, ReduceCmd::idle,
                    nullptr, std::nullopt, &oor);
    EXPECT_EQ(oor.count, 4);
  }
  EXPECT_EQ(act_range_text(ActFunc::reciprocal), "2^-42 <= |x| <= 2^42");
  EXPECT_EQ(act_range_text(ActFunc::log), "2^-64 <= x <= 2^64");
  EXPECT_EQ(act_range_text(ActFunc::sin), "-3.14159274 <= x <= 3.14159274");
  EXPECT_EQ(act_range_text(ActFunc::exp), "");
  EXPECT_TRUE(act_in_documented_range(ActFunc::sin, 3.14159274f));
  EXPECT_FALSE(act_in_documented_range(ActFunc::sin, 3.1415930f));
  EXPECT_TRUE(act_in_documented_range(ActFunc::rsqrt, from_bits(0x7fc00000u))) << "NaN passes";
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

// The unary ALU ops read the first operand only; each result is the fp32 value nearest the
// exact one (checked here against double-precision arithmetic, correctly rounded for these
// inputs), NaN in gives the quieted NaN out.
TEST(SemanticsIndependent, UnaryAluOps) {
  const float xs[] = {4.0f, 2.0f, 0.3f, 1e-30f, 3.0e38f, -2.5f, 7.0f, 0.1f};
  for (float x : xs) {
    const double d = x;
    for (float ignored : {0.0f, 5.0f}) {
      EXPECT_EQ(alu_apply(AluOp::abs, x, ignored), std::fabs(x)) << x;
      EXPECT_EQ(alu_apply(AluOp::square, x, ignored), static_cast<float>(d * d)) << x;
      EXPECT_EQ(alu_apply(AluOp::relu, x, ignored), x > 0 ? x : 0.0f) << x;
      EXPECT_EQ(alu_apply(AluOp::reciprocal, x, ignored), static_cast<float>(1.0 / d)) << x;
      if (x > 0) {
        EXPECT_EQ(alu_apply(AluOp::rsqrt, x, ignored), static_cast<float>(1.0 / std::sqrt(d))) << x;
      }
    }
  }
  EXPECT_EQ(alu_apply(AluOp::rsqrt, 4.0f, 0.0f), 0.5f);
  EXPECT_EQ(alu_apply(AluOp::rsqrt, 0.25f, 0.0f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::rsqrt, 0.0f, 0.0f), kInf);
  EXPECT_EQ(alu_apply(AluOp::rsqrt, -0.0f, 0.0f), -kInf);
  EXPECT_EQ(to_bits(alu_apply(AluOp::rsqrt, kInf, 0.0f)), 0u);
  EXPECT_EQ(to_bits(alu_apply(AluOp::rsqrt, -1.0f, 0.0f)), 0x7fc00000u) << "default NaN";
  EXPECT_EQ(alu_apply(AluOp::reciprocal, -0.0f, 0.0f), -kInf);
  EXPECT_EQ(to_bits(alu_apply(AluOp::relu, -0.0f, 0.0f)), 0u) << "relu(-0) = +0";
  EXPECT_EQ(to_bits(alu_apply(AluOp::abs, -0.0f, 0.0f)), 0u);
  EXPECT_EQ(alu_apply(AluOp::square, 1e30f, 0.0f), kInf);
  const float snan = from_bits(0xff80bbbbu);
  for (AluOp op : {AluOp::abs, AluOp::square, AluOp::relu, AluOp::rsqrt, AluOp::reciprocal}) {
    EXPECT_EQ(to_bits(alu_apply(op, snan, 0.0f)), 0xffc0bbbbu) << alu_op_name(op);
    EXPECT_TRUE(is_unary(op));
    EXPECT_FALSE(is_bitwise(op));
  }
}

TEST(SemanticsIndependent, AluRules) {
  EXPECT_EQ(alu_apply(AluOp::subtract, 5.0f, 3.0f), 2.0f);
  EXPECT_EQ(alu_apply(AluOp::divide, 1.0f, 4.0f), 0.25f);
  EXPECT_EQ(alu_apply(AluOp::pow, 2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_max, -7.0f, 3.0f), 7.0f);
  EXPECT_EQ(alu_apply(AluOp::abs_min, -7.0f, 3.0f), 3.0f);
  EXPECT_EQ(to_bits(alu_apply(AluOp::max, -0.0f, 0.0f)), 0u);
  EXPECT_EQ(to_bits(alu_apply(AluOp::min, 0.0f, -0.0f)), to_bits(-0.0f));
  const float nan_a = from_bits(0x7fc0aaaau), nan_b = from_bits(0xff80bbbbu);  // quiet, signalling
  EXPECT_EQ(to_bits(alu_apply(AluOp::add, nan_a, nan_b)), 0x7fc0aaaau) << "first NaN operand";
  EXPECT_EQ(to_bits(alu_apply(AluOp::add, 1.0f, nan_b)), 0xffc0bbbbu) << "quieted";
  EXPECT_EQ(to_bits(alu_apply(AluOp::max, 1.0f, nan_a)), 0x7fc0aaaau);
  EXPECT_EQ(to_bits(alu_apply(AluOp::min, nan_a, -kInf)), 0x7fc0aaaau);
  EXPECT_EQ(to_bits(alu_apply(AluOp::subtract, kInf, kInf)), 0x7fc00000u) << "default NaN";
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

// GpSimd computes tensor_tensor's arithmetic on int32/uint32 tiles in native integer arithmetic
// (ISA-NEW tensor_tensor: "exact results for all 32-bit integer values"), where the Vector engine
// goes through fp32 and rounds beyond 2^24; divide stays fp32 (integer division undocumented),
// and a mixed-dtype (fp32) operand keeps fp32. A result beyond the destination's range is
// undefined (GpSimdIntegerOverflowIsUndefined).
TEST(SemanticsIndependent, GpSimdInt32ArithmeticIsExact) {
  for (ExecMode mode : kModes) {
    Tile a(DType::int32, 1, 4), b(DType::int32, 1, 4), out(DType::int32, 1, 4);
    const int32_t av[] = {(1 << 24) + 1, 123456789, -2000000000, 46340};
    const int32_t bv[] = {2, -7, -100000000, 46340};
    for (int c = 0; c < 4; ++c) {
      a.set_raw(0, c, static_cast<uint32_t>(av[c]));
      b.set_raw(0, c, static_cast<uint32_t>(bv[c]));
    }
    const auto got = [&](int c) { return static_cast<int32_t>(out.raw(0, c)); };
    EXPECT_EQ(exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::add, Engine::GpSimd),
              "");
    EXPECT_EQ(got(0), (1 << 24) + 3);
    EXPECT_EQ(got(1), 123456782);
    EXPECT_EQ(got(2), -2100000000);
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::add, Engine::Vector);
    EXPECT_EQ(got(0), (1 << 24) + 2) << "fp32: 2^24 + 1 reads as 2^24";
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::subtract, Engine::GpSimd);
    EXPECT_EQ(got(1), 123456796);
    EXPECT_EQ(got(2), -1900000000);
    b.set_raw(0, 2, 1u);
    EXPECT_EQ(
        exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::multiply, Engine::GpSimd),
        "");
    EXPECT_EQ(got(1), -864197523);
    EXPECT_EQ(got(3), 46340 * 46340) << "the largest square below 2^31";
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::max, Engine::GpSimd);
    EXPECT_EQ(got(0), (1 << 24) + 1) << "not rounded to 2^24";
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::is_gt, Engine::GpSimd);
    EXPECT_EQ(got(0), 1);
    EXPECT_EQ(got(2), 0);
    Tile vec(DType::int32, 1, 4);
    exec_tensor_tensor(mode, out.view(), a.view(), b.view(), AluOp::divide, Engine::GpSimd);
    exec_tensor_tensor(mode, vec.view(), a.view(), b.view(), AluOp::divide, Engine::Vector);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out.raw(0, c), vec.raw(0, c)) << "divide in fp32";
    Tile f(DType::fp32, 1, 4);
    exec_tensor_tensor(mode, out.view(), a.view(), f.view(), AluOp::add, Engine::GpSimd);
    EXPECT_EQ(got(0), 1 << 24) << "an fp32 operand: fp32 arithmetic";
    EXPECT_TRUE(tensor_tensor_native_int(AluOp::add, DType::uint32, DType::int32, DType::uint32,
                                         Engine::GpSimd));
    EXPECT_FALSE(tensor_tensor_native_int(AluOp::add, DType::uint16, DType::int32, DType::int32,
                                          Engine::GpSimd));
    EXPECT_FALSE(tensor_tensor_native_int(AluOp::pow, DType::int32, DType::int32, DType::int32,
                                          Engine::GpSimd));
  }
}

// What GpSimd gives for an integer result its destination cannot hold is documented nowhere
// (ISA-NEW tensor_tensor promises exact 32-bit results only; ISA-OLD and SHARED say nothing): the
// instruction reports the first such element (rows in order) and writes nothing, in both modes,
// at each edge of int32 and uint32; a result exactly at the edge is stored.
TEST(SemanticsIndependent, GpSimdIntegerOverflowIsUndefined) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  struct Case {
    AluOp op;
    DType dst;
    int32_t a, b;
    bool defined;
  };
  const Case cases[] = {
      {AluOp::add, DType::int32, kMax, 1, false},
      {AluOp::add, DType::int32, kMax - 1, 1, true},
      {AluOp::subtract, DType::int32, kMin, 1, false},
      {AluOp::subtract, DType::int32, kMin + 1, 1, true},
      {AluOp::multiply, DType::int32, 46341, 46341, false},
      {AluOp::multiply, DType::int32, kMin, -1, false},
      {AluOp::multiply, DType::int32, kMin, 1, true},
      {AluOp::abs_max, DType::int32, kMin, 0, false},
      {AluOp::subtract, DType::uint32, 0, 1, false},
      {AluOp::subtract, DType::uint32, 1, 1, true},
  };
  for (ExecMode mode : kModes) {
    for (const Case& c : cases) {
      Tile a(DType::int32, 2, 3), b(DType::int32, 2, 3), out(c.dst, 2, 3);
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t f = 0; f < 3; ++f) {
          a.set_raw(r, f, 5u);
          b.set_raw(r, f, 2u);
          out.set_raw(r, f, 77u);
        }
      }
      a.set_raw(1, 2, static_cast<uint32_t>(c.a));
      b.set_raw(1, 2, static_cast<uint32_t>(c.b));
      const std::string why =
          exec_tensor_tensor(mode, out.view(), a.view(), b.view(), c.op, Engine::GpSimd);
      const std::string what = std::string(alu_op_name(c.op)) + " " + std::to_string(c.a) + ", " +
                               std::to_string(c.b) + " into " + std::string(dtype_name(c.dst));
      if (c.defined) {
        EXPECT_EQ(why, "") << what;
        EXPECT_NE(out.raw(0, 0), 77u) << what;
        continue;
      }
      EXPECT_NE(why.find("partition 1, element 2"), std::string::npos) << what << ": " << why;
      EXPECT_NE(why.find("does not fit the " + std::string(dtype_name(c.dst))), std::string::npos)
          << why;
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t f = 0; f < 3; ++f) EXPECT_EQ(out.raw(r, f), 77u) << what << ": written";
      }
      // The Vector engine computes in fp32 and stores with the conversion's saturation: defined.
      EXPECT_EQ(exec_tensor_tensor(mode, out.view(), a.view(), b.view(), c.op, Engine::Vector), "")
          << what;
    }
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
