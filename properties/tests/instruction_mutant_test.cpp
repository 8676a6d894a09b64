// The instruction-level properties can fail: their checking helpers (instruction_check.h) are fed
// deliberately wrong runs and expectations (a one-ulp change, a truncating conversion, a dropped
// matmul term, a lost NaN payload, a legal program where a refusal is expected) and must report
// each one; fed the right ones, they must stay silent.
#include <gtest/gtest.h>

#include <bit>
#include <memory>

#include "properties/instruction_check.h"
#include "properties/instruction_exact.h"
#include "properties/instruction_expect.h"
#include "properties/instruction_gen.h"

namespace ncv::props::instr {
namespace {

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// dst = a + b on [rows, cols] fp32 tiles of the given values.
struct AddCase {
  InstrCase c{"add_case"};
  Tile a, b;
  std::string out;

  AddCase(std::vector<uint32_t> x, std::vector<uint32_t> y, int64_t rows, int64_t cols) {
    const std::vector<int64_t> shape = {rows, cols};
    const TensorRef ta = c.loaded(Memory::SBUF, DType::fp32, shape, x);
    const TensorRef tb = c.loaded(Memory::SBUF, DType::fp32, shape, y);
    const TensorRef d = c.fresh(Memory::SBUF, DType::fp32, shape);
    c.b().tensor_tensor(d(), ta(), tb(), AluOp::add);
    const ViewSpec all = ViewSpec::whole(shape);
    a = c.initial(ta, all);
    b = c.initial(tb, all);
    out = c.store(d, all);
    c.finish();
  }
};

TEST(InstrMutant, FastVersusReferenceCheckFlagsAOneUlpChange) {
  AddCase k(fill_values(DType::fp32, 64, ValueMix::hard, 7),
            fill_values(DType::fp32, 64, ValueMix::hard, 8), 8, 8);
  BothRuns runs = run_fast_and_reference(k.c);
  ASSERT_FALSE(fast_reference_difference(runs.fast, runs.reference));

  HostTensor& r = runs.reference.outputs.at(k.out);
  r.bytes[4 * 13] ^= 1;  // element 13, lowest mantissa bit
  const auto problem = fast_reference_difference(runs.fast, runs.reference);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("element 13"), std::string::npos) << *problem;
}

TEST(InstrMutant, FastVersusReferenceCheckFlagsAnErrorOnOnePathOnly) {
  AddCase k(fill_values(DType::fp32, 4, ValueMix::ordinary, 1),
            fill_values(DType::fp32, 4, ValueMix::ordinary, 2), 2, 2);
  BothRuns runs = run_fast_and_reference(k.c);
  runs.reference.error = DynamicError{};
  runs.reference.error->kind = CheckKind::shape_rule;
  EXPECT_TRUE(fast_reference_difference(runs.fast, runs.reference));
}

TEST(InstrMutant, ExpectationCheckFlagsAOneUlpChange) {
  AddCase k(fill_values(DType::fp32, 64, ValueMix::hard, 3),
            fill_values(DType::fp32, 64, ValueMix::hard, 4), 8, 8);
  const RunResult run = run_case(k.c);
  Expected want = expect::tensor_tensor(k.a, k.b, DType::fp32, AluOp::add);
  ASSERT_FALSE(expected_difference(run, k.out, want));
  *want.bits[21] ^= 1;
  const auto problem = expected_difference(run, k.out, want);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("element 21"), std::string::npos) << *problem;
}

TEST(InstrMutant, ALostNaNPayloadIsCaught) {
  // NaN + 1 must be the first NaN operand, quieted, payload and sign kept.
  AddCase k({0xff812345u, bits(1.0f)}, {bits(1.0f), 0x7f800001u}, 1, 2);
  const RunResult run = run_case(k.c);
  Expected want = expect::tensor_tensor(k.a, k.b, DType::fp32, AluOp::add);
  ASSERT_FALSE(expected_difference(run, k.out, want));
  EXPECT_EQ(*want.bits[0], 0xffc12345u);
  EXPECT_EQ(*want.bits[1], 0x7fc00001u);
  want.bits[0] = exact::kDefaultNaN;  // a model that canonicalised every NaN
  EXPECT_TRUE(expected_difference(run, k.out, want));
}

TEST(InstrMutant, ATruncatingConversionIsCaught) {
  // fp32 -> bf16 of values whose dropped half is above, at and below the midpoint.
  const std::vector<uint32_t> values = {0x3f808001u, 0x3f818000u, 0x3f808000u, 0xc0ffffffu,
                                        0x7f7fffffu};
  InstrCase c("convert_case");
  const TensorRef src = c.loaded(Memory::SBUF, DType::fp32, {1, 5}, values);
  const TensorRef dst = c.fresh(Memory::SBUF, DType::bf16, {1, 5});
  c.b().tensor_copy(dst(), src());
  const std::string out = c.store(dst, ViewSpec::whole({1, 5}));
  c.finish();
  const RunResult run = run_case(c);
  const Expected want = expect::copy(c.initial(src, ViewSpec::whole({1, 5})), DType::bf16);
  ASSERT_FALSE(expected_difference(run, out, want));
  EXPECT_EQ(*want.bits[1], 0x3f82u);  // tie to even, upwards
  EXPECT_EQ(*want.bits[2], 0x3f80u);  // tie to even, downwards
  EXPECT_EQ(*want.bits[4], 0x7f80u);  // overflow to Inf

  Expected truncated{DType::bf16, {}};
  for (uint32_t v : values) truncated.bits.push_back(v >> 16);
  EXPECT_TRUE(expected_difference(run, out, truncated));
}

