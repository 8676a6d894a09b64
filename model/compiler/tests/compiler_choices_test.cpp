// The compiler-choice rules (model/compiler/README.md), each on a hand-built instruction: the
// engine of unpinned copies (PSUM evictions, integer copies, SBUF->SBUF copies balanced on the
// load of the current iteration), of unpinned tensor_scalar, pinned engines kept, the transpose
// lowering by shape, and the buffer counts.
#include "model/compiler/compiler_choices.h"

#include <gtest/gtest.h>

#include "model/ir/builder.h"

namespace ncv {
namespace {

struct Copies {
  Program p;
  TensorCopy evict, cast, int_copy, pinned;
  TensorScalar scale, subtract;
};

Copies copies() {
  Builder b("copies");
  auto ps = b.psum("ps", DType::fp32, {128, 128});
  auto f = b.sbuf("f", DType::fp32, {128, 128});
  auto h = b.sbuf("h", DType::bf16, {128, 128});
  auto i = b.sbuf("i", DType::int32, {128, 128});
  auto j = b.sbuf("j", DType::int32, {128, 128});
  b.memset(f(), 1.0f);
  b.memset(i(), 1.0f);
  b.matmul(ps(), h(), h());
  b.tensor_copy(f(), ps());
  b.tensor_copy(h(), f());
  b.tensor_copy(j(), i());
  b.tensor_copy(h(), f(), Engine::Vector);
  b.tensor_scalar(h(), f(), AluOp::multiply, Imm{0.125f});
  b.tensor_scalar(h(), f(), AluOp::subtract, Imm{1.0f});
  Copies c;
  c.p = b.finish();
  std::vector<Instruction> ins;
  for_each_stmt(c.p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* x = std::get_if<InstrStmt>(&s.node)) ins.push_back(x->ins);
  });
  c.evict = std::get<TensorCopy>(ins.at(3));
  c.cast = std::get<TensorCopy>(ins.at(4));
  c.int_copy = std::get<TensorCopy>(ins.at(5));
  c.pinned = std::get<TensorCopy>(ins.at(6));
  c.scale = std::get<TensorScalar>(ins.at(7));
  c.subtract = std::get<TensorScalar>(ins.at(8));
  return c;
}

TEST(CompilerChoices, UnpinnedCopiesFollowTheProfileCounters) {
  const Copies c = copies();
  const HwConfig& hw = hw_config_trn1();
  EXPECT_FALSE(c.evict.engine.has_value());
  // A PSUM eviction goes to the Scalar engine whatever the load.
  EXPECT_EQ(chosen_engine(c.p, c.evict, hw, EngineLoad{0, 1e6}, 128), Engine::Scalar);
  // An integer copy stays on the Vector engine (the Scalar engine would round through fp32).
  EXPECT_EQ(chosen_engine(c.p, c.int_copy, hw, EngineLoad{1e6, 0}, 128), Engine::Vector);
  // An SBUF->SBUF cast of 4096 elements: Vector 3657 ns, Scalar 2926 ns at 1.12 / 1.4 GHz. With
  // 7.4 us of Vector work and 5.85 us of Scalar work in the iteration (the tutorial's q tile)
  // it goes to the Scalar engine (11.06 > 8.78 us); with 3.77 / 5.9 us (step 3) to the Vector
  // engine (7.43 < 8.83 us).
  EXPECT_EQ(chosen_engine(c.p, c.cast, hw, EngineLoad{7400, 5850}, 4096), Engine::Scalar);
  EXPECT_EQ(chosen_engine(c.p, c.cast, hw, EngineLoad{3770, 5900}, 4096), Engine::Vector);
  // A pinned copy keeps its engine.
  EXPECT_EQ(chosen_engine(c.p, c.pinned, hw, EngineLoad{1e6, 0}, 128), Engine::Vector);
  // tile * 0.125 is an activation's scale; a subtract is Vector-only.
  EXPECT_EQ(chosen_engine(c.p, c.scale, hw), Engine::Scalar);
  EXPECT_EQ(chosen_engine(c.p, c.subtract, hw), Engine::Vector);
  EXPECT_DOUBLE_EQ(estimated_ns(Engine::Vector, 32, hw), 64 / hw.vector_ghz);
}

