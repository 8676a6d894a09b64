// Allocation obligations: every registered kernel is proved for trn1; broken programs (a buffer
// one element too large, too many partitions, a placement past the end of SBUF in the last
// iteration, two placements that overlap for some seqlen) give counterexamples at the boundary
// that replay on the interpreter; the tutorial kernel widened beyond what fits stops exactly
// where the frontier and the brute force say.
#include "solver/allocation.h"

#include <gtest/gtest.h>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "kernels/tests/registry_slices.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/frontier.h"
#include "solver/tests/fermat_placement.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::not_proved;

using kernels::LabelledProgram;
using kernels::option_programs;

size_t count_rule(const std::vector<Obligation>& all, const std::string& rule) {
  size_t n = 0;
  for (const Obligation& o : all) n += o.rule == rule;
  return n;
}

const int64_t kTrn1Sbuf = hw_config_trn1().sbuf_usable_bytes_per_partition();

// The programs' allocation proved at their default generation; returns how many placement pairs
// were checked.
size_t expect_allocation_proved(const std::vector<LabelledProgram>& programs) {
  size_t overlaps = 0;
  for (const LabelledProgram& lp : programs) {
    const auto all = prove_allocation(
        lp.program, {.hw = find_hw_config(kernels::default_generation(*lp.variant))});
    EXPECT_GE(count_rule(all, "SBUF capacity"), 1u) << lp.label;
    EXPECT_GE(count_rule(all, "PSUM capacity"), 1u) << lp.label;
    overlaps += count_rule(all, "placements disjoint");
    for (const Obligation& o : all) {
      EXPECT_EQ(o.cls, ObligationClass::allocation);
      EXPECT_EQ(o.instruction, -1);
    }
    for (const Obligation& o : not_proved(all)) ADD_FAILURE() << lp.label << ": " << o.describe();
  }
  return overlaps;
}

// Registry-wide (README.md "Tests"): one kernel per family at the option sets covering every value
// in the default tier (PerFamily/), every kernel at every option set in the deep tier (Deep/).
class AllocationRegistry : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocationRegistry, EveryOptionSetIsProvedAtItsDefaultGeneration) {
  const kernels::Variant& v = *kernels::find_variant(GetParam());
  const auto programs = kernels::testing::tier_programs(v, kernels::testing::in_deep_test());
  EXPECT_GE(programs.size(), 1u);
  expect_allocation_proved(programs);
}

INSTANTIATE_TEST_SUITE_P(PerFamily, AllocationRegistry,
                         ::testing::ValuesIn(kernels::testing::family_representatives()),
                         kernels::testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, AllocationRegistry,
                         ::testing::ValuesIn(kernels::testing::all_kernels()),
                         kernels::testing::kernel_param_name);

// sd_attention_allocated places every buffer explicitly: its live pairs are checked pairwise.
TEST(Allocation, ExplicitPlacementsAreCheckedPairwise) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention_allocated");
  EXPECT_GT(expect_allocation_proved(kernels::testing::tier_programs(v, false)), 0u);
}

// out[128, N + 1] = 0 through one SBUF buffer of N + 1 fp32 per partition: at N = capacity / 4
// (the domain maximum) it is one element too large, everywhere else it fits.
Program one_element_too_large() {
  Builder b("too_large");
  Expr N = b.param("N", 1, kTrn1Sbuf / 4);
  auto out = b.output("out", DType::fp32, {128, N + 1});
  auto t = b.sbuf("t", DType::fp32, {128, N + 1});
  b.memset(t(), 0.0f);
  b.dma_copy(out(), t());
  return b.finish();
}

TEST(Allocation, BufferOneElementTooLargeAtTheMaximumOnly) {
  const auto all = prove_allocation(one_element_too_large());
  const auto bad = not_proved(all);
  ASSERT_EQ(bad.size(), 1u);
  const Obligation& o = bad[0];
  EXPECT_EQ(o.rule, "SBUF capacity");
  EXPECT_EQ(o.verdict, Verdict::counterexample);
  ASSERT_TRUE(o.counterexample);
  EXPECT_EQ(o.counterexample->params.at("N"), kTrn1Sbuf / 4);
  EXPECT_NE(o.counterexample->violated.find(std::to_string(kTrn1Sbuf + 4) + " > "),
            std::string::npos)
      << o.counterexample->violated;
  ASSERT_TRUE(o.replay);
  EXPECT_TRUE(o.replay->reproduced) << o.replay->detail;
  EXPECT_NE(o.replay->detail.find("capacity"), std::string::npos) << o.replay->detail;
  // One below the maximum it fits exactly.
  EXPECT_FALSE(
      capacity_violation(one_element_too_large(), hw_config_trn1(), {{"N", kTrn1Sbuf / 4 - 1}}));
  EXPECT_TRUE(
      capacity_violation(one_element_too_large(), hw_config_trn1(), {{"N", kTrn1Sbuf / 4}}));
}

