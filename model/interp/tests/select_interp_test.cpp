// tensor_partition_reduce, select_reduce, sequence_bounds and range_select through the
// interpreter: their values against a plain restatement of the pages, the Vector accumulator
// carried between instructions (and left undefined by an idle select_reduce), and each dynamic
// and validator check provoked by a deliberately wrong program.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

constexpr float kFp32Min = -3.40282347e+38f;

RunResult run_on(const Program& p, const std::map<std::string, HostTensor>& inputs,
                 const HwConfig& hw, ExecMode mode = ExecMode::fast) {
  RunOptions o;
  o.hw = &hw;
  o.mode = mode;
  return run_program(p, {}, inputs, o);
}

// --- tensor_partition_reduce ----------------------------------------------------------------

Program partition_reduce(AluOp op, DType dt, int64_t dst_rows = 1) {
  Builder b("partition_reduce");
  auto x = b.input("x", dt, {128, 8});
  auto y = b.output("y", dt, {dst_rows, 8});
  auto t = b.sbuf("t", dt, {128, 8});
  auto d = b.sbuf("d", dt, {dst_rows, 8});
  b.dma_copy(t(), x());
  b.emit(TensorPartitionReduce{d(), t(), op});
  b.dma_copy(y(), d());
  return b.finish();
}

TEST(InterpreterSelect, PartitionReduceCombinesPartitionsInOrder) {
  const Program p = partition_reduce(AluOp::add, DType::fp32);
  auto inputs = random_inputs(p, {}, 7);
  const HostTensor& x = inputs.at("x");
  for (ExecMode mode : {ExecMode::fast, ExecMode::reference}) {
    RunResult r = run_on(p, inputs, hw_config_trn1(), mode);
    ASSERT_FALSE(r.error) << r.error->message;
    for (int64_t f = 0; f < 8; ++f) {
      float acc = 0.0f;
      for (int64_t q = 0; q < 128; ++q) {
        const volatile float next = acc + x.get(q * 8 + f);  // one rounding per partition
        acc = next;
      }
      EXPECT_EQ(r.outputs.at("y").get(f), acc) << f;
    }
  }
  RunResult m = run_on(partition_reduce(AluOp::max, DType::fp32), inputs, hw_config_trn1());
  ASSERT_FALSE(m.error) << m.error->message;
  for (int64_t f = 0; f < 8; ++f) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t q = 0; q < 128; ++q) best = std::max(best, x.get(q * 8 + f));
    EXPECT_EQ(m.outputs.at("y").get(f), best) << f;
  }
}

TEST(InterpreterSelect, PartitionReduceBitwiseOrOfIntegers) {
  const Program p = partition_reduce(AluOp::bitwise_or, DType::int32);
  HostTensor x(DType::int32, {128, 8});
  for (int64_t q = 0; q < 128; ++q) {
    for (int64_t f = 0; f < 8; ++f) x.set(q * 8 + f, static_cast<float>((q % 7 == f) << f));
  }
  RunResult r = run_on(p, {{"x", x}}, hw_config_trn1());
  ASSERT_FALSE(r.error) << r.error->message;
  for (int64_t f = 0; f < 8; ++f) {
    EXPECT_EQ(r.outputs.at("y").get(f), f < 7 ? static_cast<float>(1 << f) : 0.0f) << f;
  }
}

