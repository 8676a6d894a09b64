// Layer 0's canonical form computes what the program computes: every registered kernel (not the
// heavy ones), at its default options, its smallest shape and a shape of several tiles, run as
// written and as canonicalised (peeled iterations folded, loops split, commuting statements
// reordered; printed and parsed back as layer 0 compares it) on the same inputs, gives the same
// output bits. The registry's kernels have loops the canonicalisation splits and blocks it
// reorders, so this runs the rules on real programs.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "equiv/equiv.h"
#include "equiv/peel.h"
#include "equiv/reorder.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {
namespace {

void expect_canonical_forms_agree(bool several_tiles) {
  int changed = 0, ran = 0;
  for (const kernels::Variant& v : kernels::registry()) {
    if (kernels::heavy_check(v)) continue;
    SCOPED_TRACE(v.name);
    const Program p = v.build(v.resolve({}));
    const std::string text =
        print_program(with_canonical_statement_order(without_peeled_iterations(p)));
    const Program c = parse_program(text, v.name + " (canonical)");
    if (text != print_program(p)) ++changed;
    // The smallest shape, and one with several tiles in every tiled dim (where loops run more
    // than once).
    std::vector<ParamValues> shapes = {checked_shapes(p, {}).front()};
    if (const auto larger = tested_shape(p, {}); larger && several_tiles) {
      shapes.push_back(*larger);
    }
    interp::RunOptions o;
    o.hw = find_hw_config(kernels::default_generation(v));
    o.record_trace = false;
    for (const ParamValues& params : shapes) {
      const auto inputs = interp::random_inputs(p, params, 5);
      const interp::RunResult a = interp::run_program(p, params, inputs, o);
      const interp::RunResult b = interp::run_program(c, params, inputs, o);
      ASSERT_FALSE(a.error.has_value()) << a.error->message;
      ASSERT_FALSE(b.error.has_value()) << b.error->message;
      ASSERT_EQ(a.outputs.size(), b.outputs.size());
      for (const auto& [name, t] : a.outputs) {
        EXPECT_EQ(t.bytes, b.outputs.at(name).bytes) << name;
      }
    }
    ++ran;
  }
  std::printf("[canonical] %d kernels run, %d changed by the canonical form\n", ran, changed);
  EXPECT_GT(ran, 10);
  EXPECT_GT(changed, ran / 2) << "the canonical form left most kernels as they were";
}

// The default tier at the smallest shapes (0.4 s); the deep tier adds a shape of several tiles
// (20 s).
TEST(CanonicalForm, EveryRegisteredKernelComputesTheSameBitsCanonicalised) {
  expect_canonical_forms_agree(false);
}

TEST(DeepCanonicalForm, EveryRegisteredKernelComputesTheSameBitsCanonicalised) {
  expect_canonical_forms_agree(true);
}

}  // namespace
}  // namespace ncv::equiv