TEST(Allocation, TooManyPartitionsReplaysAsPartitionRule) {
  Builder b("too_many_partitions");
  Expr N = b.param("N", 1, 256);
  auto out = b.output("out", DType::fp32, {N, 4});
  auto t = b.sbuf("t", DType::fp32, {N, 4});
  b.memset(t(), 0.0f);
  b.dma_copy(out(), t());
  const auto bad = not_proved(prove_allocation(b.finish()));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rule, "buffer partitions <= 128");
  EXPECT_EQ(bad[0].tensor, "t");
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 129);
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
  EXPECT_NE(bad[0].replay->detail.find("partition_rule"), std::string::npos);
}

// Tile i of x goes through a buffer placed at byte i * D (bufs 2: copy i % 2 adds 256 bytes).
// D is chosen so that tile 7, which only exists for N = 1024, ends past the end of trn1's SBUF.
Program placement_past_the_end() {
  const int64_t d = (kTrn1Sbuf - 512) / 7 + 1;  // 7 * d + 512 > capacity >= 6 * d + 256 + 256
  Builder b("past_the_end");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 64});
  auto y = b.output("y", DType::fp32, {N, 64});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t =
        b.sbuf("t", DType::fp32, {128, 64}, {.bufs = 2, .placement = Placement{Expr(0), i * d}});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}));
    b.dma_copy(y({ds(i * 128, 128), all()}), t());
  });
  return b.finish();
}

TEST(Allocation, PlacementPastTheEndInTheLastIteration) {
  const auto bad = not_proved(prove_allocation(placement_past_the_end()));
  ASSERT_EQ(bad.size(), 1u);
  const Obligation& o = bad[0];
  EXPECT_EQ(o.rule, "placement inside SBUF");
  EXPECT_EQ(o.subject, "buffer 't' (scope of loop i)");
  ASSERT_TRUE(o.counterexample);
  EXPECT_EQ(o.counterexample->params.at("N"), 1024);
  ASSERT_EQ(o.counterexample->loop_indices.size(), 1u);
  EXPECT_EQ(o.counterexample->loop_indices[0], (std::pair<std::string, int64_t>{"i", 7}));
  EXPECT_NE(o.counterexample->violated.find("(copy 1)"), std::string::npos)
      << o.counterexample->violated;
  ASSERT_TRUE(o.replay);
  EXPECT_TRUE(o.replay->reproduced) << o.replay->detail;
  EXPECT_NE(o.replay->detail.find("capacity"), std::string::npos) << o.replay->detail;
  EXPECT_TRUE(capacity_violation(placement_past_the_end(), hw_config_trn1(), {{"N", 1024}}));
  EXPECT_FALSE(capacity_violation(placement_past_the_end(), hw_config_trn1(), {{"N", 896}}));
}

// a[128, S] fp32 at byte 0 and b[128, 128] fp32 at byte 2048: they overlap once a's 4 * S bytes
// pass 2048, i.e. from S = 640. `b_after_a`: b is used only after a's last read.
Program two_placements(bool b_after_a) {
  Builder bld("two_placements");
  Expr S = bld.param("S", 128, 2048, 128);
  auto x = bld.input("x", DType::fp32, {128, S});
  auto y = bld.input("y", DType::fp32, {128, 128});
  auto ox = bld.output("ox", DType::fp32, {128, S});
  auto oy = bld.output("oy", DType::fp32, {128, 128});
  auto a = bld.sbuf("a", DType::fp32, {128, S}, {.placement = Placement{Expr(0), Expr(0)}});
  auto b = bld.sbuf("b", DType::fp32, {128, 128}, {.placement = Placement{Expr(0), Expr(2048)}});
  if (b_after_a) {
    bld.dma_copy(a(), x());
    bld.dma_copy(ox(), a());
    bld.dma_copy(b(), y());
    bld.dma_copy(oy(), b());
  } else {
    bld.dma_copy(a(), x());
    bld.dma_copy(b(), y());  // clobbers a's bytes [2048, 2560) when S >= 640
    bld.dma_copy(ox(), a());
    bld.dma_copy(oy(), b());
  }
  return bld.finish();
}

