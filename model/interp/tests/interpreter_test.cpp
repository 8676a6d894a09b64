// Interpreter behaviour on small programs: values, the dynamic checks (each one provoked by a
// deliberately broken program), lifetimes and poison, bufs rotation, SPMD, indirect access,
// traces and determinism.
#include "model/interp/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"
#include "model/numerics/fp32_exp.h"
#include "model/numerics/tests/exp_reference.h"

namespace ncv {
namespace {

// y[N, 64] = exp(x) tile by tile; `shift` moves the load window (1 = off by one at the end).
Program exp_kernel(int64_t shift = 0, int64_t bufs = 2) {
  Builder b("exp_tiles");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 64});
  auto y = b.output("y", DType::fp32, {N, 64});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 64}, {.bufs = bufs});
    b.dma_copy(t(), x({ds(i * 128 + shift, 128), all()}));
    b.activation(t(), t(), {.func = ActFunc::exp});
    b.dma_copy(y({ds(i * 128, 128), all()}), t());
  });
  return b.finish();
}

RunResult run(const Program& p, const ParamValues& params, uint64_t seed = 1,
              RunOptions opts = {}) {
  return interptest::run_random(p, params, seed, opts);
}

// random_inputs draws floats on the 2^-23 grid of [-1, 1) from the seed alone, and integers in
// the declared value range.
TEST(RandomInputs, FloatsUniformOnTheGridOfMinusOneToOneIntegersInTheirRange) {
  Builder b("draws");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto k = b.input("k", DType::int32, {128, 1}, ValueRange{-3, 5});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  auto u = b.sbuf("u", DType::int32, {128, 1});
  b.dma_copy(t(), x());
  b.dma_copy(u(), k());
  b.dma_copy(y(), t());
  const Program p = b.finish();
  const auto in = random_inputs(p, {}, 17);
  const HostTensor& xs = in.at("x");
  double sum = 0, lo = 1, hi = -1;
  for (int64_t i = 0; i < xs.num_elements(); ++i) {
    const float v = xs.get(i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    ASSERT_EQ(std::ldexp(v, 23), std::nearbyint(std::ldexp(v, 23))) << v;  // on the grid
    sum += v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  // 8192 uniform draws: the mean's standard deviation is 0.0064; the extremes reach past 0.99.
  EXPECT_NEAR(sum / static_cast<double>(xs.num_elements()), 0.0, 0.03);
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
  std::set<int64_t> ints;
  const HostTensor& ks = in.at("k");
  for (int64_t i = 0; i < ks.num_elements(); ++i) ints.insert(static_cast<int64_t>(ks.get(i)));
  EXPECT_EQ(ints, (std::set<int64_t>{-3, -2, -1, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(random_inputs(p, {}, 17).at("x").bytes, xs.bytes);  // the seed alone decides
  EXPECT_NE(random_inputs(p, {}, 18).at("x").bytes, xs.bytes);
}

TEST(Interpreter, ComputesValuesWithTheModelsFp32Exp) {
  Program p = exp_kernel();
  ParamValues params{{"N", 256}};
  auto inputs = random_inputs(p, params, 7);
  RunResult r = run_program(p, params, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& y = r.outputs.at("y");
  const HostTensor& x = inputs.at("x");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{256, 64}));
  for (int64_t k = 0; k < y.num_elements(); ++k) {
    ASSERT_TRUE(exptest::is_faithful_exp(x.get(k), y.get(k))) << k;
    ASSERT_EQ(y.get(k), exp_f32(x.get(k))) << k;
  }
  EXPECT_EQ(r.instances, 2u * 3u);
}

TEST(Interpreter, OffByOneAtTheLastTileIsOutOfBoundsWithContext) {
  Program p = exp_kernel(/*shift=*/1);
  RunResult r = run(p, {{"N", 384}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::out_of_bounds);
  EXPECT_EQ(r.error->loop_indices, (std::vector<std::pair<std::string, int64_t>>{{"i", 2}}));
  EXPECT_NE(r.error->message.find("kernel 'exp_tiles'"), std::string::npos);
  EXPECT_NE(r.error->message.find("i=2"), std::string::npos);
  EXPECT_NE(r.error->message.find("N=384"), std::string::npos);
  EXPECT_NE(r.error->message.find("dma_copy"), std::string::npos);
  EXPECT_NE(r.error->message.find("257..384 of size 384"), std::string::npos) << r.error->message;
}

TEST(Interpreter, ReadingAFreshBufferIsAnUninitializedRead) {
  Builder b("uninit");
  auto y = b.output("y", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 8});
  auto u = b.sbuf("u", DType::fp32, {128, 8});
  b.memset(t({ds(0, 128), ds(0, 4)}), 1.0f);  // half of t written
  b.tensor_copy(u(), t());
  b.dma_copy(y(), u());
  Program p = b.finish();
  RunResult r = run(p, {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read);
  EXPECT_NE(r.error->message.find("'t'"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("byte 16"), std::string::npos) << r.error->message;
}

TEST(Interpreter, BuffersArePoisonedAgainInEachIteration) {
  // The buffer is written only in iteration 0; iteration 1 reads its fresh lifetime.
  Builder b("stale");
  auto y = b.output("y", DType::fp32, {256, 8});
  b.affine_range("i", 2, [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 8});
    b.memset(t({ds(0, 128), ds(0, Expr::max(Expr(0), 8 - i * 8) + Expr::min(i, 1))}), 2.0f);
    b.dma_copy(y({ds(i * 128, 128), all()}), t());
  });
  RunResult r = run(b.finish(), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read) << r.error->message;
  EXPECT_EQ(r.error->loop_indices.at(0).second, 1);
}

TEST(Interpreter, OverlappingExplicitPlacementsClobberEachOther) {
  Builder b("overlap");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto a = b.sbuf("a", DType::fp32, {128, 64}, {.placement = Placement{Expr(0), Expr(0)}});
  auto c = b.sbuf("c", DType::fp32, {128, 64}, {.placement = Placement{Expr(0), Expr(128)}});
  b.dma_copy(a(), x());
  b.memset(c(), 0.0f);
  b.dma_copy(y(), a());
  RunResult r = run(b.finish(), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::clobbered_read);
  EXPECT_NE(r.error->message.find("last written by 'c'"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("byte 128"), std::string::npos) << r.error->message;
}

TEST(Interpreter, DisjointExplicitPlacementsAreFine) {
  Builder b("disjoint");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto a = b.sbuf("a", DType::fp32, {128, 64}, {.placement = Placement{Expr(0), Expr(0)}});
  auto c = b.sbuf("c", DType::fp32, {128, 64}, {.placement = Placement{Expr(0), Expr(256)}});
  b.dma_copy(a(), x());
  b.memset(c(), 0.0f);
  b.tensor_tensor(a(), a(), c(), AluOp::add);
  b.dma_copy(y(), a());
  Program p = b.finish();
  auto in = random_inputs(p, {}, 3);
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.outputs.at("y").bytes, in.at("x").bytes);
}

Program matmul_into(int64_t psum_col_offset, int64_t psum_cols) {
  Builder b("bank");
  auto a = b.input("a", DType::bf16, {128, 128});
  auto m = b.input("m", DType::bf16, {128, 512});
  auto y = b.output("y", DType::fp32, {128, 512});
  auto as = b.sbuf("as", DType::bf16, {128, 128});
  auto ms = b.sbuf("ms", DType::bf16, {128, 512});
  auto ps = b.psum("ps", DType::fp32, {128, psum_cols});
  auto os = b.sbuf("os", DType::fp32, {128, 512});
  b.dma_copy(as(), a());
  b.dma_copy(ms(), m());
  b.matmul(ps({all(), ds(psum_col_offset, 512)}), as(), ms());
  b.tensor_copy(os(), ps({all(), ds(psum_col_offset, 512)}));
  b.dma_copy(y(), os());
  return b.finish();
}

// acc[128, 64] += x tile i for each of N / 128 tiles, in SBUF, in a loop of the given kind.
Program running_sum_kernel(LoopKind kind) {
  Builder b("running_sum");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto acc = b.sbuf("acc", DType::fp32, {128, 64});
  b.memset(acc(), 0.0f);
  auto body = [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 64});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}));
    b.tensor_tensor(acc(), acc(), t(), AluOp::add);
  };
  if (kind == LoopKind::affine)
    b.affine_range("i", Expr::floordiv(N, 128), body);
  else
    b.sequential_range("i", Expr::floordiv(N, 128), body);
  b.dma_copy(y(), acc());
  return b.finish();
}

