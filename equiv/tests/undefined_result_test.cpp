// A run that stops on a result the documentation leaves undefined (CheckKind::undefined_result:
// here an int32 add on GpSimd that overflows, model/semantics/README.md) says nothing about what
// the rewrite computes on hardware: equiv leaves every level unknown with the message, never
// refuted; the same rewrite without the overflow is judged as before.
#include <gtest/gtest.h>

#include <string>

#include "equiv/equiv.h"
#include "equiv/link_status.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {
namespace {

// sd_attention with an int32 tile of iota values from `start` doubled on GpSimd (nothing reads
// it): from 2^30 the sum overflows int32.
Program with_int32_add(const Program& p, int64_t start) {
  std::string text = print_program(p);
  text +=
      "buffer ov_a : sbuf int32 [128, 4]\nbuffer ov_b : sbuf int32 [128, 4]\n"
      "iota ov_a[:, :], offset=" +
      std::to_string(start) +
      ", channel_multiplier=0, steps=[1]\n"
      "tensor_tensor ov_b[:, :], ov_a[:, :], ov_a[:, :], op=add, engine=gpsimd\n";
  return parse_program(text, "int32_add.nkir");
}

EquivResult equiv_with(int64_t start) {
  const kernels::Variant* v = kernels::find_variant("sd_attention");
  EquivRequest req;
  req.original = {"sd_attention", v, std::nullopt};
  const kernels::LabelledProgram first = kernels::option_programs(*v).front();
  req.rewrite = {"int32_add.nkir", nullptr, with_int32_add(first.program, start)};
  req.options = first.options;
  req.params = {{"seqlen", 128}, {"d_head", 8}};  // one small shape: the test stays fast
  req.cases = 1;
  return run_equiv(req);
}

TEST(UndefinedResult, EquivIsUnknownAtEveryLevelNotRefuted) {
  const EquivResult r = equiv_with(1 << 30);
  ASSERT_FALSE(r.outcomes.empty());
  for (const OptionOutcome& o : r.outcomes) {
    EXPECT_TRUE(o.run_error.empty()) << o.run_error;
    EXPECT_NE(o.undefined_result.find("the rewrite reaches a result the documentation leaves "
                                      "undefined"),
              std::string::npos)
        << o.undefined_result;
    EXPECT_NE(o.undefined_result.find("does not fit the int32 destination"), std::string::npos);
    EXPECT_EQ(o.bit_exact, Verdict::unknown);
    EXPECT_EQ(o.real, Verdict::unknown);
    EXPECT_EQ(o.numeric, Verdict::unknown);
    EXPECT_FALSE(o.holds(Level::contract));
    EXPECT_EQ(o.to_json().at("undefined_result"), o.undefined_result);
    EXPECT_EQ(judge_link(*kernels::find_variant("sd_attention"), o).status, LinkStatus::unknown);
  }
  EXPECT_EQ(r.verdict, "unknown");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.text().find("UNKNOWN (every level)"), std::string::npos) << r.text();
}

// Without the overflow the extra instructions change no output: bit-exact holds.
TEST(UndefinedResult, WithoutTheOverflowTheRewriteIsBitExact) {
  const EquivResult r = equiv_with(0);
  EXPECT_EQ(r.verdict, "holds") << r.text();
}

}  // namespace
}  // namespace ncv::equiv