TEST(InterpreterSelect, PartitionReduceIntoMoreThanOnePartitionIsAShapeError) {
  const Program p = partition_reduce(AluOp::add, DType::fp32, 2);
  RunResult r = interptest::run_random(p, {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::shape_rule);
  EXPECT_NE(r.error->message.find("writes [1, 8]"), std::string::npos) << r.error->message;
}

// --- select_reduce ------------------------------------------------------------------------

// Two select_reduce over the halves of each row: the first with `first`, the second continuing
// with reduce into reduce_res; on_false is the column c.
Program select_two_halves(ReduceCmd first, bool reverse) {
  Builder b("select_reduce");
  auto x = b.input("x", DType::fp32, {128, 32});
  auto pr = b.input("pr", DType::uint8, {128, 32});
  auto c = b.input("c", DType::fp32, {128, 1});
  auto y = b.output("y", DType::bf16, {128, 32});
  auto m = b.output("m", DType::fp32, {128, 1});
  auto t = b.sbuf("t", DType::fp32, {128, 32});
  auto pt = b.sbuf("pt", DType::uint8, {128, 32});
  auto ct = b.sbuf("ct", DType::fp32, {128, 1});
  auto d = b.sbuf("d", DType::bf16, {128, 32});
  auto rr = b.sbuf("rr", DType::fp32, {128, 1});
  b.dma_copy(t(), x());
  b.dma_copy(pt(), pr());
  b.dma_copy(ct(), c());
  b.emit(SelectReduce{d({all(), ds(0, 16)}), pt({all(), ds(0, 16)}), t({all(), ds(0, 16)}),
                      Operand{ct()}, first, std::nullopt, reverse});
  b.emit(SelectReduce{d({all(), ds(16, 16)}), pt({all(), ds(16, 16)}), t({all(), ds(16, 16)}),
                      Operand{ct()}, ReduceCmd::reduce, rr(), reverse});
  b.dma_copy(y(), d());
  b.dma_copy(m(), rr());
  return b.finish();
}

std::map<std::string, HostTensor> select_inputs(const Program& p) {
  auto inputs = random_inputs(p, {}, 11);
  HostTensor& pr = inputs.at("pr");
  for (int64_t k = 0; k < pr.num_elements(); ++k) pr.set(k, static_cast<float>((k * 7) % 3 == 0));
  return inputs;
}

TEST(InterpreterSelect, SelectReduceChoosesAndCarriesTheMaxAcrossInstructions) {
  for (bool reverse : {false, true}) {
    const Program p = select_two_halves(ReduceCmd::reset_reduce, reverse);
    const auto inputs = select_inputs(p);
    RunResult r = run_on(p, inputs, hw_config_trn1());
    ASSERT_FALSE(r.error) << r.error->message;
    const HostTensor &x = inputs.at("x"), &pr = inputs.at("pr"), &c = inputs.at("c");
    HostTensor want(DType::bf16, {128, 32});
    for (int64_t row = 0; row < 128; ++row) {
      float best = -std::numeric_limits<float>::infinity();
      for (int64_t f = 0; f < 32; ++f) {
        const int64_t k = row * 32 + f;
        const float v = ((pr.get(k) != 0.0f) != reverse) ? x.get(k) : c.get(row);
        best = std::max(best, v);  // over the fp32 values, before the bf16 conversion
        want.set(k, v);
        ASSERT_EQ(r.outputs.at("y").bits(k), want.bits(k)) << row << "," << f;
      }
      EXPECT_EQ(r.outputs.at("m").get(row), best) << row;
    }
  }
}

TEST(InterpreterSelect, ReduceAfterAnIdleSelectReduceIsUndefined) {
  const Program p = select_two_halves(ReduceCmd::idle, false);
  RunResult r = run_on(p, select_inputs(p), hw_config_trn1());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::undefined_result);
  EXPECT_NE(r.error->message.find("left undefined"), std::string::npos) << r.error->message;
}

// --- sequence_bounds ------------------------------------------------------------------------

Program bounds(int64_t n, int64_t rows = 1) {
  Builder b("sequence_bounds");
  auto x = b.input("x", DType::fp32, {rows, n});
  auto y = b.output("y", DType::fp32, {1, 2, n});
  auto t = b.sbuf("t", DType::fp32, {rows, n});
  auto d = b.sbuf("d", DType::fp32, {1, 2, n});
  b.dma_copy(t(), x());
  b.emit(SequenceBounds{d(), t()});
  b.dma_copy(y(), d());
  return b.finish();
}

HostTensor ids(const std::vector<float>& v) {
  HostTensor h(DType::fp32, {1, static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) h.set(static_cast<int64_t>(k), v[k]);
  return h;
}

TEST(InterpreterSelect, SequenceBoundsOfThePagesExample) {
  // The page's example: ids [0, 1, 1, 2, 2, 2, 0, 3, 3].
  RunResult r = run_on(bounds(9), {{"x", ids({0, 1, 1, 2, 2, 2, 0, 3, 3})}}, hw_config_trn1());
  ASSERT_FALSE(r.error) << r.error->message;
  const std::vector<float> want = {9, 1, 1, 3, 3, 3, 9, 7, 7, -1, 3, 3, 6, 6, 6, -1, 9, 9};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(r.outputs.at("y").get(static_cast<int64_t>(k)), want[k]) << k;
  }
}