TEST(Interpreter, ACarriedDependencyInAnAffineLoopIsCaught) {
  RunResult r = run(running_sum_kernel(LoopKind::affine), {{"N", 384}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::carried_dependency);
  // Iteration 1 is the first to read what another iteration (0) wrote.
  EXPECT_EQ(r.error->loop_indices, (std::vector<std::pair<std::string, int64_t>>{{"i", 1}}));
  EXPECT_NE(r.error->message.find("written by iteration 0 of affine loop 'i'"), std::string::npos)
      << r.error->message;
  // One iteration has nothing to depend on.
  EXPECT_FALSE(run(running_sum_kernel(LoopKind::affine), {{"N", 128}}).error);
}

TEST(Interpreter, TheSameDependencyInASequentialLoopIsFine) {
  RunResult r = run(running_sum_kernel(LoopKind::sequential), {{"N", 384}});
  ASSERT_FALSE(r.error) << r.error->message;
}

TEST(Interpreter, PsumAccumulationAcrossAffineIterationsIsAllowed) {
  // out[64, 64] = sum over k tiles of x_k^T x_k: the matmul accumulates in PSUM across an affine
  // loop (the one carried dependency affine loops allow), then a copy reads it after the loop.
  Builder b("psum_acc");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 64});
  auto y = b.output("y", DType::fp32, {64, 64});
  auto ps = b.psum("ps", DType::fp32, {64, 64});
  b.memset(ps(), 0.0f);
  b.affine_range("k", Expr::floordiv(N, 128), [&](Expr k) {
    auto t = b.sbuf("t", DType::fp32, {128, 64});
    b.dma_copy(t(), x({ds(k * 128, 128), all()}));
    b.matmul(ps(), t(), t(), /*accumulate=*/true);
  });
  auto o = b.sbuf("o", DType::fp32, {64, 64});
  b.tensor_copy(o(), ps());
  b.dma_copy(y(), o());
  RunResult r = run(b.finish(), {{"N", 384}});
  ASSERT_FALSE(r.error) << r.error->message;
}