TEST(Allocation, OverlappingPlacementsFromSomeSeqlenReplayAsClobberedRead) {
  const auto all = prove_allocation(two_placements(false));
  EXPECT_EQ(count_rule(all, "placements disjoint"), 1u);
  const auto bad = not_proved(all);
  ASSERT_EQ(bad.size(), 1u);
  const Obligation& o = bad[0];
  EXPECT_EQ(o.rule, "placements disjoint");
  EXPECT_EQ(o.subject, "buffers 'a' and 'b'");
  ASSERT_TRUE(o.counterexample);
  EXPECT_EQ(o.counterexample->params.at("S"), 640);
  EXPECT_NE(o.counterexample->violated.find("'a' partitions [0, 128) bytes [0, 2560)"),
            std::string::npos)
      << o.counterexample->violated;
  ASSERT_TRUE(o.replay);
  EXPECT_TRUE(o.replay->reproduced) << o.replay->detail;
  EXPECT_FALSE(o.replay->disagreement);
  EXPECT_NE(o.replay->detail.find("clobbered_read"), std::string::npos) << o.replay->detail;
}

// The same bytes reused once a is dead: no pair is live together, and the interpreter agrees.
TEST(Allocation, ReusingBytesAfterTheLastUseIsNotAnOverlap) {
  const Program p = two_placements(true);
  const auto all = prove_allocation(p);
  EXPECT_EQ(count_rule(all, "placements disjoint"), 0u);
  EXPECT_TRUE(not_proved(all).empty());
  const ParamValues at{{"S", 2048}};
  RunOptions opts;
  const RunResult r = run_program(p, at, random_inputs(p, at, 1), opts);
  EXPECT_FALSE(r.error) << r.error->message;
}

// A buffer of the kernel body (bytes [0, 256)) and a rotating buffer of loop i placed at byte
// 1024 - 128 * i (copy i % 2 adds 256), which reaches a's bytes in iteration 8 only.
// `a_across_loop`: a is written before the loop and read after it, so the loop lies
// in a's span; otherwise a is dead before the loop starts.
Program nested_overlap(bool a_across_loop) {
  Builder b("nested_overlap");
  Expr N = b.param("N", 1, 9);
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.input("y", DType::fp32, {N, 128, 64});
  auto ox = b.output("ox", DType::fp32, {128, 64});
  auto oy = b.output("oy", DType::fp32, {N, 128, 64});
  auto a = b.sbuf("a", DType::fp32, {128, 64}, {.placement = Placement{Expr(0), Expr(0)}});
  b.dma_copy(a(), x());
  if (!a_across_loop) b.dma_copy(ox(), a());
  b.affine_range("i", N, [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 64},
                    {.bufs = 2, .placement = Placement{Expr(0), Expr(1024) - i * 128}});
    b.dma_copy(t(), y({ds(i, 1), all(), all()}));
    b.dma_copy(oy({ds(i, 1), all(), all()}), t());
  });
  if (a_across_loop) b.dma_copy(ox(), a());
  return b.finish();
}

TEST(Allocation, NestedBufferOverlapsOnlyWhileTheOuterOneIsLive) {
  // Iteration i uses bytes [1024 - 128 i + 256 (i % 2), + 256): i = 7 gives [384, 640), i = 8
  // gives [0, 256): the first that meets a's [0, 256) is i = 8, so N = 9.
  const auto bad = not_proved(prove_allocation(nested_overlap(true)));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].subject, "buffers 'a' and 't'");
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 9);
  ASSERT_EQ(bad[0].counterexample->loop_indices.size(), 1u);
  EXPECT_EQ(bad[0].counterexample->loop_indices[0], (std::pair<std::string, int64_t>{"i", 8}));
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
  EXPECT_NE(bad[0].replay->detail.find("clobbered_read"), std::string::npos);

  const auto dead = prove_allocation(nested_overlap(false));
  EXPECT_EQ(count_rule(dead, "placements disjoint"), 0u);
  EXPECT_TRUE(not_proved(dead).empty());
}

