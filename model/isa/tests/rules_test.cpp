// The ISA rules on concrete numbers (the interpreter's domain): each predicate at and around its
// limits, the labels the solver's obligations carry, and the overflow-free affine magnitude.
#include "model/isa/rules.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace ncv {
namespace {

const IntOps kInt;

TEST(IsaRules, PartitionStartFollowsTheQuadrants) {
  const HwConfig& hw = hw_config_trn1();
  for (int64_t s = 0; s < 128; ++s) {
    EXPECT_EQ(partition_start_ok(kInt, s, 128, hw), s == 0) << s;
    EXPECT_EQ(partition_start_ok(kInt, s, 65, hw), s == 0) << s;
    EXPECT_EQ(partition_start_ok(kInt, s, 64, hw), s == 0 || s == 64) << s;
    EXPECT_EQ(partition_start_ok(kInt, s, 33, hw), s == 0 || s == 64) << s;
    EXPECT_EQ(partition_start_ok(kInt, s, 32, hw), s % 32 == 0) << s;
    EXPECT_EQ(partition_start_ok(kInt, s, 1, hw), s % 32 == 0) << s;
  }
  EXPECT_FALSE(partition_start_ok(kInt, 0, 129, hw));
  HwConfig half = hw;
  half.partitions = 64;
  EXPECT_FALSE(partition_start_ok(kInt, 0, 65, half));
  EXPECT_TRUE(partition_start_ok(kInt, 0, 64, half));
}

TEST(IsaRules, PsumTileInsideOneBank) {
  const HwConfig& hw = hw_config_trn1();  // 2 KiB banks
  EXPECT_TRUE(psum_bank_ok(kInt, 0, 2048, hw));
  EXPECT_TRUE(psum_bank_ok(kInt, 2048, 4096, hw));
  EXPECT_FALSE(psum_bank_ok(kInt, 2044, 2052, hw));
  EXPECT_FALSE(psum_bank_ok(kInt, 0, 2049, hw));
}

TEST(IsaRules, LimitsComeFromTheGeneration) {
  EXPECT_EQ(free_size_limit(Memory::SBUF, hw_config_trn1()), 65536);
  EXPECT_EQ(free_size_limit(Memory::PSUM, hw_config_trn1()), 4096);
  EXPECT_EQ(transpose_limit(Engine::Tensor, hw_config_trn1()), 128);
  EXPECT_EQ(transpose_limit(Engine::Vector, hw_config_trn1()), 32);
  EXPECT_TRUE(matmul_dst_in_one_bank(hw_config_trn2()));
  EXPECT_FALSE(matmul_dst_in_one_bank(hw_config_trn3()));
  EXPECT_FALSE(matmul_dst_dtype_ok(DType::bf16, hw_config_trn2()));
  EXPECT_TRUE(matmul_dst_dtype_ok(DType::bf16, hw_config_trn3()));
  EXPECT_TRUE(matmul_dst_dtype_ok(DType::fp32, hw_config_trn1()));
  EXPECT_FALSE(tensor_copy_engine_ok(Engine::Scalar, hw_config_trn1()));
  EXPECT_TRUE(tensor_copy_engine_ok(Engine::Scalar, hw_config_trn2()));
  EXPECT_TRUE(tensor_copy_engine_ok(Engine::Vector, hw_config_trn1()));
  EXPECT_FALSE(indirect_dim_ok(true, 0));
  EXPECT_TRUE(indirect_dim_ok(false, 0));
  EXPECT_TRUE(indirect_dim_ok(true, 1));
}

TEST(IsaRules, ShapesAndColumns) {
  EXPECT_TRUE(shape_is(kInt, 128, 64, 128, 64));
  EXPECT_FALSE(shape_is(kInt, 128, 64, 64, 128));
  EXPECT_TRUE(column_ok(kInt, 128, 1, 128));
  EXPECT_FALSE(column_ok(kInt, 128, 2, 128));
  EXPECT_TRUE(transpose_size_ok(kInt, 32, 32, 32));
  EXPECT_FALSE(transpose_size_ok(kInt, 32, 33, 32));
  EXPECT_TRUE(access_size_ok(kInt, 1));
  EXPECT_FALSE(access_size_ok(kInt, 0));
}

// The labels are the obligation names `prove` prints and the tests match.
TEST(IsaRules, LabelsCarryTheLimit) {
  EXPECT_EQ(rule_label(Rule::matmul_k, 128), "matmul K <= 128");
  EXPECT_EQ(rule_label(Rule::matmul_n, 4096), "matmul N <= 4096");
  EXPECT_EQ(rule_label(Rule::transpose_size, 32), "transpose size <= 32x32");
  EXPECT_EQ(rule_label(Rule::buffer_partitions, 128), "buffer partitions <= 128");
  EXPECT_EQ(free_size_label(Memory::SBUF, hw_config_trn1()), "free size <= 65536 (SBUF)");
  EXPECT_EQ(free_size_label(Memory::PSUM, hw_config_trn1()), "free size <= 4096 (PSUM)");
  EXPECT_EQ(same_shape_label("activation"), "operand shapes match (activation)");
  EXPECT_EQ(rule_info(Rule::psum_bank).kind, CheckKind::psum_bank);
  EXPECT_EQ(rule_info(Rule::partition_start).kind, CheckKind::partition_rule);
  EXPECT_EQ(rule_info(Rule::scalar_tensor_copy).kind, CheckKind::engine_rule);
}

// |offset| + |cm| (rows - 1) + sum |step| (size - 1), without overflow for any int64 input.
TEST(IsaRules, AffinePatternMagnitude) {
  const WideOps w;
  const long double sizes[] = {w.lit(64), w.lit(8)};
  const int64_t steps[] = {-2, 3};
  const long double m = affine_pattern_magnitude(w, w.lit(-10), 1, w.lit(128), sizes, 2, steps, 2);
  EXPECT_EQ(m, 10 + 127 + 2 * 63 + 3 * 7);
  EXPECT_TRUE(affine_pattern_ok(w, m));
  const long double huge =
      affine_pattern_magnitude(w, w.lit(INT64_MIN), 1, w.lit(128), sizes, 2, steps, 2);
  EXPECT_FALSE(affine_pattern_ok(w, huge));
  EXPECT_TRUE(affine_pattern_ok(w, w.lit(INT32_MAX)));
  EXPECT_FALSE(affine_pattern_ok(w, w.lit(int64_t{INT32_MAX} + 1)));
}

}  // namespace
}  // namespace ncv