TEST(Interpreter, ReadsOfAnEnclosingIterationsWritesAreNotCarried) {
  // Each outer iteration writes a row block, then an inner affine loop reads it in every inner
  // iteration: a dependency on the enclosing iteration, not across iterations of one loop.
  Builder b("nested");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 64});
  auto y = b.output("y", DType::fp32, {N, 64});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 64});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}));
    auto u = b.sbuf("u", DType::fp32, {128, 64});
    b.affine_range("j", 2, [&](Expr j) {
      b.activation(u({all(), ds(j * 32, 32)}), t({all(), ds(j * 32, 32)}), {.func = ActFunc::exp});
    });
    b.dma_copy(y({ds(i * 128, 128), all()}), u());
  });
  RunResult r = run(b.finish(), {{"N", 384}});
  ASSERT_FALSE(r.error) << r.error->message;
}

TEST(Interpreter, MatmulTileCrossingAPsumBankIsRejected) {
  RunResult ok = run(matmul_into(512, 1024), {});
  EXPECT_FALSE(ok.error) << ok.error->message;
  RunResult bad = run(matmul_into(256, 1024), {});
  ASSERT_TRUE(bad.error);
  EXPECT_EQ(bad.error->kind, CheckKind::psum_bank);
  EXPECT_NE(bad.error->message.find("[1024, 3072)"), std::string::npos) << bad.error->message;
}