// Bank sharing as the FlashAttention tutorial's v9/v10 trace it (model/ir/liveness.h rules 2 and
// 5): `qk` and `scores` are kernel-scope PSUM tensors of 7 blocks placed in the same banks 0-6
// (block j at bank j % 7); per q tile, qk's blocks are written and read within one iteration of
// the first loop, scores' within one iteration of the second. Never live together: proved, and
// the run agrees. `qk_read_late`: one qk block is read again after the scores loop, so qk is live
// across it and a score block overwrites it: a counterexample that replays as clobbered_read.
Program shared_banks(bool qk_read_late) {
  Builder b("shared_banks");
  Expr S = b.param("S", 512, 4096, 512);
  Expr Nk = Expr::floordiv(S, 512), Nq = Expr::floordiv(S, 128);
  auto x = b.input("x", DType::fp32, {128, 512});
  auto o = b.output("o", DType::fp32, {128, 512});
  auto in = b.sbuf("src", DType::fp32, {128, 512});
  auto acc = b.sbuf("acc", DType::fp32, {128, 512});
  b.dma_copy(in(), x());
  b.memset(acc(), 0.0f);
  auto qk = b.psum("qk", DType::fp32, {128, 7, 512}, {.placement = Placement{Expr(0), Expr(0)}});
  auto sc =
      b.psum("scores", DType::fp32, {128, 7, 512}, {.placement = Placement{Expr(0), Expr(0)}});
  b.sequential_range("i", Nq, [&](Expr) {
    b.sequential_range("j", Nk, [&](Expr j) {
      b.tensor_copy(qk({all(), one(Expr::mod(j, 7)), all()}), in());
      b.tensor_tensor(acc(), acc(), qk({all(), one(Expr::mod(j, 7)), all()}), AluOp::add);
    });
    b.sequential_range("j", Nk, [&](Expr j) {
      b.tensor_copy(sc({all(), one(Expr::mod(j, 7)), all()}), acc());
      b.tensor_tensor(acc(), acc(), sc({all(), one(Expr::mod(j, 7)), all()}), AluOp::max);
    });
    if (qk_read_late) b.tensor_tensor(acc(), acc(), qk({all(), one(Expr(0)), all()}), AluOp::add);
  });
  b.dma_copy(o(), acc());
  return b.finish();
}

TEST(Allocation, BanksSharedByBuffersLiveInSiblingLoopsAreProvedDisjointInTime) {
  const Program p = shared_banks(false);
  const auto all = prove_allocation(p);
  EXPECT_EQ(count_rule(all, "placements disjoint"), 0u);
  EXPECT_TRUE(not_proved(all).empty());
  const ParamValues at{{"S", 4096}};
  const RunResult r = run_program(p, at, random_inputs(p, at, 1), RunOptions{});
  EXPECT_FALSE(r.error) << r.error->message;
}

TEST(Allocation, BanksSharedWhileBothAreLiveStillFail) {
  const auto bad = not_proved(prove_allocation(shared_banks(true)));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rule, "placements disjoint");
  EXPECT_EQ(bad[0].subject, "buffers 'qk' and 'scores'");
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
  EXPECT_NE(bad[0].replay->detail.find("clobbered_read"), std::string::npos)
      << bad[0].replay->detail;
}

// The interpreter's capacity check and prove's capacity obligation read the same requirement
// (model/ir/liveness.h): a block-indexed PSUM tensor read after its loop needs every block, so
// 8 blocks of one bank fit trn1 (S = 4096) and 9 do not (S = 4608), and the solver's
// counterexample is that first seqlen; written and read within one iteration it needs one bank.
Program psum_blocks(bool read_after) {
  Builder b("psum_blocks");
  Expr S = b.param("S", 512, 8192, 512);
  Expr N = Expr::floordiv(S, 512);
  auto x = b.input("x", DType::fp32, {128, 512});
  auto o = b.output("o", DType::fp32, {128, 512});
  auto in = b.sbuf("src", DType::fp32, {128, 512});
  auto acc = b.sbuf("acc", DType::fp32, {128, 512});
  b.dma_copy(in(), x());
  b.memset(acc(), 0.0f);
  auto blocks = b.psum("blocks", DType::fp32, {128, N, 512});
  b.sequential_range("j", N, [&](Expr j) {
    b.tensor_copy(blocks({all(), one(j), all()}), in());
    b.tensor_tensor(acc(), acc(), blocks({all(), one(j), all()}), AluOp::add);
  });
  if (read_after) {
    b.sequential_range("j2", N, [&](Expr j) {
      b.tensor_tensor(acc(), acc(), blocks({all(), one(j), all()}), AluOp::max);
    });
  }
  b.dma_copy(o(), acc());
  return b.finish();
}

