// ISA-rule obligations: every registered kernel is proved on trn1; for each rule a small program
// that breaks it for some params (or loop iterations) gives the smallest counterexample, whose
// replay raises the interpreter's error for that rule, and the same program with the knob set
// right is proved. A rule of the generation (matmul N, PSUM banks, scalar tensor_copy) flips
// between trn1 and a later generation.
#include "solver/isa_rules.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "kernels/registry_proof_scope.h"
#include "kernels/tests/registry_slices.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;
using testing_helpers::on;

using kernels::LabelledProgram;
using kernels::option_programs;

using ParamMap = std::map<std::string, int64_t>;
using LoopIndices = std::vector<std::pair<std::string, int64_t>>;

// The first refuted obligation of `rule`: a counterexample with exactly these params (the
// smallest failing ones) and loop indices, whose text names `violated`, and whose replay raised
// the rule's error. No obligation of the program may be a solver/interpreter disagreement.
Obligation expect_counterexample(const std::vector<Obligation>& all, const std::string& rule,
                                 const ParamMap& params, const LoopIndices& loops,
                                 const std::string& violated) {
  for (const Obligation& o : all) {
    EXPECT_EQ(o.cls, ObligationClass::isa_rules);
    if (o.replay) {
      EXPECT_FALSE(o.replay->disagreement) << o.describe();
    }
  }
  for (const Obligation& o : all) {
    if (o.rule != rule || o.verdict == Verdict::proved) continue;
    EXPECT_EQ(o.verdict, Verdict::counterexample) << o.describe();
    if (!o.counterexample) return o;
    EXPECT_EQ(ParamMap(o.counterexample->params.begin(), o.counterexample->params.end()), params)
        << o.describe();
    EXPECT_EQ(o.counterexample->loop_indices, loops) << o.describe();
    EXPECT_NE(o.counterexample->violated.find(violated), std::string::npos) << o.describe();
    EXPECT_TRUE(o.replay && o.replay->reproduced) << o.describe();
    return o;
  }
  ADD_FAILURE() << "no counterexample for '" << rule << "' among\n" << describe_all(all);
  return {};
}

void expect_all_proved(const std::vector<Obligation>& all) {
  EXPECT_FALSE(all.empty());
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(not_proved(all));
}

// Registry-wide (README.md "Tests"): one kernel per family at the option sets covering every value
// in the default tier (PerFamily/), every kernel at every option set in the deep tier (Deep/).
class IsaRulesRegistry : public ::testing::TestWithParam<std::string> {};