TEST(Interpreter, MatmulValuesMatchAnExactIntegerProduct) {
  Program p = matmul_into(0, 512);
  auto in = random_inputs(p, {}, 11);
  // Small integers: every product and partial sum is exact in fp32.
  for (auto& [name, h] : in) {
    for (int64_t k = 0; k < h.num_elements(); ++k)
      h.set(k, static_cast<float>((k * 7 + 3) % 9) - 4);
  }
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& a = in.at("a");
  const HostTensor& m = in.at("m");
  const HostTensor& y = r.outputs.at("y");
  for (int row = 0; row < 128; ++row) {
    for (int col = 0; col < 512; ++col) {
      int64_t sum = 0;
      for (int k = 0; k < 128; ++k) {
        sum +=
            static_cast<int64_t>(a.get(k * 128 + row)) * static_cast<int64_t>(m.get(k * 512 + col));
      }
      ASSERT_EQ(y.get(row * 512 + col), static_cast<float>(sum)) << row << "," << col;
    }
  }
}

TEST(Interpreter, CapacityOverflowNamesTheBytes) {
  Builder b("big");
  Expr W = b.param("W", 1024, 1 << 20, 1024);
  auto y = b.output("y", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, W});
  b.memset(t(), 1.0f);
  b.dma_copy(y(), t({all(), ds(0, 8)}));
  Program p = b.finish();
  EXPECT_FALSE(run(p, {{"W", 45056}}).error);  // 176 KiB exactly fits trn1
  RunResult r = run(p, {{"W", 45057 + 1023 - (45057 + 1023) % 1024}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::capacity);
  EXPECT_NE(r.error->message.find("180224 usable"), std::string::npos) << r.error->message;
  RunOptions trn2;
  trn2.hw = &hw_config_trn2();
  EXPECT_FALSE(run(p, {{"W", 46080}}, 1, trn2).error);
}

// Two buffers of 120,000 bytes per partition live together (240,000 > trn1's 180,224) while no
// instruction touches more than one of them: the compiler spills, so with spills allowed the run
// computes the values and says why a verdict on it is unknown; the strict model fails.
TEST(Interpreter, LiveBuffersOverCapacityRunWithSpillsWhenAllowed) {
  Builder b("spills");
  auto y = b.output("y", DType::fp32, {128, 8});
  auto z = b.output("z", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 30000});
  auto u = b.sbuf("u", DType::fp32, {128, 30000});
  b.memset(t(), 1.0f);
  b.memset(u(), 2.0f);
  b.dma_copy(y(), t({all(), ds(0, 8)}));
  b.dma_copy(z(), u({all(), ds(0, 8)}));
  Program p = b.finish();
  RunResult strict = run(p, {});
  ASSERT_TRUE(strict.error);
  EXPECT_EQ(strict.error->kind, CheckKind::capacity);
  RunOptions spills;
  spills.spills_allowed = true;
  RunResult r = run(p, {}, 1, spills);
  ASSERT_FALSE(r.error) << r.error->message;
  ASSERT_TRUE(r.spill);
  EXPECT_EQ(r.spill->kind, CheckKind::capacity);
  EXPECT_NE(r.spill->message.find("240000"), std::string::npos) << r.spill->message;
  EXPECT_NE(r.spill->message.find("spill"), std::string::npos) << r.spill->message;
  EXPECT_EQ(r.outputs.at("y").get(0), 1.0f);
  EXPECT_EQ(r.outputs.at("z").get(128 * 8 - 1), 2.0f);
  // Within capacity nothing is said: the same program with buffers half as wide.
  Builder small("fits");
  auto ys = small.output("y", DType::fp32, {128, 8});
  auto ts = small.sbuf("t", DType::fp32, {128, 15000});
  small.memset(ts(), 1.0f);
  small.dma_copy(ys(), ts({all(), ds(0, 8)}));
  RunResult fits = run(small.finish(), {}, 1, spills);
  EXPECT_FALSE(fits.error);
  EXPECT_FALSE(fits.spill);
}