TEST(InstrMutant, AMatmulMissingOneTermIsCaught) {
  const int64_t K = 16, M = 8, N = 24;
  InstrCase c("matmul_case");
  const TensorRef st = c.loaded(Memory::SBUF, DType::bf16, {K, M},
                                fill_values(DType::bf16, K * M, ValueMix::small_ints, 5));
  const TensorRef mv = c.loaded(Memory::SBUF, DType::bf16, {K, N},
                                fill_values(DType::bf16, K * N, ValueMix::small_ints, 6));
  const TensorRef ps = c.fresh(Memory::PSUM, DType::fp32, {M, N});
  c.b().matmul(ps(), st(), mv());
  const std::string out = c.store(ps, ViewSpec::whole({M, N}));
  c.finish();
  const RunResult run = run_case(c);
  const Tile s = c.initial(st, ViewSpec::whole({K, M}));
  const Tile m = c.initial(mv, ViewSpec::whole({K, N}));
  ASSERT_FALSE(expected_difference(run, out, expect::matmul(s, m, DType::fp32, nullptr)));

  // The same contraction over K - 1 rows: the last k term dropped.
  ViewSpec first_rows_st = ViewSpec::whole({K, M}), first_rows_mv = ViewSpec::whole({K, N});
  first_rows_st.dims[0].size = K - 1;
  first_rows_mv.dims[0].size = K - 1;
  const Expected short_k = expect::matmul(c.initial(st, first_rows_st),
                                          c.initial(mv, first_rows_mv), DType::fp32, nullptr);
  EXPECT_TRUE(expected_difference(run, out, short_k));
}

TEST(InstrMutant, RejectionCheckFlagsALegalRunAndTheWrongError) {
  // A legal run is not a refusal.
  AddCase legal(fill_values(DType::fp32, 4, ValueMix::ordinary, 1),
                fill_values(DType::fp32, 4, ValueMix::ordinary, 2), 2, 2);
  EXPECT_TRUE(rejection_difference(run_case(legal.c), CheckKind::partition_rule, 2, {"partition"}));

  // A memset of 16 partitions starting at partition 8 breaks the partition rule.
  InstrCase c("misaligned");
  const TensorRef t = c.fresh(Memory::SBUF, DType::fp32, {32, 4});
  ViewSpec v = ViewSpec::whole({32, 4});
  v.dims[0] = DimSlice{8, 16, 1};
  c.b().memset(c.at(t, v), 0.0f);
  c.finish();
  const RunResult run = run_case(c);
  const std::vector<std::string> what = {"starting at partition 8"};
  EXPECT_FALSE(rejection_difference(run, CheckKind::partition_rule, 0, what));
  EXPECT_TRUE(rejection_difference(run, CheckKind::out_of_bounds, 0, what));
  EXPECT_TRUE(rejection_difference(run, CheckKind::partition_rule, 1, what));
  EXPECT_TRUE(rejection_difference(run, CheckKind::partition_rule, 0, {"starting at partition 9"}));
}

TEST(InstrMutant, BuildRejectionCheckFlagsAnAcceptedProgramAndTheWrongRule) {
  auto gpsimd_copy = [](Memory dst_memory) {
    auto c = std::make_unique<InstrCase>("gpsimd");
    const TensorRef src = c->loaded(Memory::SBUF, DType::fp32, {4, 4},
                                    fill_values(DType::fp32, 16, ValueMix::ordinary, 1));
    const TensorRef dst = c->fresh(dst_memory, DType::fp32, {4, 4});
    c->b().tensor_copy(dst(), src(), Engine::GpSimd);
    return c;
  };
  const std::vector<std::string> rule = {"the GpSimd engine cannot access PSUM"};
  // Instruction 0 loads the source; the copy is instruction 1.
  EXPECT_TRUE(build_rejection_difference(*gpsimd_copy(Memory::SBUF), 1, rule));
  EXPECT_FALSE(build_rejection_difference(*gpsimd_copy(Memory::PSUM), 1, rule));
  EXPECT_TRUE(build_rejection_difference(*gpsimd_copy(Memory::PSUM), 0, rule));
  EXPECT_TRUE(build_rejection_difference(*gpsimd_copy(Memory::PSUM), 1, {"read-only"}));
}

}  // namespace
}  // namespace ncv::props::instr