// Unpinned tensor_tensor: integer add, subtract and multiply on int32/uint32 SBUF tiles default
// to GpSimd (ISA-NEW tensor_tensor, ISA-OLD tensor_tensor); a PSUM operand falls back to the
// Vector engine; other operators, float tiles and pinned engines stay where they were.
TEST(CompilerChoices, UnpinnedInt32ArithmeticRunsOnGpSimd) {
  Builder b("ints");
  auto i = b.sbuf("i", DType::int32, {128, 64});
  auto u = b.sbuf("u", DType::uint32, {128, 64});
  auto f = b.sbuf("f", DType::fp32, {128, 64});
  auto ps = b.psum("ps", DType::int32, {128, 64});
  b.memset(i(), 1.0f);
  b.memset(u(), 1.0f);
  b.memset(f(), 1.0f);
  b.memset(ps(), 1.0f);
  b.tensor_tensor(i(), i(), u(), AluOp::add);
  b.tensor_tensor(u(), i(), u(), AluOp::multiply);
  b.tensor_tensor(i(), i(), i(), AluOp::subtract);
  b.tensor_tensor(i(), i(), ps(), AluOp::add);
  b.tensor_tensor(i(), i(), u(), AluOp::max);
  b.tensor_tensor(i(), i(), u(), AluOp::bitwise_and);
  b.tensor_tensor(f(), f(), f(), AluOp::add);
  b.tensor_tensor(i(), i(), f(), AluOp::add);
  b.tensor_tensor(i(), i(), u(), AluOp::add, Engine::Vector);
  const Program p = b.finish();
  std::vector<Engine> got;
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* x = std::get_if<InstrStmt>(&s.node)) {
      if (auto* t = std::get_if<TensorTensor>(&x->ins)) {
        got.push_back(chosen_engine(p, *t, hw_config_trn1()));
      }
    }
  });
  const std::vector<Engine> want = {Engine::GpSimd, Engine::GpSimd, Engine::GpSimd,
                                    Engine::Vector, Engine::Vector, Engine::Vector,
                                    Engine::Vector, Engine::Vector, Engine::Vector};
  EXPECT_EQ(got, want);
}

TEST(CompilerChoices, TransposesByShape) {
  EXPECT_EQ(nc_transpose_engine(Expr(32), Expr(16)), Engine::Vector);
  EXPECT_EQ(nc_transpose_engine(Expr(128), Expr(64)), Engine::Tensor);
  EXPECT_EQ(nc_transpose_engine(Expr(32), Expr::var("d")), Engine::Tensor);
}

TEST(CompilerChoices, LoopLocalBuffersInAffineLoopsAreDoubleBuffered) {
  Builder b("buffers");
  auto x = b.input("x", DType::fp32, {128, 4 * 64});
  auto top = b.sbuf("top", DType::fp32, {128, 64});
  b.memset(top(), 0.0f);
  b.affine_range("i", Expr(4), [&](Expr i) {
    auto a = b.sbuf("a", DType::fp32, {128, 64});
    auto c = b.sbuf("c", DType::fp32, {128, 64}, {.bufs = 3});
    b.dma_copy(a(), x({all(), ds(i * 64, 64)}), 0);
    b.tensor_copy(c(), a());
  });
  b.sequential_range("k", Expr(4), [&](Expr) {
    auto s = b.sbuf("s", DType::fp32, {128, 64});
    b.memset(s(), 0.0f);
  });
  const Program p = b.finish();
  const std::vector<int64_t> n = compiler_buffers(p);
  EXPECT_EQ(n.at(*p.find_tensor("x")), 1);
  EXPECT_EQ(n.at(*p.find_tensor("top")), 1);
  EXPECT_EQ(n.at(*p.find_tensor("a")), kAutoBuffers);
  EXPECT_EQ(n.at(*p.find_tensor("c")), 3);
  EXPECT_EQ(n.at(*p.find_tensor("s")), 1);
  EXPECT_TRUE(reorders_across_iterations(Engine::Vector));
  EXPECT_FALSE(reorders_across_iterations(Engine::Dma));
}

}  // namespace
}  // namespace ncv