// An instruction whose own operands exceed the memory cannot run under any allocation: a
// capacity failure even where spills are allowed.
TEST(Interpreter, AnInstructionWhoseOperandsExceedTheMemoryFailsEvenWithSpills) {
  Builder b("operands");
  auto y = b.output("y", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 30000});
  auto u = b.sbuf("u", DType::fp32, {128, 30000});
  b.memset(t(), 1.0f);
  b.memset(u(), 2.0f);
  b.tensor_tensor(u(), t(), u(), AluOp::add);  // reads and writes 240,000 bytes per partition
  b.dma_copy(y(), u({all(), ds(0, 8)}));
  RunOptions spills;
  spills.spills_allowed = true;
  RunResult r = run(b.finish(), {}, 1, spills);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::capacity);
  EXPECT_NE(r.error->message.find("no allocation holds them"), std::string::npos)
      << r.error->message;
}

TEST(Interpreter, PartitionStartAlignmentIsEnforcedForComputeEngines) {
  Builder b("partitions");
  auto y = b.output("y", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 8});
  b.memset(t(), 1.0f);
  b.memset(t({ds(32, 64), all()}), 2.0f);  // 64 partitions must start at 0 or 64
  b.dma_copy(y(), t());
  RunResult r = run(b.finish(), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::partition_rule);
}

TEST(Interpreter, RotatingBuffersAlternateAddresses) {
  Program p = exp_kernel(0, /*bufs=*/2);
  RunResult r = run(p, {{"N", 512}}, 1);
  ASSERT_FALSE(r.error);
  // Event 0 of each iteration is the load into t: region index 1 is its write.
  std::vector<uint64_t> starts;
  for (const TraceEvent& e : r.trace.events) {
    if (e.engine == Engine::Dma && r.trace.regions[e.region_begin + 1].memory == Memory::SBUF) {
      starts.push_back(r.trace.regions[e.region_begin + 1].byte_begin);
    }
  }
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_NE(starts[0], starts[1]);
  EXPECT_EQ(starts[0], starts[2]);
  EXPECT_EQ(starts[1], starts[3]);
  RunResult single = run(exp_kernel(0, 1), {{"N", 512}}, 1);
  EXPECT_EQ(single.trace.regions[single.trace.events[0].region_begin + 1].byte_begin,
            single.trace.regions[single.trace.events[3].region_begin + 1].byte_begin);
}