TEST(Allocation, BlockIndexedPsumCapacityIsTheSameForInterpreterAndSolver) {
  RunOptions ro;
  ro.compute_values = false;
  ro.record_trace = false;
  auto run = [&](const Program& p, int64_t S) {
    const ParamValues at{{"S", S}};
    return run_program(p, at, random_inputs(p, at, 1), ro);
  };
  const Program whole = psum_blocks(true);
  EXPECT_FALSE(run(whole, 4096).error);
  const RunResult over = run(whole, 4608);
  ASSERT_TRUE(over.error);
  EXPECT_EQ(over.error->kind, CheckKind::capacity) << over.error->message;
  const auto bad = not_proved(prove_allocation(whole));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rule, "PSUM capacity");
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].counterexample->params.at("S"), 4608);

  const Program per_block = psum_blocks(false);
  EXPECT_FALSE(run(per_block, 8192).error);
  EXPECT_TRUE(not_proved(prove_allocation(per_block)).empty());
}

// The allocator makes copy_stride = bytes per copy for explicit placements and rounds it up (to
// 4 bytes in SBUF, whole banks in PSUM) for auto-placed ones, so no program built through the
// builder or the parser can have overlapping bufs copies: the obligation is proved for every
// rotated buffer, explicit or not, in SBUF and PSUM.
TEST(Allocation, BufsCopiesAreDisjointForEveryRotatedBuffer) {
  Builder b("rotated");
  Expr N = b.param("N", 128, 1024, 128);
  Expr F = b.param("F", 1, 129);
  auto x = b.input("x", DType::fp32, {N, F});
  auto y = b.output("y", DType::fp32, {N, F});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t = b.sbuf("t", DType::bf16, {128, F}, {.bufs = 3});
    auto u = b.sbuf("u", DType::fp32, {128, F},
                    {.bufs = 2, .placement = Placement{Expr(0), Expr(8192)}});
    auto acc = b.psum("acc", DType::fp32, {128, F}, {.bufs = 2});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}));
    b.tensor_copy(acc(), t());
    b.tensor_copy(u(), acc());
    b.dma_copy(y({ds(i * 128, 128), all()}), u());
  });
  const auto all = prove_allocation(b.finish());
  EXPECT_EQ(count_rule(all, "bufs copies disjoint"), 3u);
  for (const Obligation& o : not_proved(all)) ADD_FAILURE() << o.describe();
}

// The first failing seqlen of every rule at once, one value at a time.
std::optional<int64_t> brute_force_first_failing(const Program& p, ParamValues at, int64_t hi) {
  const Param& s = *p.find_param("seqlen");
  for (int64_t v = s.lo; v <= hi; v += s.multiple_of) {
    at["seqlen"] = v;
    if (capacity_violation(p, hw_config_trn1(), at)) return v;
  }
  return std::nullopt;
}

TEST(Allocation, TutorialKernelWidenedFailsWhereTheFrontierSays) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  Program p = v.build(v.resolve({}));
  for (Param& prm : p.params) {
    if (prm.name == "seqlen") prm.hi = 65536;
  }
  const auto all = prove_allocation(p);
  const Obligation* sbuf = nullptr;
  for (const Obligation& o : all) {
    if (o.rule == "SBUF capacity") sbuf = &o;
  }
  ASSERT_NE(sbuf, nullptr);
  ASSERT_EQ(sbuf->verdict, Verdict::counterexample);
  const ParamValues& cex = sbuf->counterexample->params;
  ASSERT_TRUE(sbuf->replay);
  EXPECT_TRUE(sbuf->replay->reproduced) << sbuf->replay->detail;
  EXPECT_NE(sbuf->replay->detail.find("capacity"), std::string::npos);

  FrontierQuery q;
  q.fixed = {{"d_head", cex.at("d_head")}};
  q.search_hi = 65536;
  const FrontierResult f = capacity_frontier(p, q);
  ASSERT_EQ(f.status, FrontierResult::Status::fits) << f.unknown_reason;
  ASSERT_TRUE(f.first_failing);
  EXPECT_EQ(*f.first_failing, cex.at("seqlen"));
  EXPECT_EQ(brute_force_first_failing(p, cex, 65536), cex.at("seqlen"));
}