TEST(InterpreterSelect, SequenceBoundsRefusesIdsThatAreNotNonNegativeIntegers) {
  for (float bad : {-1.0f, 1.5f, std::numeric_limits<float>::quiet_NaN()}) {
    RunResult r = run_on(bounds(4), {{"x", ids({1, 1, bad, 2})}}, hw_config_trn1());
    ASSERT_TRUE(r.error) << bad;
    EXPECT_EQ(r.error->kind, CheckKind::undefined_result);
    EXPECT_NE(r.error->message.find("segment id 2"), std::string::npos) << r.error->message;
  }
  RunResult r = interptest::run_random(bounds(4, 2), {});
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("one partition"), std::string::npos) << r.error->message;
}

// --- range_select ---------------------------------------------------------------------------

Program range(ReduceCmd first, int64_t start, DType dt = DType::fp32) {
  Builder b("range_select");
  auto x = b.input("x", DType::fp32, {128, 64});
  auto lo = b.input("lo", DType::fp32, {128, 1});
  auto hi = b.input("hi", DType::fp32, {128, 1});
  auto y = b.output("y", dt, {128, 64});
  auto m = b.output("m", DType::fp32, {128, 1});
  auto t = b.sbuf("t", DType::fp32, {128, 64});
  auto l = b.sbuf("l", DType::fp32, {128, 1});
  auto h = b.sbuf("h", DType::fp32, {128, 1});
  auto d = b.sbuf("d", dt, {128, 64});
  auto rr = b.sbuf("rr", DType::fp32, {128, 1});
  b.dma_copy(t(), x());
  b.dma_copy(l(), lo());
  b.dma_copy(h(), hi());
  // Columns [0, 32) with indices start.., then [32, 64) continuing the accumulator.
  b.emit(RangeSelect{d({all(), ds(0, 32)}), t({all(), ds(0, 32)}), l(), h(), CmpOp::ge, CmpOp::lt,
                     Expr(start), Imm{kFp32Min}, first, std::nullopt});
  b.emit(RangeSelect{d({all(), ds(32, 32)}), t({all(), ds(32, 32)}), l(), h(), CmpOp::ge, CmpOp::lt,
                     Expr(start + 32), Imm{kFp32Min}, ReduceCmd::reduce, rr()});
  b.dma_copy(y(), d());
  b.dma_copy(m(), rr());
  return b.finish();
}

TEST(InterpreterSelect, RangeSelectKeepsTheIndexRangeAndItsMax) {
  const Program p = range(ReduceCmd::reset_reduce, 5, DType::bf16);
  auto inputs = random_inputs(p, {}, 3);
  for (int64_t row = 0; row < 128; ++row) {
    inputs.at("lo").set(row, static_cast<float>(row % 40));
    inputs.at("hi").set(row, static_cast<float>(row % 40 + row % 5));  // empty when row % 5 == 0
  }
  RunResult r = run_on(p, inputs, hw_config_trn2());
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& x = inputs.at("x");
  for (int64_t row = 0; row < 128; ++row) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t f = 0; f < 64; ++f) {
      const auto i = static_cast<float>(5 + f);
      const bool in = i >= inputs.at("lo").get(row) && i < inputs.at("hi").get(row);
      const float v = in ? x.get(row * 64 + f) : kFp32Min;
      best = std::max(best, v);
      HostTensor one(DType::bf16, {1});
      one.set(0, v);  // fp32's lowest value rounds to bf16 -inf, as the page says
      ASSERT_EQ(r.outputs.at("y").bits(row * 64 + f), one.bits(0)) << row << "," << f;
    }
    // The accumulator holds the fp32 value: a row with nothing selected keeps fp32's lowest.
    EXPECT_EQ(r.outputs.at("m").get(row), best) << row;
  }
}

