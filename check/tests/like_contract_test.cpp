// The options a program checked --like K is judged under (like_contract.h), in process: every
// registered kernel's own program fits every option set it is built with (a right program is
// never refused), its dump without an options line derives each dtype option back, and a program
// that never stores bf16 is refused K's bf16 default.
#include "check/like_contract.h"

#include <gtest/gtest.h>

#include "kernels/option_programs.h"
#include "kernels/registry.h"

namespace ncv::kernels {
namespace {

// Every registered kernel at every option set it offers (the light ones: a heavy kernel's program
// is as cheap to build, but its many option sets are covered by its own tests).
TEST(LikeContract, EveryRegisteredProgramFitsItsOwnOptions) {
  int checked = 0;
  for (const Variant& v : registry()) {
    for (const Options& o : resolved_combinations(v)) {
      const Program p = v.build(o);
      const std::vector<std::string> why = like_contradictions(v, p, o, {});
      std::string text;
      for (const std::string& w : why) text += "\n  " + w;
      EXPECT_TRUE(why.empty()) << v.name << " " << o.size() << " options:" << text;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// sd_attention built with each option set and read back without its options: every option the
// program's dtypes decide comes back (dtype always; mixed_precision when the program holds no
// bf16), the mask option is the default and said so; none contradicts.
TEST(LikeContract, ARegisteredProgramsDtypesComeBackDerived) {
  const Variant& v = *find_variant("sd_attention");
  for (const Options& o : resolved_combinations(v, {{"use_causal_mask", "false"}})) {
    SCOPED_TRACE(o.at("dtype") + " mixed_precision=" + o.at("mixed_precision"));
    const LikeContract lc = like_contract(v, v.build(o), {}, {}, {}, "program");
    EXPECT_EQ(lc.options.at("dtype"), o.at("dtype"));
    const bool all_fp32 = o.at("dtype") == "fp32" && o.at("mixed_precision") == "false";
    // With bf16 anywhere both mixed_precision values fit and the default (true) is taken.
    EXPECT_EQ(lc.options.at("mixed_precision"), all_fp32 ? "false" : "true");
    for (const LikeOption& each : lc.each) {
      const OptionSource want = each.name == "dtype" || (each.name == "mixed_precision" && all_fp32)
                                    ? OptionSource::derived
                                    : OptionSource::defaulted;
      EXPECT_EQ(each.source, want) << each.name << ": " << each.why;
    }
  }
}

// A given value is kept and said so, however it is spelt; a given value the program's tensors
// contradict is refused, naming what the program has.
TEST(LikeContract, GivenValuesAreKeptOrRefused) {
  const Variant& v = *find_variant("sd_attention");
  const Options all_fp32 = v.resolve({{"mixed_precision", "false"}});
  const Program p = v.build(all_fp32);
  const LikeContract lc = like_contract(v, p, {{"use_causal_mask", "False"}}, {}, {}, "program");
  EXPECT_EQ(lc.options.at("use_causal_mask"), "false");
  EXPECT_EQ(lc.each.front().source, OptionSource::given);
  try {
    like_contract(v, p, {{"dtype", "bf16"}}, {}, {}, "program");
    ADD_FAILURE() << "dtype=bf16 on an fp32 program was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the program's k is fp32"), std::string::npos) << e.what();
  }
  try {
    like_contract(v, p, {{"mixed_precision", "true"}}, {}, {}, "program");
    ADD_FAILURE() << "mixed_precision=true on a program without bf16 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the program holds no bf16 value"), std::string::npos)
        << e.what();
  }
}

// An option the program cannot decide whose default contradicts it: sd_attention with a made-up
// option `pe` (the matmul operands' and P's dtype: bf16 by default, fp32 or fp16) on its all-fp32
// program with one fp16 buffer. bf16 does not fit, fp32 and fp16 both do: refused, naming the
// option, the default, why and what fits, never decided by the default or a guess.
TEST(LikeContract, ADefaultThatContradictsWithSeveralValuesFittingIsRefused) {
  const Variant& sd = *find_variant("sd_attention");
  Variant v = sd;
  v.options.push_back({"pe", {"bf16", "fp32", "fp16"}, "bf16", "operand dtype"});
  v.contract = [&sd](const Options& o) {
    Options base = o;
    base.erase("pe");
    oracle::PrecisionContract c = sd.contract(base);
    c.q_dtype = c.k_dtype = c.v_dtype = c.p_dtype = *parse_dtype(o.at("pe"));
    return c;
  };
  const Options all_fp32 = {{"mixed_precision", "false"}, {"dtype", "fp32"}};
  Program p = sd.build(sd.resolve(all_fp32));
  Tensor fp16 = p.tensors.back();
  fp16.id = static_cast<TensorId>(p.tensors.size());
  fp16.name = "fp16_scratch";
  fp16.dtype = DType::fp16;
  p.tensors.push_back(fp16);
  try {
    like_contract(v, p, all_fp32, {}, {}, "program");
    ADD_FAILURE() << "pe was decided by a default the program contradicts";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* part : {"option pe is not given and sd_attention's default pe=bf16 "
                             "contradicts the program",
                             "the program holds no bf16 value", "the program fits pe=fp16 or fp32",
                             "--param pe=VALUE"}) {
      EXPECT_NE(what.find(part), std::string::npos) << part << "\n" << what;
    }
  }
  // Given, it is taken as given.
  Options with_pe = all_fp32;
  with_pe["pe"] = "fp16";
  EXPECT_EQ(like_contract(v, p, with_pe, {}, {}, "program").options.at("pe"), "fp16");
}

}  // namespace
}  // namespace ncv::kernels
