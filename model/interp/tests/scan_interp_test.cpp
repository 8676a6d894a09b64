// The scans through the interpreter: the Vector-engine accumulator registers carried from one
// tensor_scalar_cumulative to the next, the operand-shape checks, and the validator's rules from
// the instructions' pages (each provoked by a deliberately wrong program).
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

RunResult run(const Program& p, uint64_t seed = 1) {
  return interptest::run_random(p, {}, seed, {});
}

// y = running sum of x * 2 over both halves of each row: the second instruction's reduce
// continues from the register the first one left in each partition.
Program two_part_cumulative(ReduceCmd second) {
  Builder b("two_part_cumulative");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto y = b.output("y", DType::fp32, {128, 64});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  auto d = b.sbuf("d", DType::fp32, {128, 64});
  b.dma_copy(t(), x());
  b.emit(TensorScalarCumulative{d({all(), ds(0, 32)}), t({all(), ds(0, 32)}), AluOp::multiply,
                                Imm{2.0f}, AluOp::add, ReduceCmd::reset_reduce, std::nullopt});
  std::optional<Operand> imm1;
  if (second == ReduceCmd::load_reduce) imm1 = Imm{0.0f};
  b.emit(TensorScalarCumulative{d({all(), ds(32, 32)}), t({all(), ds(32, 32)}), AluOp::multiply,
                                Imm{2.0f}, AluOp::add, second, imm1});
  b.dma_copy(y(), d());
  return b.finish();
}

TEST(InterpreterScan, ReduceCarriesTheVectorRegisterAcrossInstructions) {
  const Program p = two_part_cumulative(ReduceCmd::reduce);
  auto inputs = random_inputs(p, {}, 5);
  RunResult r = run_program(p, {}, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& x = inputs.at("x");
  const HostTensor& y = r.outputs.at("y");
  for (int64_t row = 0; row < 128; ++row) {
    float acc = 0.0f;
    for (int64_t c = 0; c < 64; ++c) {
      const volatile float product = x.get(row * 64 + c) * 2.0f;  // one rounding per step
      acc = product + acc;
      ASSERT_EQ(y.get(row * 64 + c), acc) << row << "," << c;
    }
  }
  // load_reduce of 0 restarts the sum at the second half instead.
  RunResult restarted = run_program(two_part_cumulative(ReduceCmd::load_reduce), {}, inputs);
  ASSERT_FALSE(restarted.error) << restarted.error->message;
  EXPECT_EQ(restarted.outputs.at("y").get(32), x.get(32) * 2.0f);
  EXPECT_NE(y.get(32), x.get(32) * 2.0f);
}

TEST(InterpreterScan, AnInitialColumnOverOtherPartitionsIsAnOperandShapeError) {
  Builder b("scan_column");
  auto x = b.input("x", DType::fp32, {128, 16});
  auto y = b.output("y", DType::fp32, {128, 16});
  auto t = b.sbuf("t", DType::fp32, {128, 16});
  auto d = b.sbuf("d", DType::fp32, {128, 16});
  b.dma_copy(t(), x());
  b.emit(TensorTensorScan{d(), t(), t(), Operand{t({all(), ds(0, 2)})}, AluOp::multiply, AluOp::add,
                          false, false});
  b.dma_copy(y(), d());
  RunResult r = run(b.finish());
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("per-partition column"), std::string::npos) << r.error->message;
}

