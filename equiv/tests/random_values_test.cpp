// A program that draws random values (nl.rand, nisa.dropout) has outputs the model makes up with
// its own generator: `check` against the oracle and `equiv` of such a program are unknown, with
// the instruction named, never PASS/FAIL or proved/refuted.
#include <gtest/gtest.h>

#include <string>

#include "check/check.h"
#include "equiv/equiv.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/ir/printer.h"
#include "model/ir/random_draws.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {
namespace {

// sd_attention with one extra random draw into a tile of its own (which nothing reads: the draw
// alone makes the outputs' meaning depend on no value of it, yet the rule is about the program).
Program with_random_draw(const Program& p) {
  std::string text = print_program(p);
  text += "buffer noise : sbuf fp32 [128, 64]\nrand noise[0:+128, 0:+64]\n";
  return parse_program(text, "random.nkir");
}

TEST(RandomValues, CheckIsUnknownWithTheReason) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const kernels::LabelledProgram first = kernels::option_programs(v).front();
  const Program& plain = first.program;
  EXPECT_FALSE(random_values_reason(plain).has_value());
  const Program noisy = with_random_draw(plain);
  const std::optional<std::string> why = random_values_reason(noisy);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("`rand`"), std::string::npos) << *why;
  const ParamValues params = checked_shapes(noisy, {}).front();
  try {
    kernels::check_kernel(v, noisy, first.options, params);
    ADD_FAILURE() << "check gave a verdict on random values";
  } catch (const kernels::UnknownVerdict& e) {
    EXPECT_NE(std::string(e.what()).find("draws random values"), std::string::npos) << e.what();
  }
  // The same kernel without the draw is judged as before.
  EXPECT_TRUE(kernels::check_kernel(v, plain, first.options, params).pass);
}

TEST(RandomValues, EquivIsUnknownAtEveryLevel) {
  const kernels::Variant* v = kernels::find_variant("sd_attention");
  EquivRequest req;
  req.original = {"sd_attention", v, std::nullopt};
  const kernels::LabelledProgram first = kernels::option_programs(*v).front();
  req.rewrite = {"random.nkir", nullptr, with_random_draw(first.program)};
  req.options = first.options;  // the option set the rewrite was built at
  req.cases = 1;
  const EquivResult r = run_equiv(req);
  ASSERT_FALSE(r.outcomes.empty());
  for (const OptionOutcome& o : r.outcomes) {
    EXPECT_EQ(o.bit_exact, Verdict::unknown);
    EXPECT_EQ(o.real, Verdict::unknown);
    EXPECT_EQ(o.numeric, Verdict::unknown);
    EXPECT_NE(o.bit_detail.find("the rewrite: instruction #"), std::string::npos) << o.bit_detail;
  }
  EXPECT_EQ(r.verdict, "unknown");
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace ncv::equiv