TEST(Interpreter, SpmdCoresHaveTheirOwnSbufAndExchangeTiles) {
  // Each of two cores loads its tile, sends it into the peer's `recv`, and stores what it got.
  Builder b("swap");
  b.grid(2);
  Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {256, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  auto recv = b.sbuf("recv", DType::fp32, {128, 16});
  b.dma_copy(mine(), x({ds(pid * 128, 128), all()}));
  b.dma_copy(on_core(recv(), 1 - pid), mine());
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  Program p = b.finish();
  auto in = random_inputs(p, {}, 5);
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& xi = in.at("x");
  const HostTensor& yo = r.outputs.at("y");
  for (int64_t k = 0; k < 128 * 16; ++k) {
    EXPECT_EQ(yo.bits(k), xi.bits(k + 128 * 16));
    EXPECT_EQ(yo.bits(k + 128 * 16), xi.bits(k));
  }
  int cores_seen = 0;
  for (const TraceEvent& e : r.trace.events) cores_seen |= 1 << e.core;
  EXPECT_EQ(cores_seen, 3);
}

// A kernel traced once per program id (frontend per_program.py): each core's statements sit
// under a guard loop that runs on that core only, so the two sides of one exchange are two
// statements. Core 1 does one more DMA before its side, so the cores reach them at different
// steps; `guarded` false puts core 1's side outside its guard (a statement that never meets a
// different one).
Program guarded_swap(bool guarded) {
  Builder b("guarded_swap");
  b.grid(2);
  Expr pid = Builder::program_id();
  auto x = b.input("x", DType::fp32, {256, 16});
  auto y = b.output("y", DType::fp32, {256, 16});
  auto mine = b.sbuf("mine", DType::fp32, {128, 16});
  auto recv = b.sbuf("recv", DType::fp32, {128, 16});
  auto guard = [&](int64_t p, const std::function<void(Expr)>& body) {
    b.sequential_range("only_program" + std::to_string(p), Expr::max(pid, Expr(p)),
                       Expr::min(pid, Expr(p)) + 1, 1, body);
  };
  guard(0, [&](Expr) {
    b.dma_copy(mine(), x({ds(0, 128), all()}));
    b.dma_copy(on_core(recv(), Expr(1)), mine());
  });
  guard(1, [&](Expr) {
    b.dma_copy(mine(), x({ds(0, 128), all()}));
    b.dma_copy(mine(), x({ds(128, 128), all()}));
    if (guarded) b.dma_copy(on_core(recv(), Expr(0)), mine());
  });
  if (!guarded) b.dma_copy(on_core(recv(), 1 - pid), mine());
  b.dma_copy(y({ds(pid * 128, 128), all()}), recv());
  return b.finish();
}

TEST(Interpreter, TransfersUnderProgramGuardsThatNameEachOtherMeet) {
  Program p = guarded_swap(true);
  auto in = random_inputs(p, {}, 6);
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& xi = in.at("x");
  const HostTensor& yo = r.outputs.at("y");
  for (int64_t k = 0; k < 128 * 16; ++k) {
    EXPECT_EQ(yo.bits(k), xi.bits(k + 128 * 16));  // core 0 got core 1's rows 128..255
    EXPECT_EQ(yo.bits(k + 128 * 16), xi.bits(k));  // core 1 got core 0's rows 0..127
  }
}

TEST(Interpreter, ATransferOutsideProgramGuardsMeetsOnlyItself) {
  // Core 0 waits at its guarded side, core 1 at the unguarded statement (which core 0 reaches
  // only after its side): neither meets, as before guards paired anything.
  RunResult r = run_program(guarded_swap(false), {}, random_inputs(guarded_swap(false), {}, 6));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::well_formed);
  EXPECT_NE(r.error->message.find("never reaches"), std::string::npos) << r.error->message;
}

