// The scans (tensor_tensor_scan, tensor_scalar_cumulative) against recurrences written out here
// in plain fp32 arithmetic, in both execution modes: operand order (reverse flags), the initial
// value, the fp32 running value under a narrower output dtype, the accumulator registers
// (reset_reduce identities, reduce, load_reduce), strided views and in-place operands.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "model/semantics/semantics.h"
#include "model/semantics/tests/dense_tile.h"
#include "model/semantics/tests/test_values.h"

namespace ncv {
namespace {

using namespace semtest;  // NOLINT

const ExecMode kModes[] = {ExecMode::fast, ExecMode::reference};

void fill(Tile& t, Rng& rng, double lo, double hi) {
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) t.set(r, c, static_cast<float>(rng.real(lo, hi)));
  }
}

// volatile keeps each step one fp32 operation (no contraction into an fma).
float op_of(AluOp op, float a, float b) {
  volatile float x = a, y = b;
  switch (op) {
    case AluOp::add:
      return x + y;
    case AluOp::subtract:
      return x - y;
    case AluOp::multiply:
      return x * y;
    case AluOp::max:
      return std::fmax(x, y);
    case AluOp::min:
      return std::fmin(x, y);
    default:
      ADD_FAILURE() << "no reference for " << alu_op_name(op);
      return 0.0f;
  }
}

TEST(SemanticsScan, TensorTensorScanFollowsTheRecurrenceWithEachOperandOrder) {
  Rng rng(11);
  const AluOp ops[] = {AluOp::add, AluOp::subtract, AluOp::multiply, AluOp::max, AluOp::min};
  for (ExecMode mode : kModes) {
    for (AluOp op0 : ops) {
      for (AluOp op1 : ops) {
        for (int rev = 0; rev < 4; ++rev) {
          const bool r0 = rev & 1, r1 = rev & 2;
          Tile a(DType::fp32, 5, 19, 2), b(DType::fp32, 5, 19), init(DType::fp32, 5, 1);
          Tile dst(DType::fp32, 5, 19);
          fill(a, rng, -1.5, 1.5);
          fill(b, rng, -1.5, 1.5);
          fill(init, rng, -1.0, 1.0);
          exec_tensor_tensor_scan(mode, dst.view(), a.view(), b.view(), init.view(), op0, op1, r0,
                                  r1);
          for (int64_t r = 0; r < 5; ++r) {
            float acc = init.get(r, 0);
            for (int64_t c = 0; c < 19; ++c) {
              const float x = r0 ? op_of(op0, acc, a.get(r, c)) : op_of(op0, a.get(r, c), acc);
              acc = r1 ? op_of(op1, b.get(r, c), x) : op_of(op1, x, b.get(r, c));
              ASSERT_EQ(std::bit_cast<uint32_t>(dst.get(r, c)), std::bit_cast<uint32_t>(acc))
                  << alu_op_name(op0) << " " << alu_op_name(op1) << " rev " << rev << " at " << r
                  << "," << c;
            }
          }
        }
      }
    }
  }
}

TEST(SemanticsScan, TheRunningValueStaysFp32UnderANarrowOutput) {
  // From 1.0 adding 2^-9 per element: each bf16 output is the fp32 running value rounded, so
  // the outputs climb to 1.125; a running value kept in bf16 would stay at 1.0.
  for (ExecMode mode : kModes) {
    Tile a(DType::bf16, 2, 64), b(DType::bf16, 2, 64), dst(DType::bf16, 2, 64);
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 64; ++c) {
        a.set(r, c, std::ldexp(1.0f, -9));
        b.set(r, c, 0.0f);
      }
    }
    exec_tensor_tensor_scan(mode, dst.view(), a.view(), b.view(), 1.0f, AluOp::add, AluOp::add,
                            false, false);
    for (int64_t c = 0; c < 64; ++c) {
      const float want = decode_to_float(
          DType::bf16, encode_from_float(DType::bf16, 1.0f + (c + 1) * std::ldexp(1.0f, -9)));
      ASSERT_EQ(dst.get(1, c), want) << c;
    }
    EXPECT_EQ(dst.get(0, 63), 1.125f);
  }
}

TEST(SemanticsScan, AnInPlaceScanReadsEachRowBeforeWritingIt) {
  Rng rng(3);
  for (ExecMode mode : kModes) {
    Tile a(DType::fp32, 4, 33), b(DType::fp32, 4, 33), sep(DType::fp32, 4, 33);
    fill(a, rng, -1.0, 1.0);
    fill(b, rng, -1.0, 1.0);
    exec_tensor_tensor_scan(mode, sep.view(), a.view(), b.view(), 0.5f, AluOp::multiply, AluOp::add,
                            false, false);
    exec_tensor_tensor_scan(mode, a.view(), a.view(), b.view(), 0.5f, AluOp::multiply, AluOp::add,
                            false, false);
    EXPECT_EQ(a.bytes, sep.bytes);
  }
}

// reg = op1(op0(src, imm0), reg), out = reg, from `start` per row.
std::vector<float> cumulative_ref(Tile& src, AluOp op0, float imm0, AluOp op1,
                                  std::vector<float> reg, Tile& out_ref) {
  for (int64_t r = 0; r < src.rows; ++r) {
    for (int64_t c = 0; c < src.cols; ++c) {
      reg[r] = op_of(op1, op_of(op0, src.get(r, c), imm0), reg[r]);
      out_ref.set(r, c, reg[r]);
    }
  }
  return reg;
}

