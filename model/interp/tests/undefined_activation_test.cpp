// Activation inputs outside the function's documented range (ISA-NEW activation function table:
// "the hardware output is invalid" there): harmless when nothing the kernel produces depends on
// the value the hardware writes (a reciprocal over padding rows never stored), an undefined result
// (unknown, never a FAIL) when something does; strict runs keep the default NaN and note nothing
// (RunOptions::strict_reads, RunResult::undefined_activation, interpreter.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/nkir/parse.h"
#include "model/semantics/semantics.h"

namespace ncv {
namespace {

struct Padded {
  std::string func = "sin";
  std::string bias = "0";
  std::string pad = "4";  // the value of t's rows 64..127
  int64_t stored = 64;    // rows of u the kernel stores
  bool wide = false;      // t has 4 more columns no instruction writes (u's are never stored)
};

// t's first 64 rows hold x, the others `pad`; u = func(t + bias) over all 128 rows (line 42); y
// gets u's first `stored` rows.
Program padded(const Padded& k) {
  const std::string cols = k.wide ? "8" : "4";
  const std::string text =
      "kernel act_padding\n"
      "source \"act.py\"\n"
      "input x : hbm fp32 [64, 4]\n"
      "output y : hbm fp32 [" +
      std::to_string(k.stored) +
      ", 4]\n"
      "buffer t : sbuf fp32 [128, " +
      cols +
      "]\n"
      "buffer u : sbuf fp32 [128, " +
      cols +
      "]\n"
      "memset t[:, 0:+4], value=" +
      k.pad +
      "\n"
      "dma_copy t[0:+64, 0:+4], x[:, :]\n"
      "activation u[:, :], t[:, :], func=" +
      k.func + ", bias=" + k.bias +
      " @line 42\n"
      "dma_copy y[:, :], u[0:+" +
      std::to_string(k.stored) + ", 0:+4], queue=1 @line 43\n";
  return parse_program(text, "act_padding.nkir");
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// y's row r, column c, and what act_apply gives for x's element there.
void expect_applied(const RunResult& r, const std::map<std::string, HostTensor>& in, ActFunc f,
                    float bias) {
  const HostTensor& y = r.outputs.at("y");
  const HostTensor& x = in.at("x");
  for (int64_t i = 0; i < std::min<int64_t>(y.num_elements(), x.num_elements()); ++i) {
    float xv, yv;
    const uint32_t xb = x.bits(i), yb = y.bits(i);
    std::memcpy(&xv, &xb, 4);
    std::memcpy(&yv, &yb, 4);
    const float want = act_apply(f, xv + bias);
    uint32_t wb;
    std::memcpy(&wb, &want, 4);
    ASSERT_EQ(yb, wb) << "element " << i;
  }
}

TEST(UndefinedActivation, OutsideTheRangeOnlyInRowsNeverStoredRunsWithANote) {
  for (const Padded& k : {Padded{}, Padded{.func = "reciprocal", .bias = "3", .pad = "-3"}}) {
    const Program p = padded(k);
    const auto in = random_inputs(p, {}, 1);
    const RunResult r = run_program(p, {}, in);
    ASSERT_FALSE(r.error) << r.error->message;
    ASSERT_TRUE(r.undefined_activation) << k.func;
    const std::string& m = r.undefined_activation->message;
    EXPECT_EQ(r.undefined_activation->kind, CheckKind::undefined_result);
    EXPECT_TRUE(has(m, "activation function " + k.func + " got the input")) << m;
    EXPECT_TRUE(has(m, k.func == "sin" ? "input 4 " : "input 0 ")) << m;
    EXPECT_TRUE(has(m, "(act.py:42)")) << m;
    EXPECT_TRUE(has(m, "256 input(s) of this instance are outside it; 256 in the run")) << m;
    EXPECT_FALSE(r.unwritten_read);
    expect_applied(r, in, k.func == "sin" ? ActFunc::sin : ActFunc::reciprocal,
                   k.func == "sin" ? 0.0f : 3.0f);
  }
}

TEST(UndefinedActivation, OutsideTheRangeReachingAnOutputIsAnUndefinedResult) {
  for (const Padded& k : {Padded{.stored = 128},
                          Padded{.func = "reciprocal", .bias = "3", .pad = "-3", .stored = 128}}) {
    const RunResult r = interptest::run_random(padded(k), {});
    ASSERT_TRUE(r.error) << k.func;
    const std::string& m = r.error->message;
    EXPECT_EQ(r.error->kind, CheckKind::undefined_result) << m;
    EXPECT_TRUE(has(m, "activation function " + k.func)) << m;
    EXPECT_TRUE(has(m, "(act.py:42)")) << m;
    EXPECT_TRUE(has(m,
                    "output 'y' depends on them: 256 element(s) change with 2^100 as the "
                    "function's output"))
        << m;
    EXPECT_FALSE(r.undefined_activation);
    EXPECT_TRUE(r.outputs.empty());
  }
}

TEST(UndefinedActivation, InsideTheRangeNothingIsNoted) {
  const Program p = padded({.pad = "1", .stored = 128});
  const auto in = random_inputs(p, {}, 1);
  const RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_FALSE(r.undefined_activation);
  expect_applied(r, in, ActFunc::sin, 0.0f);
  EXPECT_EQ(r.outputs.at("y").bits(127 * 4), std::bit_cast<uint32_t>(std::sin(1.0f)));
}

// Strict runs (prove's replays, fuzz_solver; equiv's observed runs too) see run A's values: the
// default NaN, no failure, no note.
TEST(UndefinedActivation, StrictRunsKeepTheDefaultNaN) {
  RunOptions strict;
  strict.strict_reads = true;
  const RunResult r = interptest::run_random(padded({.stored = 128}), {}, 1, strict);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_FALSE(r.undefined_activation);
  EXPECT_EQ(r.outputs.at("y").bits(127 * 4), 0x7fc00000u);
}

// With a read of bytes no instruction wrote as well (t's columns 4..7, whose u columns are never
// stored), each kind is rerun on its own: both are notes when harmless; the activation still fails
// the run when its value reaches y, and the harmless read does not.
TEST(UndefinedActivation, ComposesWithUnwrittenReads) {
  const RunResult both = interptest::run_random(padded({.wide = true}), {});
  ASSERT_FALSE(both.error) << both.error->message;
  EXPECT_TRUE(both.unwritten_read);
  EXPECT_TRUE(both.undefined_activation);
  const RunResult reaches = interptest::run_random(padded({.stored = 128, .wide = true}), {});
  ASSERT_TRUE(reaches.error);
  EXPECT_EQ(reaches.error->kind, CheckKind::undefined_result) << reaches.error->message;
  EXPECT_TRUE(has(reaches.error->message, "output 'y' depends on them")) << reaches.error->message;
}

}  // namespace
}  // namespace ncv