Program gather_kernel(int64_t declared_hi) {
  Builder b("gather");
  auto cache = b.input("cache", DType::fp32, {8, 16});
  auto table = b.input("table", DType::int32, {4, 1}, ValueRange{0, 7});
  auto y = b.output("y", DType::fp32, {4, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto g = b.sbuf("g", DType::fp32, {4, 16});
  b.dma_copy(ts(), table());
  // Row r of g = cache[table[r]]: the start of dim 0 is 0, step 0, offset per row.
  b.dma_copy(g(), indirect(cache({ds(0, 4, 0), all()}), 0, ts(), 0, declared_hi));
  b.dma_copy(y(), g());
  return b.finish();
}

TEST(Interpreter, IndirectAccessGathersRowsThroughATable) {
  Program p = gather_kernel(7);
  auto in = random_inputs(p, {}, 9);
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& t = in.at("table");
  for (int row = 0; row < 4; ++row) {
    int src = static_cast<int>(static_cast<int32_t>(t.bits(row)));
    for (int c = 0; c < 16; ++c) {
      EXPECT_EQ(r.outputs.at("y").bits(row * 16 + c), in.at("cache").bits(src * 16 + c));
    }
  }
}

TEST(Interpreter, IndirectOffsetsOutsideTheirDeclaredRangeAreCaught) {
  Program p = gather_kernel(2);
  auto in = random_inputs(p, {}, 9);
  for (int row = 0; row < 4; ++row) {
    store_bits(DType::int32, in.at("table").bytes.data() + 4 * row, static_cast<uint32_t>(row + 3));
  }
  RunResult r = run_program(p, {}, in);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::indirect_range);
  EXPECT_NE(r.error->message.find("offset 3 at row 0"), std::string::npos) << r.error->message;
}

TEST(Interpreter, InputsOutsideTheirDeclaredValueRangeAreRejected) {
  Program p = gather_kernel(7);
  auto in = random_inputs(p, {}, 9);
  store_bits(DType::int32, in.at("table").bytes.data(), 8u);
  EXPECT_THROW(run_program(p, {}, in), InputError);
}

TEST(Interpreter, TraceOnlyRunsRecordTheSameTrace) {
  Program p = exp_kernel();
  RunOptions trace_only;
  trace_only.compute_values = false;
  RunResult a = run(p, {{"N", 512}});
  RunResult b = run(p, {{"N", 512}}, 1, trace_only);
  ASSERT_FALSE(a.error);
  ASSERT_FALSE(b.error);
  EXPECT_EQ(a.trace, b.trace);
  EXPECT_TRUE(b.outputs.empty());
}

TEST(Interpreter, RunsAreDeterministicAndFastEqualsReference) {
  Program p = exp_kernel();
  RunOptions ref;
  ref.mode = ExecMode::reference;
  RunResult a = run(p, {{"N", 384}}, 3);
  RunResult b = run(p, {{"N", 384}}, 3);
  RunResult c = run(p, {{"N", 384}}, 3, ref);
  EXPECT_EQ(a.outputs.at("y").bytes, b.outputs.at("y").bytes);
  EXPECT_EQ(a.outputs.at("y").bytes, c.outputs.at("y").bytes);
}

TEST(Interpreter, UnwrittenOutputElementsAreReported) {
  Builder b("partial");
  Expr N = b.param("N", 128, 1024, 128);
  auto x = b.input("x", DType::fp32, {N, 8});
  auto y = b.output("y", DType::fp32, {N, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 8});
  b.dma_copy(t(), x({ds(0, 128), all()}));
  b.dma_copy(y({ds(0, 128), all()}), t());  // the tail tiles are never stored
  Program p = b.finish();
  EXPECT_FALSE(run(p, {{"N", 128}}).error);
  RunResult r = run(p, {{"N", 256}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::output_not_written);
  EXPECT_NE(r.error->message.find("1024 element(s)"), std::string::npos) << r.error->message;

  // The simulator's choice: the output comes back, its unwritten elements counted and NaN.
  RunOptions lenient;
  lenient.allow_unwritten_outputs = true;
  RunResult s = run(p, {{"N", 256}}, 0, lenient);
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_EQ(s.unwritten_output_elements, (std::map<std::string, int64_t>{{"y", 1024}}));
  const HostTensor& y_out = s.outputs.at("y");
  EXPECT_FALSE(std::isnan(y_out.get(127 * 8)));
  EXPECT_TRUE(std::isnan(y_out.get(128 * 8)));
  EXPECT_TRUE(std::isnan(y_out.get(255 * 8 + 7)));
  EXPECT_TRUE(run(p, {{"N", 128}}, 0, lenient).unwritten_output_elements.empty());
}

TEST(Interpreter, GenerationRulesApplyPerHardwareConfig) {
  Builder b("scalar_copy");
  auto y = b.output("y", DType::fp32, {128, 8});
  auto t = b.sbuf("t", DType::fp32, {128, 8});
  auto u = b.sbuf("u", DType::fp32, {128, 8});
  b.memset(t(), 1.0f);
  b.tensor_copy(u(), t(), Engine::Scalar);
  b.dma_copy(y(), u());
  Program p = b.finish();
  RunResult v2 = run(p, {});
  ASSERT_TRUE(v2.error);
  EXPECT_EQ(v2.error->kind, CheckKind::engine_rule);
  RunOptions trn2;
  trn2.hw = &hw_config_trn2();
  EXPECT_FALSE(run(p, {}, 1, trn2).error);
}

TEST(Interpreter, AffinePatternsMustStayInInt32) {
  Builder b("iota_range");
  Expr base = b.param("base", 0, int64_t{1} << 40);
  auto y = b.output("y", DType::int32, {128, 8});
  auto t = b.sbuf("t", DType::int32, {128, 8});
  b.iota(t(), base, 1, {128});
  b.dma_copy(y(), t());
  Program p = b.finish();
  RunResult ok = run(p, {{"base", 5}});
  ASSERT_FALSE(ok.error) << ok.error->message;
  EXPECT_EQ(ok.outputs.at("y").bits(1 * 8 + 2), 5u + 1u + 2u * 128u);  // offset + p + 128 * i
  RunResult bad = run(p, {{"base", int64_t{1} << 31}});
  ASSERT_TRUE(bad.error);
  EXPECT_EQ(bad.error->kind, CheckKind::shape_rule);
  EXPECT_NE(bad.error->message.find("iota pattern values overflow int32"), std::string::npos);
}

TEST(Interpreter, BadParamsAreInputErrors) {
  Program p = exp_kernel();
  EXPECT_THROW(check_params(p, {}), InputError);
  EXPECT_THROW(check_params(p, {{"N", 100}}), InputError);
  EXPECT_THROW(check_params(p, {{"N", 2048}}), InputError);
  EXPECT_THROW(check_params(p, {{"N", 128}, {"Q", 1}}), InputError);
  try {
    check_params(p, {{"N", 130}});
    FAIL() << "N=130 is not a multiple of 128 and must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(e.message.find("multiple of 128"), std::string::npos) << e.message;
  }
  Builder b("rel");
  Expr h = b.param("h", 1, 8), kv = b.param("kv", 1, 8);
  b.require(RelationKind::Divides, kv, h);
  auto y = b.output("y", DType::fp32, {128, 1});
  auto t = b.sbuf("t", DType::fp32, {128, 1});
  b.memset(t(), 0.0f);
  b.dma_copy(y(), t());
  Program q = b.finish();
  EXPECT_NO_THROW(check_params(q, {{"h", 8}, {"kv", 2}}));
  EXPECT_THROW(check_params(q, {{"h", 8}, {"kv", 3}}), InputError);
}

TEST(Interpreter, RunsBeyondTheMemoryBudgetAreRefusedBeforeAllocating) {
  Builder b("huge");
  Expr N = b.param("N", 128, int64_t{1} << 40, 128);
  auto x = b.input("x", DType::fp32, {N, 1024});
  auto y = b.output("y", DType::fp32, {128, 1024});
  auto t = b.sbuf("t", DType::fp32, {128, 1024});
  b.dma_copy(t(), x({ds(0, 128), all()}));
  b.dma_copy(y(), t());
  Program p = b.finish();
  std::map<std::string, HostTensor> none;
  RunOptions small;
  small.memory_budget_bytes = 64 << 20;
  EXPECT_THROW(run_program(p, {{"N", int64_t{1} << 30}}, none, small), InputError);
  EXPECT_THROW(random_inputs(p, {{"N", int64_t{1} << 30}}, 1), InputError);
  EXPECT_EQ(hbm_bytes(p, {{"N", 128}}), 128 * 1024 * 4 * 2);
}

}  // namespace
}  // namespace ncv
