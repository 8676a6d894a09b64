// The independent arithmetic of the instruction-level properties (properties/instruction_exact.h)
// on values whose results are known by hand: ties, subnormals, overflow and saturation, NaN
// payloads, the fma's single rounding. A wrong rule here would make the property blame the model
// for its own mistake (or hide the model's), so each rule is pinned down separately.
#include "properties/instruction_exact.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

namespace ncv::props::instr::exact {
namespace {

uint32_t b(float f) {
  return std::bit_cast<uint32_t>(f);
}
constexpr uint32_t kInf = 0x7f800000u;

TEST(InstrExact, RoundsToNearestEvenAndBreaksTiesWithTheRemainder) {
  EXPECT_EQ(round_f32(1.0 + 0x1p-24, 0.0), b(1.0f));                // tie -> even
  EXPECT_EQ(round_f32(1.0 + 0x1p-24, 0x1p-80), 0x3f800001u);        // just above the tie
  EXPECT_EQ(round_f32(1.0 + 0x1p-23 + 0x1p-24, 0.0), 0x3f800002u);  // tie -> even (up)
  EXPECT_EQ(round_f32(-(1.0 + 0x1p-24), -0x1p-80), 0xbf800001u);
  EXPECT_EQ(round_f32(0x1p-150, 0.0), 0u);  // tie below the min subnormal
  EXPECT_EQ(round_f32(0x1p-150, 0x1p-200), 1u);
  EXPECT_EQ(round_f32(-0x1p-151, 0.0), 0x80000000u);  // underflow keeps the sign
  EXPECT_EQ(round_f32(0x1p128, 0.0), kInf);
  EXPECT_EQ(round_f32(0x1.fffffefp127, 0.0), 0x7f7fffffu);  // below the overflow midpoint
  EXPECT_EQ(round_f32(0x1.ffffffp127, 0.0), kInf);          // the midpoint rounds to even
}

TEST(InstrExact, ConvertsToNarrowFloatsWithTheirOverflowRules) {
  EXPECT_EQ(from_f32(DType::bf16, 0x3f818000u), 0x3f82u);
  EXPECT_EQ(from_f32(DType::bf16, 0x7f7fffffu), 0x7f80u);
  EXPECT_EQ(from_f32(DType::bf16, 0xff812345u), 0xffc0u);  // NaN: canonical, sign kept
  EXPECT_EQ(from_f32(DType::fp16, b(65519.0f)), 0x7bffu);
  EXPECT_EQ(from_f32(DType::fp16, b(65520.0f)), 0x7c00u);  // ties to 65536: Inf
  EXPECT_EQ(from_f32(DType::fp16, b(0x1p-25f)), 0x0000u);
  EXPECT_EQ(from_f32(DType::fp16, b(0x1.8p-25f)), 0x0001u);
  EXPECT_EQ(from_f32(DType::fp8_e4m3, b(240.0f)), 0x77u);
  EXPECT_EQ(from_f32(DType::fp8_e4m3, b(1000.0f)), 0x77u);  // saturates
  EXPECT_EQ(from_f32(DType::fp8_e4m3, kInf), 0x78u);        // keeps Inf
  EXPECT_EQ(from_f32(DType::fp8_e4m3, 0xffc00000u), 0xfcu);
  EXPECT_EQ(from_f32(DType::fp8_e4m3fn, b(448.0f)), 0x7eu);
  EXPECT_EQ(from_f32(DType::fp8_e4m3fn, b(-1e9f)), 0xfeu);
  EXPECT_EQ(from_f32(DType::fp8_e4m3fn, 0xff800000u), 0xfeu);  // Inf saturates too
  EXPECT_EQ(from_f32(DType::fp8_e4m3fn, 0x7fc00000u), 0x7fu);
  EXPECT_EQ(from_f32(DType::fp8_e5m2, b(57344.0f)), 0x7bu);
  EXPECT_EQ(from_f32(DType::fp8_e5m2, b(1e6f)), 0x7bu);
  EXPECT_EQ(from_f32(DType::fp8_e5m2, kInf), 0x7cu);
  EXPECT_EQ(from_f32(DType::fp8_e5m2, b(0x1p-17f)), 0x00u);  // tie with the min subnormal 2^-16
  EXPECT_EQ(from_f32(DType::fp8_e5m2, b(0x1.8p-17f)), 0x01u);
}

TEST(InstrExact, ConvertsToIntegersWithRoundingSaturationAndNaNToZero) {
  EXPECT_EQ(from_f32(DType::int32, b(2.5f)), 2u);
  EXPECT_EQ(from_f32(DType::int32, b(3.5f)), 4u);
  EXPECT_EQ(from_f32(DType::int32, b(-2.5f)), static_cast<uint32_t>(-2));
  EXPECT_EQ(from_f32(DType::int32, b(3e9f)), 0x7fffffffu);
  EXPECT_EQ(from_f32(DType::int32, 0xff800000u), 0x80000000u);
  EXPECT_EQ(from_f32(DType::int32, 0x7fc00000u), 0u);
  EXPECT_EQ(from_f32(DType::uint8, b(-3.0f)), 0u);
  EXPECT_EQ(from_f32(DType::uint8, b(255.5f)), 255u);
  EXPECT_EQ(from_f32(DType::uint16, b(1e9f)), 0xffffu);
}

TEST(InstrExact, DecodesEveryDtypeToFp32) {
  EXPECT_EQ(to_f32(DType::int32, 16777217u), 0x4b800000u);  // 2^24 + 1 rounds to even
  EXPECT_EQ(to_f32(DType::uint32, 0xffffffffu), 0x4f800000u);
  EXPECT_EQ(to_f32(DType::int32, 0xffffffffu), b(-1.0f));
  EXPECT_EQ(to_f32(DType::bf16, 0x7f81u), 0x7fc00000u);  // NaN payload dropped, quiet
  EXPECT_EQ(to_f32(DType::bf16, 0xff80u), 0xff800000u);
  EXPECT_EQ(to_f32(DType::fp16, 0x0001u), b(0x1p-24f));
  EXPECT_EQ(to_f32(DType::fp8_e4m3, 0x77u), b(240.0f));
  EXPECT_EQ(to_f32(DType::fp8_e4m3, 0xf9u), 0xffc00000u);
  EXPECT_EQ(to_f32(DType::fp8_e4m3fn, 0x7eu), b(448.0f));
  EXPECT_EQ(to_f32(DType::fp8_e4m3fn, 0x78u), b(256.0f));
  EXPECT_EQ(to_f32(DType::fp8_e4m3fn, 0xffu), 0xffc00000u);
  EXPECT_EQ(to_f32(DType::fp8_e5m2, 0x01u), b(0x1p-16f));
  EXPECT_EQ(to_f32(DType::fp32, 0x7f800001u), 0x7f800001u);  // fp32 passes unchanged
}

TEST(InstrExact, FollowsTheModelsNaNRule) {
  EXPECT_EQ(add(0x7f800001u, b(1.0f)), 0x7fc00001u);  // first NaN, quieted
  EXPECT_EQ(add(b(1.0f), 0xff812345u), 0xffc12345u);
  EXPECT_EQ(add(0xffc00001u, 0x7fc00002u), 0xffc00001u);
  EXPECT_EQ(add(kInf, 0xff800000u), kDefaultNaN);
  EXPECT_EQ(mul(0u, kInf), kDefaultNaN);
  EXPECT_EQ(div(0x80000000u, 0u), kDefaultNaN);
  EXPECT_EQ(max(0x80000000u, 0u), 0u);
  EXPECT_EQ(max(0u, 0x80000000u), 0u);
  EXPECT_EQ(min(0u, 0x80000000u), 0x80000000u);
  EXPECT_EQ(max(b(1.0f), 0x7f800001u), 0x7fc00001u);
  EXPECT_EQ(alu(AluOp::abs_max, 0xff812345u, b(1.0f)), 0x7fc12345u);
  EXPECT_EQ(alu(AluOp::not_equal, kDefaultNaN, kDefaultNaN), b(1.0f));
  EXPECT_EQ(alu(AluOp::is_equal, kDefaultNaN, kDefaultNaN), 0u);
}

TEST(InstrExact, RoundsEachOperationOnce) {
  EXPECT_EQ(add(b(1.0f), b(0x1p-24f)), b(1.0f));
  EXPECT_EQ(add(b(1.0f), 0x33800001u), 0x3f800001u);  // 1 + (2^-24 + ulp): above the tie
  EXPECT_EQ(add(b(-0.0f), b(-0.0f)), 0x80000000u);
  EXPECT_EQ(add(b(1.0f), b(-1.0f)), 0u);
  EXPECT_EQ(sub(b(0.0f), b(0.0f)), 0u);
  EXPECT_EQ(mul(b(0x1p-100f), b(0x1p-100f)), 0u);
  EXPECT_EQ(mul(b(-0x1p-100f), b(0x1p-100f)), 0x80000000u);
  EXPECT_EQ(mul(b(0x1p100f), b(0x1p100f)), kInf);
  EXPECT_EQ(div(b(1.0f), b(3.0f)), 0x3eaaaaabu);
  EXPECT_EQ(div(b(1.0f), 0x80000000u), 0xff800000u);
  EXPECT_EQ(sqrt(b(2.0f)), 0x3fb504f3u);
  // fma: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly; a separate multiply would round it away.
  const uint32_t a = 0x3f800001u;
  EXPECT_EQ(fma(a, a, 0xbf800002u), b(0x1p-46f));
  // A product beyond fp32's range pulled back by the accumulator stays finite.
  EXPECT_EQ(fma(b(0x1p64f), b(0x1p64f), b(-0x1p127f)), b(0x1p127f));
  EXPECT_EQ(fma(kInf, b(0.0f), b(1.0f)), kDefaultNaN);
  EXPECT_EQ(fma(kInf, b(2.0f), 0xff800000u), kDefaultNaN);
}

TEST(InstrExact, IntegerDomainOfTheBitwiseOperators) {
  EXPECT_EQ(int_of_f32(b(2.5f)), 2);
  EXPECT_EQ(int_of_f32(b(-3.5f)), -4);
  EXPECT_EQ(int_of_f32(kDefaultNaN), 0);
  EXPECT_EQ(alu_int(AluOp::shift_left, 1, 31), int64_t{1} << 31);
  EXPECT_EQ(alu_int(AluOp::shift_left, 1, 32), 0);
  EXPECT_EQ(alu_int(AluOp::shift_right, -8, 1), -4);
  EXPECT_EQ(from_int(DType::uint8, 300), 255u);
  EXPECT_EQ(from_int(DType::int32, int64_t{1} << 40), 0x7fffffffu);
  EXPECT_EQ(from_int(DType::bf16, 257), 0x4380u);  // 257 -> fp32 -> bf16 ties to 256
}

}  // namespace
}  // namespace ncv::props::instr::exact
