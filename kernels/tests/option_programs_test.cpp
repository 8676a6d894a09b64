// Option enumeration: every combination once, in declaration order; fixed options filter and are
// checked; Variant::offers.
#include "kernels/option_programs.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ncv::kernels {
namespace {

// Every combination of v's option values, excluded ones included.
std::vector<Options> every_combination(const Variant& v) {
  std::vector<Options> out = {{}};
  for (const OptionSpec& o : v.options) {
    std::vector<Options> next;
    for (const Options& partial : out) {
      for (const std::string& value : o.values) {
        Options more = partial;
        more[o.name] = value;
        next.push_back(std::move(more));
      }
    }
    out = std::move(next);
  }
  return out;
}

TEST(OptionPrograms, EveryCombinationOnceWithItsLabel) {
  for (const Variant& v : registry()) {
    size_t expected = 0;
    for (const Options& o : every_combination(v)) {
      if (!v.excluded || v.excluded(o).empty()) ++expected;
    }
    const std::vector<LabelledProgram> all = option_programs(v);
    ASSERT_EQ(all.size(), expected) << v.name;
    std::set<Options> seen;
    for (const LabelledProgram& lp : all) {
      EXPECT_TRUE(seen.insert(lp.options).second) << lp.label;
      EXPECT_EQ(lp.options, v.resolve(lp.options)) << lp.label;
      EXPECT_EQ(lp.program, v.build(lp.options)) << lp.label;
      std::string label = v.name;
      for (const auto& [name, value] : lp.options) label += " " + name + "=" + value;
      EXPECT_EQ(lp.label, label);
    }
  }
}

TEST(OptionPrograms, FixedOptionsFilterTheCombinations) {
  const Variant& v = *find_variant("sd_attention");
  const std::vector<LabelledProgram> causal = option_programs(v, {{"use_causal_mask", "true"}});
  EXPECT_EQ(causal.size(), option_programs(v).size() / 2);
  for (const LabelledProgram& lp : causal) EXPECT_EQ(lp.options.at("use_causal_mask"), "true");
  EXPECT_THROW(option_programs(v, {{"no_such_option", "true"}}), std::invalid_argument);
  EXPECT_THROW(option_programs(v, {{"use_causal_mask", "maybe"}}), std::invalid_argument);
}

TEST(OptionPrograms, OffersNamesTheAllowedValues) {
  EXPECT_TRUE(find_variant("sd_attention")->offers("use_causal_mask", "true"));
  EXPECT_FALSE(find_variant("sd_attention_allocated")->offers("use_causal_mask", "true"));
  EXPECT_TRUE(find_variant("sd_attention_allocated")->offers("use_causal_mask", "false"));
  EXPECT_FALSE(find_variant("sd_attention")->offers("no_such_option", "true"));
}

}  // namespace
}  // namespace ncv::kernels
