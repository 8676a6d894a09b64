// A case whose run reaches a result the documentation leaves undefined (CheckKind::
// undefined_result) is unknown, never FAIL or PASS, through check, its sweep and their JSON; a
// kernel with a real bug still fails (check/README.md "Undefined results").
//
// The kernels are naive_attention with instructions put in front. First three int32 ones: an iota
// writing `start` + the free index into a [128, 4] int32 tile and a GpSimd tensor_tensor adding the
// tile to itself. From start 2^30 the sum overflows int32, which no NKI page defines
// (model/semantics/README.md); from start 0 it fits and the kernel is naive_attention's. Then a
// reciprocal of zero (with_reciprocal_of_zero), whose value the documentation does not give.
#include <gtest/gtest.h>

#include <string>

#include "check/check.h"
#include "check/check_sweep.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

const Variant& naive() {
  return *find_variant("naive_attention");
}

// naive_attention (options `o`) with the int32 doubling of iota values from `start` in front; the
// scale of q changed from 0.125 to `scale` (a real bug unless 0.125).
Program with_int32_add(const Options& o, int64_t start, const std::string& scale = "0.125") {
  std::string text = print_program(naive().build(o));
  const std::string before = "for i1 in";
  const size_t at = text.find(before);
  EXPECT_NE(at, std::string::npos);
  text.insert(at,
              "buffer ov_a : sbuf int32 [128, 4]\n"
              "buffer ov_b : sbuf int32 [128, 4]\n"
              "iota ov_a[:, :], offset=" +
                  std::to_string(start) +
                  ", channel_multiplier=0, steps=[1]\n"
                  "tensor_tensor ov_b[:, :], ov_a[:, :], ov_a[:, :], op=add, engine=gpsimd\n");
  const std::string scaled = "op0=multiply, operand0=0.125";
  const size_t s = text.find(scaled);
  EXPECT_NE(s, std::string::npos);
  text.replace(s, scaled.size(), "op0=multiply, operand0=" + scale);
  return parse_program(text, "with_int32_add.nkir");
}

CheckOptions two_cases() {
  CheckOptions co;
  co.cases = 2;
  co.run.hw = find_hw_config(default_generation(naive()));
  return co;
}

const ParamValues kShape{{"seqlen", 128}, {"d_head", 16}};

TEST(CheckUnknown, AnOverflowingInt32AddIsUnknownNotFail) {
  const Options o = naive().resolve({});
  const CheckResult r = check_kernel(naive(), with_int32_add(o, 1 << 30), o, kShape, two_cases());
  EXPECT_FALSE(r.pass) << r.summary();
  ASSERT_TRUE(r.unknown) << r.summary();
  EXPECT_STREQ(r.verdict(), "UNKNOWN") << r.summary();
  EXPECT_NE(r.unknown->find("does not fit the int32 destination"), std::string::npos) << *r.unknown;
  ASSERT_EQ(r.cases.size(), 2u);
  for (const CaseResult& c : r.cases) {
    ASSERT_TRUE(c.run_error);
    EXPECT_EQ(c.run_error->kind, CheckKind::undefined_result);
    EXPECT_TRUE(c.unknown);
    EXPECT_FALSE(c.failed());
  }
  EXPECT_NE(r.summary().find("UNKNOWN"), std::string::npos) << r.summary();
  EXPECT_EQ(r.summary().find("FAIL"), std::string::npos) << r.summary();
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j.at("verdict"), "unknown");
  EXPECT_EQ(j.at("cases").at(0).at("verdict"), "unknown");
  EXPECT_TRUE(j.at("cases").at(0).contains("undefined_result"));
  EXPECT_FALSE(j.at("cases").at(0).contains("model_error"));
}

// The same instructions with a sum that fits: naive_attention's verdict (the unknown above is the
// overflow's); with q scaled wrongly: FAIL, the unknown does not cover a real bug.
TEST(CheckUnknown, WithoutTheOverflowItPassesAndARealBugFails) {
  const Options o = naive().resolve({});
  const CheckResult fits = check_kernel(naive(), with_int32_add(o, 0), o, kShape, two_cases());
  EXPECT_TRUE(fits.pass) << fits.summary();
  const CheckResult bug =
      check_kernel(naive(), with_int32_add(o, 0, "0.25"), o, kShape, two_cases());
  EXPECT_STREQ(bug.verdict(), "FAIL") << bug.summary();
  EXPECT_FALSE(bug.unknown);
  EXPECT_TRUE(bug.cases.at(0).failed());
}