TEST(InterpreterSelect, RangeSelectChecksItsGenerationAndIndexRange) {
  const Program p = range(ReduceCmd::reset_reduce, 0);
  const auto inputs = random_inputs(p, {}, 3);
  RunResult v2 = run_on(p, inputs, hw_config_trn1());
  ASSERT_TRUE(v2.error);
  EXPECT_EQ(v2.error->kind, CheckKind::engine_rule);
  EXPECT_NE(v2.error->message.find("NeuronCore-v3"), std::string::npos) << v2.error->message;
  RunResult far =
      run_on(range(ReduceCmd::reset_reduce, (int64_t{1} << 24) - 40), inputs, hw_config_trn2());
  ASSERT_TRUE(far.error);
  EXPECT_EQ(far.error->kind, CheckKind::undefined_result);
  EXPECT_NE(far.error->message.find("2^24"), std::string::npos) << far.error->message;
  RunResult near =
      run_on(range(ReduceCmd::reset_reduce, (int64_t{1} << 24) - 64), inputs, hw_config_trn2());
  EXPECT_FALSE(near.error) << near.error->message;
}

// --- the validator ----------------------------------------------------------------------------

// Builds a one-instruction program around `ins(a, p, u)` (a: fp32 SBUF [128, 16], p: fp32 PSUM
// [128, 16], u: uint8 SBUF [128, 16]; c: fp32 SBUF [128, 1]) and returns the validator's message
// ("" if it passed).
std::string build_error(
    const std::function<Instruction(TensorRef&, TensorRef&, TensorRef&, TensorRef&)>& ins) {
  Builder b("rules");
  auto y = b.output("y", DType::fp32, {128, 16});
  auto a = b.sbuf("a", DType::fp32, {128, 16});
  auto p = b.psum("p", DType::fp32, {128, 16});
  auto u = b.sbuf("u", DType::uint8, {128, 16});
  auto c = b.sbuf("c", DType::fp32, {128, 1});
  b.memset(a(), 1.0f);
  b.memset(p(), 1.0f);
  b.memset(u(), 1.0f);
  b.memset(c(), 1.0f);
  try {
    b.emit(ins(a, p, u, c));
    b.dma_copy(y(), a());
    b.finish();
  } catch (const BuildError& e) {
    return e.message;
  }
  return "";
}

TEST(InterpreterSelect, TheValidatorHoldsThePagesRules) {
  using R = TensorRef;
  auto has = [](const std::string& msg, const char* what) {
    return msg.find(what) != std::string::npos;
  };
  EXPECT_TRUE(has(build_error([](R& a, R&, R&, R&) -> Instruction {
                    return TensorPartitionReduce{a({ds(0, 1), all()}), a(), AluOp::multiply};
                  }),
                  "add, max, bitwise_or or bitwise_and"));
  EXPECT_TRUE(has(build_error([](R& a, R& p, R&, R&) -> Instruction {
                    return TensorPartitionReduce{a({ds(0, 1), all()}), p(), AluOp::add};
                  }),
                  "GpSimd engine cannot access PSUM"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R&, R&) -> Instruction {
                    return SelectReduce{a(), a(), a(), Imm{0.0f}};
                  }),
                  "8- or 16-bit integer"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R& u, R& c) -> Instruction {
                    return SelectReduce{a(), u(), a(), Imm{0.0f}, ReduceCmd::idle, c()};
                  }),
                  "only when it reduces"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R& u, R&) -> Instruction {
                    return SelectReduce{a(), u(), a(), Imm{0.0f}, ReduceCmd::reset};
                  }),
                  "idle, reset_reduce or reduce"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R& u, R&) -> Instruction {
                    return SequenceBounds{a(), u()};
                  }),
                  "fp32 or int32"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R&, R& c) -> Instruction {
                    return RangeSelect{a(), a(), c(), c(), CmpOp::ne, CmpOp::lt, Expr(0)};
                  }),
                  "eq, lt, le, gt or ge"));
  EXPECT_TRUE(has(build_error([](R& a, R&, R&, R& c) -> Instruction {
                    return RangeSelect{a(),       a(),       c(),     c(),
                                       CmpOp::ge, CmpOp::lt, Expr(0), Imm{0.0f}};
                  }),
                  "lowest value"));
  // The legal forms pass.
  EXPECT_EQ(build_error([](R& a, R& p, R& u, R& c) -> Instruction {
              return SelectReduce{p(), u(), a(), c(), ReduceCmd::reset_reduce, c(), true};
            }),
            "");
  EXPECT_EQ(build_error([](R& a, R&, R&, R& c) -> Instruction {
              return RangeSelect{a(), a(), c(), c(), CmpOp::ge, CmpOp::lt, Expr(0)};
            }),
            "");
}

}  // namespace
}  // namespace ncv