TEST(SemanticsScan, CumulativeResetReduceStartsFromTheIdentityOfOp1) {
  Rng rng(5);
  const float inf = std::numeric_limits<float>::infinity();
  const std::pair<AluOp, float> ops[] = {{AluOp::add, 0.0f},
                                         {AluOp::subtract, 0.0f},
                                         {AluOp::multiply, 1.0f},
                                         {AluOp::max, -inf},
                                         {AluOp::min, inf}};
  for (ExecMode mode : kModes) {
    for (auto [op1, identity] : ops) {
      Tile src(DType::fp32, 6, 21), dst(DType::fp32, 6, 21), want(DType::fp32, 6, 21);
      fill(src, rng, -2.0, 2.0);
      std::vector<float> regs(6, 123.0f);  // whatever the registers held before
      exec_tensor_scalar_cumulative(mode, dst.view(), src.view(), AluOp::multiply, 0.75f, op1,
                                    ReduceCmd::reset_reduce, std::nullopt, regs.data());
      const std::vector<float> last =
          cumulative_ref(src, AluOp::multiply, 0.75f, op1, std::vector<float>(6, identity), want);
      EXPECT_EQ(dst.bytes, want.bytes) << alu_op_name(op1);
      EXPECT_EQ(regs, last) << alu_op_name(op1);
    }
  }
}

TEST(SemanticsScan, CumulativeReduceContinuesAndLoadReduceLoadsImm1) {
  Rng rng(9);
  for (ExecMode mode : kModes) {
    Tile src(DType::fp32, 3, 10), dst(DType::fp32, 3, 10), want(DType::fp32, 3, 10);
    Tile imm1(DType::fp32, 3, 1);
    fill(src, rng, -1.0, 1.0);
    fill(imm1, rng, -4.0, 4.0);
    std::vector<float> regs = {1.5f, -2.0f, 0.25f};
    exec_tensor_scalar_cumulative(mode, dst.view(), src.view(), AluOp::subtract, 0.5f, AluOp::add,
                                  ReduceCmd::reduce, std::nullopt, regs.data());
    std::vector<float> last =
        cumulative_ref(src, AluOp::subtract, 0.5f, AluOp::add, {1.5f, -2.0f, 0.25f}, want);
    EXPECT_EQ(dst.bytes, want.bytes);
    EXPECT_EQ(regs, last);
    exec_tensor_scalar_cumulative(mode, dst.view(), src.view(), AluOp::add, 0.0f, AluOp::max,
                                  ReduceCmd::load_reduce, ScalarArg{imm1.view()}, regs.data());
    last = cumulative_ref(src, AluOp::add, 0.0f, AluOp::max,
                          {imm1.get(0, 0), imm1.get(1, 0), imm1.get(2, 0)}, want);
    EXPECT_EQ(dst.bytes, want.bytes);
    EXPECT_EQ(regs, last);
  }
}

// bn_stats / bn_aggr on values whose statistics are exact: x = 1..5 (even 1, 3, 5: mean 3, m2 8;
// odd 2, 4: mean 3, m2 2; all: mean 3, population variance 2), in a strided view.
TEST(SemanticsStats, BnStatsSplitsEvenAndOddElementsAndBnAggrCombinesThem) {
  for (ExecMode mode : kModes) {
    Tile x(DType::bf16, 2, 5, 3), stats(DType::fp32, 2, 6), mv(DType::fp32, 2, 2);
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 5; ++c) x.set(r, c, static_cast<float>(c + 1 + 10 * r));
    }
    exec_bn_stats(mode, stats.view(), x.view());
    const float want0[6] = {3, 3, 8, 2, 3, 2};
    for (int64_t c = 0; c < 6; ++c) {
      EXPECT_EQ(stats.get(0, c), want0[c]) << c;
      EXPECT_EQ(stats.get(1, c), want0[c] + ((c % 3) == 1 ? 10.0f : 0.0f)) << c;
    }
    exec_bn_aggr(mode, mv.view(), stats.view());
    EXPECT_EQ(mv.get(0, 0), 3.0f);
    EXPECT_EQ(mv.get(0, 1), 2.0f);
    EXPECT_EQ(mv.get(1, 0), 13.0f);
    EXPECT_EQ(mv.get(1, 1), 2.0f);
  }
}

TEST(SemanticsStats, OneElementLeavesTheOddHalfEmptyAndZeroCountsGiveNaN) {
  for (ExecMode mode : kModes) {
    Tile x(DType::fp32, 1, 1), stats(DType::fp32, 1, 6), mv(DType::fp32, 1, 2);
    x.set(0, 0, 7.0f);
    exec_bn_stats(mode, stats.view(), x.view());
    const float want[6] = {1, 7, 0, 0, 0, 0};
    for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(stats.get(0, c), want[c]) << c;
    Tile empty(DType::fp32, 1, 3);
    for (int64_t c = 0; c < 3; ++c) empty.set(0, c, 0.0f);
    exec_bn_aggr(mode, mv.view(), empty.view());
    EXPECT_TRUE(std::isnan(mv.get(0, 0)));
    EXPECT_TRUE(std::isnan(mv.get(0, 1)));
  }
}

}  // namespace
}  // namespace ncv