TEST(InterpreterScan, BnStatsAndBnAggrCheckTheirSizes) {
  for (int64_t width : {512, 513}) {
    Builder b("stats");
    auto x = b.input("x", DType::fp32, {128, width});
    auto y = b.output("y", DType::fp32, {128, 2});
    auto t = b.sbuf("t", DType::fp32, {128, width});
    auto st = b.sbuf("st", DType::fp32, {128, 6});
    auto mv = b.sbuf("mv", DType::fp32, {128, 2});
    b.dma_copy(t(), x());
    b.emit(BnStats{st(), t()});
    b.emit(BnAggr{mv(), st()});
    b.dma_copy(y(), mv());
    RunResult r = run(b.finish());
    if (width == 512) {
      EXPECT_FALSE(r.error) << r.error->message;
    } else {
      ASSERT_TRUE(r.error);
      EXPECT_NE(r.error->message.find("at most 512"), std::string::npos) << r.error->message;
    }
  }
  Builder b("aggr");
  auto y = b.output("y", DType::fp32, {128, 2});
  auto st = b.sbuf("st", DType::fp32, {128, 8});
  auto mv = b.sbuf("mv", DType::fp32, {128, 2});
  b.memset(st(), 1.0f);
  b.emit(BnAggr{mv(), st()});
  b.dma_copy(y(), mv());
  RunResult r = run(b.finish());
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("not a multiple of 3"), std::string::npos) << r.error->message;
}

// Builds a one-instruction program around `ins(a, p, i)` (a: fp32 SBUF [128, 16], p: fp32 PSUM
// [128, 16], i: int32 SBUF [128, 16]) and returns the validator's message ("" if it passed).
std::string build_error(const std::function<Instruction(TensorRef&, TensorRef&, TensorRef&)>& ins) {
  Builder b("rules");
  auto y = b.output("y", DType::fp32, {128, 16});
  auto a = b.sbuf("a", DType::fp32, {128, 16});
  auto p = b.psum("p", DType::fp32, {128, 16});
  auto i = b.sbuf("i", DType::int32, {128, 16});
  b.memset(a(), 1.0f);
  b.memset(p(), 1.0f);
  b.memset(i(), 1.0f);
  try {
    b.emit(ins(a, p, i));
    b.dma_copy(y(), a());
    b.finish();
  } catch (const BuildError& e) {
    return e.message;
  }
  return "";
}

TEST(InterpreterScan, TheValidatorHoldsThePagesRules) {
  EXPECT_NE(build_error([](TensorRef& a, TensorRef& p, TensorRef&) -> Instruction {
              return TensorTensorScan{a(), p(), p(), Imm{0.0f}, AluOp::multiply, AluOp::add};
            }).find("cannot both be in PSUM"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              return TensorTensorScan{a(), a(), a(), Imm{0.0f}, AluOp::bitwise_and, AluOp::add};
            }).find("arithmetic"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef& i) -> Instruction {
              return TensorScalarCumulative{i(), a(), AluOp::add, Imm{0.0f}, AluOp::add};
            }).find("int32/uint32"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              return TensorScalarCumulative{a(), a(), AluOp::add, Imm{0.0f}, AluOp::divide};
            }).find("op1 must be"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              return TensorScalarCumulative{
                  a(), a(), AluOp::add, Imm{0.0f}, AluOp::add, ReduceCmd::reduce, Imm{1.0f}};
            }).find("exactly when reduce_cmd is load_reduce"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              return TensorScalarCumulative{a(),       a(),        AluOp::add,
                                            Imm{0.0f}, AluOp::add, ReduceCmd::idle};
            }).find("reset_reduce, reduce or load_reduce"),
            std::string::npos);
  EXPECT_NE(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              Activation act{a(), a()};
              act.reduce_cmd = ReduceCmd::load_reduce;
              return act;
            }).find("activation's accumulator"),
            std::string::npos);
  // The legal forms pass.
  EXPECT_EQ(build_error([](TensorRef& a, TensorRef& p, TensorRef&) -> Instruction {
              return TensorTensorScan{a(), a(), p(), Imm{0.0f}, AluOp::multiply, AluOp::add};
            }),
            "");
  EXPECT_EQ(build_error([](TensorRef& a, TensorRef&, TensorRef&) -> Instruction {
              return TensorScalarCumulative{
                  a(), a(), AluOp::add, Imm{0.0f}, AluOp::min, ReduceCmd::load_reduce, Imm{1.0f}};
            }),
            "");
}

}  // namespace
}  // namespace ncv