// The FlashAttention tutorial chain's trn1 frontier under the compiler's allocation rules
// (model/ir/liveness.h; kernels/attn_fwd/README.md's table): the largest fitting seqlen per
// version and dtype, each equal to the brute force at the first failing seqlen, and every
// registered domain ending at the smaller dtype's value.
TEST(Allocation, TutorialChainFrontierUnderTheCompilersRules) {
  struct Row {
    std::string version;
    int64_t fp32, bf16;
  };
  const std::vector<Row> rows = {{"attn_fwd_v3", 4096, 4096}, {"attn_fwd_v4", 4096, 4096},
                                 {"attn_fwd_v8", 4096, 4096}, {"attn_fwd_v8a", 9728, 12288},
                                 {"attn_fwd_v9", 6656, 8704}, {"attn_fwd_v10", 6656, 8704},
                                 {"attn_fwd_v11", 7680, 9728}};
  for (const Row& row : rows) {
    const kernels::Variant& v = *kernels::find_variant(row.version);
    int64_t declared = 0;
    for (const auto& [dtype, want] : {std::pair{"fp32", row.fp32}, std::pair{"bf16", row.bf16}}) {
      const Program p = v.build(v.resolve({{"dtype", dtype}}));
      FrontierQuery q;
      q.search_hi = 16384;
      const FrontierResult f = capacity_frontier(p, q);
      ASSERT_EQ(f.status, FrontierResult::Status::fits) << row.version << " " << f.unknown_reason;
      EXPECT_EQ(f.largest_fitting, want) << row.version << " " << dtype;
      ASSERT_TRUE(f.first_failing) << row.version << " " << dtype;
      EXPECT_EQ(brute_force_first_failing(p, {{"seqlen", *f.first_failing}}, 16384),
                *f.first_failing)
          << row.version << " " << dtype;
      declared = f.declared_hi;
    }
    EXPECT_EQ(declared, std::min(row.fp32, row.bf16)) << row.version;
  }
}

// prove's allocation class on the three kernels whose bank sharing is safe by liveness only:
// sd_attention_allocated (qk_psum and the transposes rotate over banks its PV and sum tiles
// reuse after them), attn_fwd_v9 and attn_fwd_v10 (qk and scores_psum_t in banks 0-6).
TEST(Allocation, BankSharingByLivenessIsProvedForTheAllocatedKernels) {
  for (const char* name : {"sd_attention_allocated", "attn_fwd_v9", "attn_fwd_v10"}) {
    const kernels::Variant& v = *kernels::find_variant(name);
    const Program p = v.build(v.resolve({}));
    const auto all = prove_allocation(p);
    EXPECT_TRUE(not_proved(all).empty()) << name;
    EXPECT_GE(count_rule(all, "placements disjoint"), 1u) << name;
  }
}

// The placement rule of a buffer outside SBUF only at a solution of i^3 + j^3 = k^3: within 1 ms
// Z3 cannot show there is none, and the obligation is unknown, never proved.
TEST(Allocation, UndecidedPlacementIsUnknownNeverProved) {
  ProveOptions opts;
  opts.timeout_ms = 1;
  opts.resource_limit = 1;  // stops each query at once on any machine (the timeout alone may not)
  // (Only this obligation is asserted: the trivial ones might also run out of 1 ms on a busy
  // machine, which is unknown too, never a wrong verdict.)
  size_t placements = 0;
  for (const Obligation& o : prove_allocation(testing::fermat_placement(), opts)) {
    EXPECT_NE(o.verdict, Verdict::counterexample) << o.describe();
    if (o.rule != "placement inside SBUF") continue;
    ++placements;
    EXPECT_EQ(o.verdict, Verdict::unknown);
    EXPECT_NE(o.unknown_reason.find("unknown"), std::string::npos) << o.unknown_reason;
  }
  EXPECT_EQ(placements, 1u);
}

}  // namespace
}  // namespace ncv::solver