TEST_P(IsaRulesRegistry, EveryOptionSetIsProvedAtItsDefaultGeneration) {
  const kernels::Variant& v = *kernels::find_variant(GetParam());
  if (!kernels::in_registry_isa_and_frontier_tests(v)) {
    GTEST_SKIP() << v.name
                 << " is outside the registry-wide ISA proof (kernels/registry_proof_scope.h)";
  }
  const auto t0 = std::chrono::steady_clock::now();
  size_t programs = 0, obligations = 0;
  for (const LabelledProgram& lp :
       kernels::testing::tier_programs(v, kernels::testing::in_deep_test())) {
    ++programs;
    const auto all =
        prove_isa_rules(lp.program, {.hw = find_hw_config(kernels::default_generation(v))});
    obligations += all.size();
    EXPECT_FALSE(all.empty()) << lp.label;
    for (const Obligation& o : not_proved(all)) ADD_FAILURE() << lp.label << ": " << o.describe();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu programs, %zu ISA-rule obligations, %.2f s\n", programs, obligations, s);
  EXPECT_GE(programs, 1u);
}

INSTANTIATE_TEST_SUITE_P(PerFamily, IsaRulesRegistry,
                         ::testing::ValuesIn(kernels::testing::family_representatives()),
                         kernels::testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, IsaRulesRegistry,
                         ::testing::ValuesIn(kernels::testing::all_kernels()),
                         kernels::testing::kernel_param_name);

// o[128, d] = x^T y through an fp32 PSUM tile `acc` placed at byte `offset` of each partition
// (with `bufs` copies, used in turn by the iterations of loop i).
Program psum_tile_kernel(int64_t offset, int64_t bufs = 1) {
  Builder b("psum_tile");
  Expr d = b.param("d_head", 64, 512, 64);
  auto x = b.input("x", DType::bf16, {128, 128});
  auto y = b.input("y", DType::bf16, {128, d});
  auto o = b.output("o", DType::fp32, {128, d});
  auto xs = b.sbuf("xs", DType::bf16, {128, 128});
  auto ys = b.sbuf("ys", DType::bf16, {128, d});
  b.dma_copy(xs(), x());
  b.dma_copy(ys(), y());
  b.affine_range("i", 2, [&](Expr) {
    auto acc = b.psum("acc", DType::fp32, {128, d},
                      {.bufs = bufs, .placement = Placement{Expr(0), Expr(offset)}});
    auto out = b.sbuf("out", DType::fp32, {128, d});
    b.matmul(acc(), xs(), ys());
    b.tensor_copy(out(), acc());
    b.dma_copy(o(), out());
  });
  return b.finish();
}

// At byte 1024, a tile of d_head fp32 columns crosses the 2 KiB bank for d_head > 256.
TEST(IsaRules, PsumTileCrossingABankIsACounterexampleAtTheSmallestDHead) {
  expect_all_proved(prove_isa_rules(psum_tile_kernel(0)));
  const auto all = prove_isa_rules(psum_tile_kernel(1024));
  ASSERT_EQ(not_proved(all).size(), 1u) << describe_all(not_proved(all));
  const Obligation o = expect_counterexample(all, "PSUM tile inside one bank", {{"d_head", 320}},
                                             {{"i", 0}}, "bytes [1024, 2304)");
  EXPECT_EQ(o.tensor, "acc");
  EXPECT_EQ(o.role, "matmul destination");
  EXPECT_NE(o.instruction_text.find("matmul"), std::string::npos);
}

// Two copies of 4 * d_head bytes each: copy 1 (loop iteration 1) crosses for d_head > 256.
TEST(IsaRules, SecondBufferCopyCrossingABankIsACounterexample) {
  const auto all = prove_isa_rules(psum_tile_kernel(0, 2));
  ASSERT_EQ(not_proved(all).size(), 1u) << describe_all(not_proved(all));
  expect_counterexample(all, "PSUM tile inside one bank", {{"d_head", 320}},
                        {{"i", 0}, {"copy of 'acc'", 1}}, "bytes [1280, 2560)");
}

// acc[128, n] = x^T y with n moving columns.
Program wide_matmul(int64_t n_hi) {
  Builder b("wide_matmul");
  Expr n = b.param("n", 128, n_hi, 128);
  auto x = b.input("x", DType::bf16, {128, 128});
  auto y = b.input("y", DType::bf16, {128, n});
  auto o = b.output("o", DType::fp32, {128, n});
  auto xs = b.sbuf("xs", DType::bf16, {128, 128});
  auto ys = b.sbuf("ys", DType::bf16, {128, n});
  auto acc = b.psum("acc", DType::fp32, {128, n});
  auto out = b.sbuf("out", DType::fp32, {128, n});
  b.dma_copy(xs(), x());
  b.dma_copy(ys(), y());
  b.matmul(acc(), xs(), ys());
  b.tensor_copy(out(), acc());
  b.dma_copy(o(), out());
  return b.finish();
}

TEST(IsaRules, MatmulWiderThan512IsACounterexampleOnTrn1) {
  expect_all_proved(prove_isa_rules(wide_matmul(512)));
  const auto all = prove_isa_rules(wide_matmul(1024));
  expect_counterexample(all, "matmul N <= 512", {{"n", 640}}, {}, "N=640 > 512");
  // 640 fp32 columns also span two banks, but the interpreter stops at the N limit first: the
  // replay raises shape_rule, which is not a disagreement.
  for (const Obligation& o : all) {
    if (o.rule != "PSUM tile inside one bank" || o.verdict == Verdict::proved) continue;
    ASSERT_TRUE(o.counterexample && o.replay) << o.describe();
    EXPECT_EQ(o.counterexample->params.at("n"), 640);
    EXPECT_NE(o.counterexample->violated.find("[0, 2560)"), std::string::npos) << o.describe();
    EXPECT_FALSE(o.replay->reproduced);
    EXPECT_NE(o.replay->detail.find("N=640 exceeds"), std::string::npos) << o.describe();
  }
  EXPECT_EQ(not_proved(all).size(), 2u) << describe_all(not_proved(all));
}

// nki.isa.bn_stats reads at most 512 elements per partition: a tile that grows with n is refuted
// at the smallest n past the limit (replayed by the interpreter), and proved when n stops at 512.
Program bn_stats_program(int64_t max_n) {
  Builder b("bn_stats_width");
  Expr n = b.param("n", 128, max_n, 128);
  auto x = b.input("x", DType::fp32, {128, n});
  auto y = b.output("y", DType::fp32, {128, 2});
  auto t = b.sbuf("t", DType::fp32, {128, n});
  auto st = b.sbuf("st", DType::fp32, {128, 6});
  auto mv = b.sbuf("mv", DType::fp32, {128, 2});
  b.dma_copy(t(), x());
  b.emit(BnStats{st(), t()});
  b.emit(BnAggr{mv(), st()});
  b.dma_copy(y(), mv());
  return b.finish();
}

TEST(IsaRules, BnStatsWiderThan512IsACounterexample) {
  expect_all_proved(prove_isa_rules(bn_stats_program(512)));
  const auto all = prove_isa_rules(bn_stats_program(1024));
  expect_counterexample(all, "free size <= 512", {{"n", 640}}, {}, "640 > 512");
  EXPECT_EQ(not_proved(all).size(), 1u) << describe_all(not_proved(all));
}

// nki.isa.local_gather gathers at most 4096 indices per GpSimd core: with every index of a
// [128, k] tile valid (16 * k per core), k = 257 is the first width past the limit (replayed by
// the interpreter); the shuffle and gather_flattened beside it are proved.
Program gather_program(int64_t max_k) {
  Builder b("gather_width");
  Expr k = b.param("k", 1, max_k);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto idx = b.input("idx", DType::uint16, {128, k});
  auto fidx = b.input("fidx", DType::uint32, {128, 8});
  auto y = b.output("y", DType::fp32, {128, k * 16});
  auto z = b.output("z", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  auto it = b.sbuf("it", DType::uint16, {128, k});
  auto ft = b.sbuf("ft", DType::uint32, {128, 8});
  auto g = b.sbuf("g", DType::fp32, {128, k * 16});
  auto f = b.sbuf("f", DType::fp32, {128, 8});
  b.dma_copy(t(), x());
  b.dma_copy(it(), idx());
  b.dma_copy(ft(), fidx());
  std::vector<int64_t> mask(32);
  for (int64_t i = 0; i < 32; ++i) mask[i] = 31 - i;
  b.emit(StreamShuffle{t(), t(), mask});
  b.emit(LocalGather{g(), t(), it(), 1, 0});
  b.emit(GatherFlattened{f(), t(), ft()});
  b.dma_copy(y(), g());
  b.dma_copy(z(), f());
  return b.finish();
}

TEST(IsaRules, LocalGatherPast4096IndicesPerCoreIsACounterexample) {
  expect_all_proved(prove_isa_rules(gather_program(256)));
  const auto all = prove_isa_rules(gather_program(300));
  expect_counterexample(all, "local_gather indices per core <= 4096 and within the index",
                        {{"k", 257}}, {}, "4112 indices per core");
  EXPECT_EQ(not_proved(all).size(), 1u) << describe_all(not_proved(all));
}

// ISA-NEW: trn3 takes N <= 4096 (all eight banks), so neither the N limit nor the one-bank rule
// refutes the same program there.
TEST(IsaRules, MatmulNLimitAndPsumBankDependOnTheGeneration) {
  const auto trn1 = not_proved(prove_isa_rules(wide_matmul(1024), on(hw_config_trn1())));
  EXPECT_EQ(trn1.size(), 2u) << describe_all(trn1);
  expect_all_proved(prove_isa_rules(wide_matmul(1024), on(hw_config_trn3())));
}

// tensor_copy on the scalar engine exists from trn2 on (ARCH3).
TEST(IsaRules, ScalarEngineTensorCopyDependsOnTheGeneration) {
  Builder b("scalar_copy");
  Expr n = b.param("n", 64, 128, 64);
  auto x = b.input("x", DType::fp32, {128, n});
  auto o = b.output("o", DType::fp32, {128, n});
  auto xs = b.sbuf("xs", DType::fp32, {128, n});
  auto ys = b.sbuf("ys", DType::fp32, {128, n});
  b.dma_copy(xs(), x());
  b.tensor_copy(ys(), xs(), Engine::Scalar);
  b.dma_copy(o(), ys());
  const Program p = b.finish();
  expect_counterexample(prove_isa_rules(p, on(hw_config_trn1())),
                        "tensor_copy on the scalar engine", {{"n", 64}}, {},
                        "trn1 has no scalar-engine tensor_copy");
  expect_all_proved(prove_isa_rules(p, on(hw_config_trn2())));
}

// tensor_partition_reduce of [128, 16] writes [1, 16]: a destination of w columns is refuted
// at w = 32 (replayed by the interpreter). range_select exists from NeuronCore-v3 on.
Program partition_sum(int64_t w_hi) {
  Builder b("partition_sum");
  Expr w = b.param("w", 16, w_hi, 16);
  auto x = b.input("x", DType::fp32, {128, 16});
  auto o = b.output("o", DType::fp32, {1, 32});
  auto t = b.sbuf("t", DType::fp32, {128, 16});
  auto d = b.sbuf("d", DType::fp32, {1, 32});
  b.dma_copy(t(), x());
  b.memset(d(), 0.0f);
  b.emit(TensorPartitionReduce{d({all(), ds(0, w)}), t(), AluOp::add});
  b.dma_copy(o(), d());
  return b.finish();
}

TEST(IsaRules, PartitionReduceDestinationAndRangeSelectGeneration) {
  expect_all_proved(prove_isa_rules(partition_sum(16)));
  expect_counterexample(prove_isa_rules(partition_sum(32)),
                        "tensor_partition_reduce destination is [1, F]", {{"w", 32}}, {},
                        "writes [1, 16] but 'd' is [1, 32]");
  Builder b("range_select");
  Expr n = b.param("n", 64, 128, 64);
  auto x = b.input("x", DType::fp32, {128, n});
  auto o = b.output("o", DType::fp32, {128, n});
  auto xs = b.sbuf("xs", DType::fp32, {128, n});
  auto bound = b.sbuf("bound", DType::fp32, {128, 1});
  auto ys = b.sbuf("ys", DType::fp32, {128, n});
  b.dma_copy(xs(), x());
  b.memset(bound(), 8.0f);
  b.emit(RangeSelect{ys(), xs(), bound(), bound(), CmpOp::ge, CmpOp::le, Expr(0)});
  b.dma_copy(o(), ys());
  const Program p = b.finish();
  expect_counterexample(prove_isa_rules(p, on(hw_config_trn1())),
                        "range_select on NeuronCore-v3 or newer", {{"n", 64}}, {},
                        "trn1 has no range_select");
  expect_all_proved(prove_isa_rules(p, on(hw_config_trn2())));
}

// range_select compares range_start + index in fp32: beyond 2^24 is refuted at the smallest
// param that gets there (and replayed as the interpreter's undefined_result).
Program range_far(int64_t k_hi) {
  Builder b("range_far");
  Expr k = b.param("k", 1, k_hi, 1);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto o = b.output("o", DType::fp32, {128, 64});
  auto xs = b.sbuf("xs", DType::fp32, {128, 64});
  auto bound = b.sbuf("bound", DType::fp32, {128, 1});
  auto ys = b.sbuf("ys", DType::fp32, {128, 64});
  b.dma_copy(xs(), x());
  b.memset(bound(), 8.0f);
  b.emit(RangeSelect{ys(), xs(), bound(), bound(), CmpOp::ge, CmpOp::le,
                     k * Expr(int64_t{1} << 22) - 64});
  b.dma_copy(o(), ys());
  return b.finish();
}

TEST(IsaRules, RangeSelectIndexBeyond2To24IsACounterexample) {
  expect_all_proved(prove_isa_rules(range_far(4), on(hw_config_trn2())));
  expect_counterexample(prove_isa_rules(range_far(5), on(hw_config_trn2())),
                        "range_select index within 2^24", {{"k", 5}}, {}, "leave [-2^24, 2^24]");
}

// 32-row slices of a tile at partitions j * s for j = 0, 1, 2: a multiple of 32 only when s is.
Program row_slices(int64_t s_hi) {
  Builder b("row_slices");
  Expr s = b.param("s", 32, s_hi, 8);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto o = b.output("o", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  b.dma_copy(t(), x());
  b.affine_range("j", 3, [&](Expr j) {
    b.activation(t({ds(j * s, 32), all()}), t({ds(j * s, 32), all()}), {.func = ActFunc::exp});
  });
  b.dma_copy(o(), t());
  return b.finish();
}

TEST(IsaRules, MisalignedPartitionStartIsACounterexampleAtTheFirstBadIteration) {
  expect_all_proved(prove_isa_rules(row_slices(32)));
  const auto all = prove_isa_rules(row_slices(48));
  const Obligation o = expect_counterexample(all, "partition start alignment", {{"s", 40}},
                                             {{"j", 1}}, "32 partitions starting at partition 40");
  EXPECT_EQ(o.tensor, "t");
  EXPECT_EQ(not_proved(all).size(), 2u) << describe_all(not_proved(all));  // dst and src
}

// A tensor-engine transpose of xs[128, n] into a [128, 128] PSUM tile.
Program wide_transpose(int64_t n_hi) {
  Builder b("wide_transpose");
  Expr n = b.param("n", 128, n_hi, 128);
  auto x = b.input("x", DType::fp32, {128, n});
  auto o = b.output("o", DType::fp32, {128, 128});
  auto xs = b.sbuf("xs", DType::fp32, {128, n});
  auto tp = b.psum("tp", DType::fp32, {128, 128});
  auto out = b.sbuf("out", DType::fp32, {128, 128});
  b.dma_copy(xs(), x());
  b.transpose(tp(), xs());
  b.tensor_copy(out(), tp());
  b.dma_copy(o(), out());
  return b.finish();
}

TEST(IsaRules, TensorEngineTransposeOver128IsACounterexample) {
  expect_all_proved(prove_isa_rules(wide_transpose(128)));
  const auto all = prove_isa_rules(wide_transpose(384));
  expect_counterexample(all, "transpose size <= 128x128", {{"n", 256}}, {},
                        "transpose of [128, 256] exceeds 128x128");
  expect_counterexample(all, "transpose destination is [F, P]", {{"n", 256}}, {},
                        "writes [256, 128]");
}

// A bf16 tile of n elements per partition fits SBUF for n <= 90112 but engines take 65536.
Program wide_tile(int64_t n_hi) {
  Builder b("wide_tile");
  Expr n = b.param("n", 16384, n_hi, 16384);
  auto x = b.input("x", DType::bf16, {128, n});
  auto o = b.output("o", DType::bf16, {128, n});
  auto t = b.sbuf("t", DType::bf16, {128, n});
  b.dma_copy(t(), x());
  b.activation(t(), t(), {.func = ActFunc::exp});
  b.dma_copy(o(), t());
  return b.finish();
}

TEST(IsaRules, SbufFreeSizeOver64KIsACounterexample) {
  expect_all_proved(prove_isa_rules(wide_tile(65536)));
  const auto all = prove_isa_rules(wide_tile(81920));
  expect_counterexample(all, "free size <= 65536 (SBUF)", {{"n", 81920}}, {},
                        "81920 elements per partition > 65536");
}

TEST(IsaRules, PsumFreeSizeOver4KIsACounterexample) {
  auto build = [](int64_t n_hi) {
    Builder b("wide_psum");
    Expr n = b.param("n", 2048, n_hi, 2048);
    auto t = b.psum("t", DType::bf16, {128, n});
    b.memset(t(), 0.0f);
    return b.finish();
  };
  expect_all_proved(prove_isa_rules(build(4096)));
  expect_counterexample(prove_isa_rules(build(8192)), "free size <= 4096 (PSUM)", {{"n", 6144}}, {},
                        "6144 elements per partition > 4096");
}

// Loads min(m, 32) columns of x into m columns of t: the counts differ for m > 32.
Program short_load(int64_t m_hi) {
  Builder b("short_load");
  Expr m = b.param("m", 16, m_hi, 16);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto o = b.output("o", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  b.memset(t(), 0.0f);
  b.dma_copy(t({all(), ds(0, m)}), x({all(), ds(0, Expr::min(m, 32))}));
  b.dma_copy(o(), t());
  return b.finish();
}

TEST(IsaRules, DmaElementCountMismatchIsACounterexample) {
  expect_all_proved(prove_isa_rules(short_load(32)));
  const Obligation o =
      expect_counterexample(prove_isa_rules(short_load(64)), "dma element counts match",
                            {{"m", 48}}, {}, "4096 elements from 'x' into 6144 elements of 't'");
  EXPECT_EQ(o.tensor, "t");
}

// One vector-engine instruction over [128, 64] tiles whose second operand has `w` columns (w = 64
// is right; larger w are in bounds of the 128-column tile but mismatched).
Program mismatched(int which, int64_t w_hi) {
  Builder b("mismatched");
  Expr w = b.param("w", 64, w_hi, 64);
  auto a = b.sbuf("a", DType::fp32, {128, 128});
  auto c = b.sbuf("c", DType::fp32, {128, 128});
  auto d = b.sbuf("d", DType::fp32, {128, 64});
  b.memset(a(), 1.0f);
  b.memset(c(), 2.0f);
  switch (which) {
    case 0:
      b.tensor_tensor(d(), a({all(), ds(0, 64)}), c({all(), ds(0, w)}), AluOp::add);
      break;
    case 1:
      b.tensor_scalar(d(), a({all(), ds(0, 64)}), AluOp::multiply,
                      c({all(), ds(0, Expr::floordiv(w, 64))}));
      break;
    case 2:
      b.tensor_reduce(d({all(), ds(0, Expr::floordiv(w, 64))}), a(), AluOp::add);
      break;
    default: {
      auto p = b.psum("p", DType::fp32, {128, 64});
      b.matmul(p(), a({ds(0, 128), all()}), c({ds(0, 128), ds(0, w)}));
    }
  }
  return b.finish();
}

TEST(IsaRules, OperandShapeRulesGiveCounterexamples) {
  expect_all_proved(prove_isa_rules(mismatched(0, 64)));
  expect_counterexample(prove_isa_rules(mismatched(0, 128)),
                        "operand shapes match (tensor_tensor inputs)", {{"w", 128}}, {},
                        "'a' is [128, 64] but 'c' is [128, 128]");
  expect_all_proved(prove_isa_rules(mismatched(1, 64)));
  expect_counterexample(prove_isa_rules(mismatched(1, 128)), "per-partition column [P,1]",
                        {{"w", 128}}, {}, "'c' is [128, 2]; needs [128, 1]");
  expect_all_proved(prove_isa_rules(mismatched(2, 64)));
  expect_counterexample(prove_isa_rules(mismatched(2, 128)),
                        "tensor_reduce destination is [P, kept]", {{"w", 128}}, {},
                        "'d' is [128, 2]");
}

TEST(IsaRules, MatmulShapeRulesGiveCounterexamples) {
  expect_counterexample(prove_isa_rules(mismatched(3, 128)), "matmul destination is [M, N]",
                        {{"w", 128}}, {}, "[M, N] = [128, 128] but 'p' is [128, 64]");
}

// Matmul operands: stationary a[0:k_st, 0:m] (K = k_st, M = m), moving c[0:k_mv, 0:64], into a
// [m_dst, 64] PSUM tile.
Program matmul_kernel(Expr k_st, Expr m, Expr k_mv, Expr m_dst, Builder& b,
                      DType dst_dtype = DType::fp32) {
  auto a = b.sbuf("a", DType::bf16, {128, 256});
  auto c = b.sbuf("c", DType::bf16, {128, 64});
  auto p = b.psum("p", dst_dtype, {m_dst, 64});
  b.memset(a(), 1.0f);
  b.memset(c(), 1.0f);
  b.matmul(p(), a({ds(0, k_st), ds(0, m)}), c({ds(0, k_mv), all()}));
  return b.finish();
}

TEST(IsaRules, MatmulContractionMismatchIsACounterexample) {
  Builder b("matmul_k");
  Expr k = b.param("k", 64, 128, 64);
  const auto all = prove_isa_rules(matmul_kernel(64, 128, k, 128, b));
  expect_counterexample(all, "matmul K matches", {{"k", 128}}, {},
                        "stationary has 64 partitions, moving has 128");
  EXPECT_EQ(not_proved(all).size(), 1u) << describe_all(not_proved(all));
}

TEST(IsaRules, MatmulStationaryWiderThan128IsACounterexample) {
  Builder b("matmul_m");
  Expr m = b.param("m", 128, 256, 64);
  const auto all = prove_isa_rules(matmul_kernel(128, m, 128, 128, b));
  expect_counterexample(all, "matmul M <= 128", {{"m", 192}}, {}, "M=192 > 128");
  expect_counterexample(all, "matmul destination is [M, N]", {{"m", 192}}, {},
                        "[M, N] = [192, 64] but 'p' is [128, 64]");
}

// K is at most the partition count on every generation, so the K limit only bites on a
// configuration with a smaller limit; the interpreter applies the same limit.
TEST(IsaRules, MatmulKLimitFollowsTheConfiguration) {
  auto build = [] {
    Builder b("matmul_k_limit");
    Expr k = b.param("k", 32, 128, 32);
    return matmul_kernel(k, 128, k, 128, b);
  };
  expect_all_proved(prove_isa_rules(build()));
  HwConfig small = hw_config_trn1();
  small.name = "small_k";
  small.matmul_max_k = 64;
  expect_counterexample(prove_isa_rules(build(), on(small)), "matmul K <= 64", {{"k", 96}}, {},
                        "K=96 > 64");
}

// ARCH4: only trn3 lets a matmul write bf16 PSUM; no param changes that.
TEST(IsaRules, MatmulIntoBf16PsumDependsOnTheGeneration) {
  auto build = [] {
    Builder b("matmul_bf16");
    Expr m = b.param("m", 64, 128, 64);
    return matmul_kernel(128, m, 128, m, b, DType::bf16);
  };
  const auto trn2 = prove_isa_rules(build(), on(hw_config_trn2()));
  expect_counterexample(trn2, "matmul into bf16 PSUM", {{"m", 64}}, {},
                        "trn2 accumulates to fp32 PSUM only");
  EXPECT_EQ(not_proved(trn2).size(), 1u) << describe_all(not_proved(trn2));
  expect_all_proved(prove_isa_rules(build(), on(hw_config_trn3())));
}

// The vector engine transposes 32x32 blocks.
TEST(IsaRules, VectorTransposeOver32IsACounterexample) {
  auto build = [](int64_t w_hi) {
    Builder b("vector_transpose");
    Expr w = b.param("w", 32, w_hi, 32);
    auto s = b.sbuf("s", DType::fp32, {128, 64});
    auto d = b.sbuf("d", DType::fp32, {64, 32});
    b.memset(s(), 1.0f);
    b.transpose(d({ds(0, w), all()}), s({ds(0, 32), ds(0, w)}), Engine::Vector);
    return b.finish();
  };
  expect_all_proved(prove_isa_rules(build(32)));
  expect_counterexample(prove_isa_rules(build(64)), "transpose size <= 32x32", {{"w", 64}}, {},
                        "transpose of [32, 64] exceeds 32x32");
}

// resolve() rejects a view dim of size 0 before anything else.
TEST(IsaRules, EmptyViewIsACounterexample) {
  auto build = [](int64_t lo) {
    Builder b("empty_view");
    Expr m = b.param("m", lo, 64, 16);
    auto x = b.input("x", DType::fp32, {128, 64});
    auto t = b.sbuf("t", DType::fp32, {128, 64});
    b.dma_copy(t({all(), ds(0, m - 16)}), x({all(), ds(0, m - 16)}));
    return b.finish();
  };
  expect_all_proved(prove_isa_rules(build(32)));
  const Obligation o = expect_counterexample(prove_isa_rules(build(16)), "access sizes >= 1",
                                             {{"m", 16}}, {}, "dim 1 has size 0");
  EXPECT_EQ(o.role, "write");
}

// ISA-NEW: iota values offset + p + i over a [128, 64] view are computed in int32.
TEST(IsaRules, AffinePatternOverflowingInt32IsACounterexample) {
  auto build = [](int64_t hi) {
    Builder b("iota_offset");
    Expr off = b.param("off", 0, hi);
    auto t = b.sbuf("t", DType::int32, {128, 64});
    b.iota(t(), off, 1, {1});
    return b.finish();
  };
  expect_all_proved(prove_isa_rules(build(2147483647 - 127 - 63)));
  expect_counterexample(prove_isa_rules(build(2147483647)), "affine pattern fits int32",
                        {{"off", 2147483647 - 127 - 63 + 1}}, {},
                        "magnitude 2147483648 > 2147483647");
}

// Offsets of an indirect gather are a [rows, 1] column; here the column view has w columns.
TEST(IsaRules, IndirectOffsetsWiderThanAColumnIsACounterexample) {
  auto build = [](int64_t w_hi) {
    Builder b("gather");
    Expr w = b.param("w", 1, w_hi);
    auto x = b.input("x", DType::fp32, {128, 64});
    auto tbl = b.sbuf("tbl", DType::int32, {128, 2});
    auto t = b.sbuf("t", DType::fp32, {128, 64});
    b.memset(tbl(), 0.0f);
    b.dma_copy(t(), indirect(x(), 0, tbl({all(), ds(0, w)}), 0, 0));
    return b.finish();
  };
  expect_all_proved(prove_isa_rules(build(1)));
  expect_counterexample(prove_isa_rules(build(2)), "indirect offsets column [P,1]", {{"w", 2}}, {},
                        "offsets view is [128, 2], needs [128, 1]");
}

}  // namespace
}  // namespace ncv::solver
