// attention_tkg with out_in_sb=true: the kernel leaves its output [d, B*H*s_a] in SBUF and the
// test wrapper copies it to HBM as it is. The layout follows the option, check passes on one
// core and under both LNC2 splits, and each core's copy is the whole output (the source makes
// both cores hold it: both add under the s_prior split, a sendrecv swaps the halves under the
// batch split); a copy only NC0 completes fails.
#include <gtest/gtest.h>

#include <string>

#include "check/check.h"
#include "kernels/decode_attention/tests/attention_tkg_test_support.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

using tkg_test::shape;
using tkg_test::tkg;

// Small shapes of each split (the strided layout needs 128 * s_active slots per core): the batch
// split needs 129 <= bs * q_head * s_active with bs even.
ParamValues shape_for(const std::string& lnc) {
  return lnc == "2-batch" ? shape(2, 33, 2, 256, 8) : shape(2, 2, 2, 512, 16);
}

CheckResult check_tkg(const Options& o, const Program& p, const ParamValues& pv, int cases,
                      int determinism_runs = 1) {
  CheckOptions co;
  co.cases = cases;
  co.run.hw = &hw_config_trn2();
  co.determinism_runs = determinism_runs;
  return check_kernel(tkg(), p, o, pv, co);
}

// `text` with the line holding `needle` (once) wrapped in `for w in sequential_range(trips)`:
// the statement then runs on the cores where trips is 1.
std::string guard_line(const std::string& text, const std::string& needle,
                       const std::string& trips) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  EXPECT_EQ(text.find(needle, at + 1), std::string::npos) << needle << " is not unique";
  const size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
  const std::string indent = text.substr(begin, text.find_first_not_of(' ', begin) - begin);
  return text.substr(0, begin) + indent + "for w_guard in sequential_range(" + trips + ") {\n" +
         indent + "  " + text.substr(begin, end - begin) + "\n" + indent + "}" + text.substr(end);
}

TEST(AttentionTkgOutInSb, TheLayoutFollowsTheOption) {
  const Options sb = tkg().resolve({{"out_in_sb", "true"}});
  const Options hbm = tkg().resolve({});
  using enum Axis;
  EXPECT_EQ(tkg().layout_for(sb).out.axes, (std::vector<Axis>{dim, batch, head, seq}));
  EXPECT_EQ(tkg().layout_for(hbm).out.axes, (std::vector<Axis>{batch, head, dim, seq}));
  EXPECT_EQ(tkg().layout_for(hbm).out.axes, tkg().layout.out.axes);
  // The program's HBM output has the wrapper's shape [d, B, H, s_a] (the flat B*H*s_a split).
  const Program p = tkg().build(sb);
  const auto shapes = concrete_shapes(p, shape(2, 3, 4, 256, 5));
  EXPECT_EQ(shapes.at(p.find_tensor("out").value()), (std::vector<int64_t>{5, 2, 3, 4}));
  EXPECT_TRUE(p.find_tensor("out_sb").has_value());
  // Offered with every split, not with the options that do not touch the store.
  EXPECT_NO_THROW(tkg().resolve({{"out_in_sb", "true"}, {"lnc", "2-batch"}}));
  EXPECT_THROW(tkg().resolve({{"out_in_sb", "true"}, {"sink", "on"}}), std::invalid_argument);
}

TEST(AttentionTkgOutInSb, PassesOnOneCoreAndUnderBothSplits) {
  for (const char* lnc : {"1", "2-sprior", "2-batch"}) {
    SCOPED_TRACE(lnc);
    const Options o = tkg().resolve({{"out_in_sb", "true"}, {"lnc", lnc}});
    // the cores' schedules vary over 3 runs: both cores store the same bytes
    const CheckResult r = check_tkg(o, tkg().build(o), shape_for(lnc), 2, 3);
    EXPECT_TRUE(r.pass) << r.summary();
  }
}

// The wrapper's copy made by one core only: either core's SBUF output alone is the whole output.
// Under the s_prior split, the exchanged partial added on NC0 only (the HBM path's guard) leaves
// NC1 with its own part: its copy fails.
TEST(AttentionTkgOutInSb, EachCoreHoldsTheWholeOutput) {
  for (const char* lnc : {"2-sprior", "2-batch"}) {
    const Options o = tkg().resolve({{"out_in_sb", "true"}, {"lnc", lnc}});
    const std::string text = print_program(tkg().build(o));
    for (const char* core : {"program_id", "1 - program_id"}) {
      SCOPED_TRACE(std::string(lnc) + ", the copy on the core where " + core + " = 1");
      const Program p = parse_program(guard_line(text, "dma_copy out[", core));
      const CheckResult r = check_tkg(o, p, shape_for(lnc), 1);
      EXPECT_TRUE(r.pass) << r.summary();
    }
  }
  const Options o = tkg().resolve({{"out_in_sb", "true"}, {"lnc", "2-sprior"}});
  const std::string text = print_program(tkg().build(o));
  const std::string nc0_add = guard_line(text, "res_recv[:, :, :], op=add", "1 - program_id");
  const CheckResult r =
      check_tkg(o, parse_program(guard_line(nc0_add, "dma_copy out[", "program_id")),
                shape_for("2-sprior"), 1);
  EXPECT_FALSE(r.pass) << r.summary();
  ASSERT_FALSE(r.cases.empty());
  EXPECT_FALSE(r.cases.front().run_error.has_value()) << r.summary();  // wrong values, no error
}

}  // namespace
}  // namespace ncv::kernels