// The default sweep (check_sweep) says UNKNOWN too, in its summary and JSON, and lists the
// unknown case with its reason.
TEST(CheckUnknown, TheSweepIsUnknown) {
  const Options o = naive().resolve({});
  SweepOptions so;
  so.budget_s = 1;
  so.cases_per_shape = 1;
  so.check = two_cases();
  const SweepResult r = check_sweep(
      naive(), {o}, [&](const Options& x) { return with_int32_add(x, 1 << 30); },
      {{"seqlen", 128}, {"d_head", 16}}, so);
  EXPECT_STREQ(r.verdict(), "UNKNOWN") << r.summary();
  ASSERT_TRUE(r.unknown) << r.summary();
  EXPECT_EQ(r.to_json().at("verdict"), "unknown");
  EXPECT_NE(r.summary().find("undefined result, unknown"), std::string::npos) << r.summary();
  ASSERT_NE(r.worst_case(), nullptr);
  EXPECT_TRUE(r.worst_case()->unknown);
}

// naive_attention with a reciprocal of zero in front: a [128, 1] column memset to 0, its
// reciprocal (0 is outside the activation's documented range 2^-42 <= |x| <= 2^42, where the
// hardware's output is not documented) times 0. With `reach` the column is added to q after its
// scaling, so the output depends on the value the hardware gives there (finite: q unchanged;
// inf or NaN: NaN everywhere); without it nothing reads the column. `scale` as with_int32_add's.
Program with_reciprocal_of_zero(const Options& o, bool reach, const std::string& scale = "0.125") {
  std::string text = print_program(naive().build(o));
  const size_t at = text.find("for i1 in");
  EXPECT_NE(at, std::string::npos);
  text.insert(at,
              "buffer ar_zeros : sbuf fp32 [128, 1]\n"
              "buffer ar_col : sbuf fp32 [128, 1]\n"
              "memset ar_zeros[:, :], value=0\n"
              "activation ar_col[:, :], ar_zeros[:, :], func=reciprocal\n"
              "tensor_scalar ar_col[:, :], ar_col[:, :], op0=multiply, operand0=0\n");
  const std::string scaled = "op0=multiply, operand0=0.125";
  const size_t s = text.find(scaled);
  EXPECT_NE(s, std::string::npos);
  text.replace(s, scaled.size(),
               "op0=multiply, operand0=" + scale +
                   (reach ? ", op1=add, operand1=ar_col[0:+d_head, :]" : ""));
  return parse_program(text, "with_reciprocal_of_zero.nkir");
}

// The model wrote NaN for the reciprocal of 0, and a kernel whose output was NaN only because of
// it FAILed: the hardware writes some value there, which the documentation does not give. Now
// the run reruns with other values, and an output that depends on them makes the case unknown.
TEST(CheckUnknown, AnOutputDependingOnAnActivationOutsideItsRangeIsUnknownNotFail) {
  const Options o = naive().resolve({});
  const CheckResult r =
      check_kernel(naive(), with_reciprocal_of_zero(o, true), o, kShape, two_cases());
  EXPECT_STREQ(r.verdict(), "UNKNOWN") << r.summary();
  ASSERT_TRUE(r.unknown) << r.summary();
  EXPECT_NE(r.unknown->find("activation function reciprocal got the input 0"), std::string::npos)
      << *r.unknown;
  EXPECT_NE(r.unknown->find("output 'out' depends on them"), std::string::npos) << *r.unknown;
  for (const CaseResult& c : r.cases) {
    ASSERT_TRUE(c.run_error);
    EXPECT_EQ(c.run_error->kind, CheckKind::undefined_result);
    EXPECT_FALSE(c.failed());
  }
  EXPECT_EQ(r.to_json().at("verdict"), "unknown");
}

// A reciprocal of zero nothing reads is harmless: naive_attention's PASS; with q scaled wrongly
// as well, FAIL (the harmless activation hides no bug).
TEST(CheckUnknown, AnActivationOutsideItsRangeNothingReadsPassesAndARealBugFails) {
  const Options o = naive().resolve({});
  const CheckResult ok =
      check_kernel(naive(), with_reciprocal_of_zero(o, false), o, kShape, two_cases());
  EXPECT_TRUE(ok.pass) << ok.summary();
  EXPECT_FALSE(ok.unknown) << ok.summary();
  const CheckResult bug =
      check_kernel(naive(), with_reciprocal_of_zero(o, false, "0.25"), o, kShape, two_cases());
  EXPECT_STREQ(bug.verdict(), "FAIL") << bug.summary();
  EXPECT_FALSE(bug.unknown);
}

}  // namespace
}  // namespace ncv::kernels
