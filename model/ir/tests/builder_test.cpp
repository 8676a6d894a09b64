// Builder and static validation: ids are canonical, and each static ISA rule is enforced with
// a message naming the kernel, the instruction and the rule.
#include "model/ir/builder.h"

#include <gtest/gtest.h>

namespace ncv {
namespace {

std::string build_error(const std::function<void(Builder&)>& f) {
  Builder b("k");
  f(b);
  try {
    b.finish();
  } catch (const BuildError& e) {
    return e.message;
  }
  return "";
}

TEST(Builder, CanonicalIdsPutHbmTensorsFirstAndNumberInProgramOrder) {
  Builder b("order");
  auto y = b.output("y", DType::fp32, {128, 4});
  b.affine_range("i", 2, [&](Expr) {
    auto t = b.sbuf("t", DType::fp32, {128, 4});
    b.memset(t(), 0.0f);
    b.affine_range("j", 3, [&](Expr) {
      auto u = b.sbuf("u", DType::fp32, {128, 4});
      b.tensor_copy(u(), t());
    });
  });
  auto x = b.input("x", DType::fp32, {128, 4});  // declared late: still numbered before buffers
  auto w = b.sbuf("w", DType::fp32, {128, 4});
  b.dma_copy(w(), x());
  b.dma_copy(y(), w());
  Program p = b.finish();
  ASSERT_EQ(p.tensors.size(), 5u);
  EXPECT_EQ(p.tensors[0].name, "y");
  EXPECT_EQ(p.tensors[1].name, "x");
  EXPECT_EQ(p.tensors[2].name, "t");
  EXPECT_EQ(p.tensors[3].name, "u");
  EXPECT_EQ(p.tensors[4].name, "w");
  EXPECT_EQ(p.tensors[2].scope, 1u);
  EXPECT_EQ(p.tensors[3].scope, 2u);
  EXPECT_EQ(p.num_instructions, 4u);
  EXPECT_EQ(p.num_scopes, 3u);
  // The dma_copy into w reads x: after renumbering its access names tensor 1.
  const auto& dma = std::get<InstrStmt>(p.body[2].node);
  EXPECT_EQ(dma.id, 2u);
  EXPECT_EQ(std::get<DmaCopy>(dma.ins).src.tensor, 1u);
}

TEST(Validate, MatmulOperandsMustBeInTheRightMemories) {
  std::string m = build_error([](Builder& b) {
    auto a = b.psum("a", DType::bf16, {128, 128});
    auto c = b.sbuf("c", DType::bf16, {128, 128});
    auto d = b.psum("d", DType::fp32, {128, 128});
    b.matmul(d(), a(), c());
  });
  EXPECT_NE(m.find("kernel 'k'"), std::string::npos) << m;
  EXPECT_NE(m.find("instruction #0 `matmul"), std::string::npos) << m;
  EXPECT_NE(m.find("stationary must be in sbuf, is in psum"), std::string::npos) << m;
}

TEST(Validate, EachStaticRuleHasItsMessage) {
  struct Case {
    const char* rule;
    std::function<void(Builder&)> build;
  };
  std::vector<Case> cases = {
      {"fp32 matmul input must pair with fp32",
       [](Builder& b) {
         auto a = b.sbuf("a", DType::fp32, {128, 128});
         auto c = b.sbuf("c", DType::bf16, {128, 128});
         auto d = b.psum("d", DType::fp32, {128, 128});
         b.matmul(d(), a(), c());
       }},
      {"GpSimd engine cannot access PSUM",
       [](Builder& b) {
         auto a = b.psum("a", DType::fp32, {128, 128});
         b.memset(a(), 0.0f, Engine::GpSimd);
       }},
      {"outside the scope that declares it",
       [](Builder& b) {
         TensorRef t;
         b.affine_range("i", 2, [&](Expr) {
           t = b.sbuf("t", DType::fp32, {128, 4});
           b.memset(t(), 0.0f);
         });
         b.memset(t(), 1.0f);
       }},
      {"inputs are read-only",
       [](Builder& b) {
         auto x = b.input("x", DType::fp32, {128, 4});
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         b.memset(t(), 0.0f);
         b.dma_copy(x(), t());
       }},
      {"shadows a param",
       [](Builder& b) {
         b.param("n", 1, 4);
         b.affine_range("n", 2, [&](Expr) {});
       }},
      {"partition dim cannot be strided",
       [](Builder& b) {
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         b.memset(t({ds(0, 64, 2), all()}), 0.0f);
       }},
      {"DMA moves between HBM and SBUF only",
       [](Builder& b) {
         auto x = b.input("x", DType::fp32, {128, 4});
         auto t = b.psum("t", DType::fp32, {128, 4});
         b.dma_copy(t(), x());
       }},
      {"partition dimension 256 exceeds 128",
       [](Builder& b) {
         b.sbuf("t", DType::fp32, {256, 4});
       }},
      {"needs integer dtypes",
       [](Builder& b) {
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         b.memset(t(), 0.0f);
         b.tensor_scalar(t(), t(), AluOp::bitwise_and, Imm{1.0f});
       }},
      {"never the partition axis",
       [](Builder& b) {
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         auto u = b.sbuf("u", DType::fp32, {128, 1});
         b.memset(t(), 0.0f);
         b.tensor_reduce(u(), t(), AluOp::add, 2);
       }},
      {"uses 'q', which is neither a param nor an enclosing loop variable",
       [](Builder& b) {
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         b.memset(t({all(), ds(Expr::var("q"), 1)}), 0.0f);
       }},
      {"shapes may use params only",
       [](Builder& b) {
         b.affine_range("i", 2, [&](Expr i) { b.sbuf("t", DType::fp32, {128, i + 1}); });
       }},
      {"predicate must be uint8/uint16/uint32/int32",
       [](Builder& b) {
         auto t = b.sbuf("t", DType::fp32, {128, 4});
         b.memset(t(), 0.0f);
         b.tensor_copy_predicated(t(), Imm{1.0f}, t());
       }},
      {"name declared twice",
       [](Builder& b) {
         b.sbuf("t", DType::fp32, {128, 4});
         b.sbuf("t", DType::fp32, {128, 4});
       }},
  };
  for (const Case& c : cases) {
    std::string m = build_error(c.build);
    EXPECT_NE(m.find(c.rule), std::string::npos) << "expected rule '" << c.rule << "', got: " << m;
  }
}

// The unary ALU ops are documented as tensor_scalar / tensor_scalar_reduce op0 with operand0
// None or 0 (ISA-NEW); elsewhere, reversed or with another operand they are refused.
TEST(Validate, UnaryAluOpsAreOp0WithOperandZeroOnly) {
  auto build = [](const std::function<void(Builder&, TensorRef&, TensorRef&)>& f) {
    return build_error([&](Builder& b) {
      auto t = b.sbuf("t", DType::fp32, {128, 4});
      auto r = b.sbuf("r", DType::fp32, {128, 1});
      b.memset(t(), 1.0f);
      f(b, t, r);
    });
  };
  EXPECT_EQ(build([](Builder& b, TensorRef& t, TensorRef&) {
              b.tensor_scalar(t(), t(), AluOp::rsqrt, Imm{0.0f}, false, AluOp::add, Imm{1.0f});
            }),
            "");
  EXPECT_EQ(build([](Builder& b, TensorRef& t, TensorRef& r) {
              b.tensor_scalar_reduce(t(), t(), AluOp::abs, Imm{0.0f}, AluOp::max, r());
            }),
            "");
  struct Case {
    const char* rule;
    std::function<void(Builder&, TensorRef&, TensorRef&)> build;
  };
  std::vector<Case> cases = {
      {"takes operand0 0", [](Builder& b, TensorRef& t,
                              TensorRef&) { b.tensor_scalar(t(), t(), AluOp::square, Imm{2.0f}); }},
      {"takes operand0 0",
       [](Builder& b, TensorRef& t, TensorRef& r) { b.tensor_scalar(t(), t(), AluOp::relu, r()); }},
      {"cannot be reversed",
       [](Builder& b, TensorRef& t, TensorRef&) {
         b.tensor_scalar(t(), t(), AluOp::reciprocal, Imm{0.0f}, true);
       }},
      {"cannot be op1",
       [](Builder& b, TensorRef& t, TensorRef&) {
         b.tensor_scalar(t(), t(), AluOp::add, Imm{1.0f}, false, AluOp::rsqrt, Imm{0.0f});
       }},
      {"cannot be tensor_tensor's op",
       [](Builder& b, TensorRef& t, TensorRef&) { b.tensor_tensor(t(), t(), t(), AluOp::abs); }},
      {"takes operand0 0",
       [](Builder& b, TensorRef& t, TensorRef& r) {
         b.tensor_scalar_reduce(t(), t(), AluOp::abs, Imm{1.0f}, AluOp::max, r());
       }},
      {"not a legal reduction op",
       [](Builder& b, TensorRef& t, TensorRef& r) { b.tensor_reduce(r(), t(), AluOp::rsqrt); }},
  };
  for (const Case& c : cases) {
    std::string m = build(c.build);
    EXPECT_NE(m.find(c.rule), std::string::npos) << "expected rule '" << c.rule << "', got: " << m;
  }
}

TEST(Validate, ErrorsCarryTheInstructionOrTensorId) {
  Builder b("ids");
  auto t = b.sbuf("t", DType::fp32, {128, 4});
  b.memset(t(), 0.0f);
  auto p = b.psum("p", DType::fp32, {128, 4});
  b.memset(p(), 0.0f, Engine::GpSimd);
  try {
    b.finish();
    FAIL() << "expected a BuildError";
  } catch (const BuildError& e) {
    ASSERT_TRUE(e.instruction.has_value());
    EXPECT_EQ(*e.instruction, 1u);
  }
}

}  // namespace
}  // namespace ncv
