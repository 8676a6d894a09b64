// Bounds obligations: every registered kernel is proved over its whole domain; broken programs
// and widened domains give counterexamples at the right instruction and boundary, which replay on
// the interpreter as out_of_bounds; an obligation Z3 cannot decide is unknown, never proved.
#include "solver/bounds.h"

#include <gtest/gtest.h>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "kernels/tests/registry_slices.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::not_proved;

using kernels::LabelledProgram;
using kernels::option_programs;

// y[N, 64] = exp(x) tile by tile; `shift` moves the load window (1 = off by one at the end);
// x has `x_rows` rows (default N).
Program exp_kernel(int64_t shift, int64_t n_hi = 1024, std::optional<int64_t> x_rows = {}) {
  Builder b("exp_tiles");
  Expr N = b.param("N", 128, n_hi, 128);
  auto x = b.input("x", DType::fp32, {x_rows ? Expr(*x_rows) : N, 64});
  auto y = b.output("y", DType::fp32, {N, 64});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t = b.sbuf("t", DType::fp32, {128, 64}, {.bufs = 2});
    b.dma_copy(t(), x({ds(i * 128 + shift, 128), all()}));
    b.activation(t(), t(), {.func = ActFunc::exp});
    b.dma_copy(y({ds(i * 128, 128), all()}), t());
  });
  return b.finish();
}

// Registry-wide (README.md "Tests"): one kernel per family at the option sets covering every value
// in the default tier (PerFamily/), every kernel at every option set in the deep tier (Deep/).
class BoundsRegistry : public ::testing::TestWithParam<std::string> {};

TEST_P(BoundsRegistry, EveryOptionSetIsProvedForItsWholeDomain) {
  const kernels::Variant& v = *kernels::find_variant(GetParam());
  size_t programs = 0;
  for (const LabelledProgram& lp :
       kernels::testing::tier_programs(v, kernels::testing::in_deep_test())) {
    ++programs;
    const auto all =
        prove_bounds(lp.program, {.hw = find_hw_config(kernels::default_generation(v))});
    EXPECT_FALSE(all.empty()) << lp.label;
    for (const BoundsObligation& o : not_proved(all)) {
      ADD_FAILURE() << lp.label << ": " << o.describe();
    }
  }
  EXPECT_GE(programs, 1u);
}

INSTANTIATE_TEST_SUITE_P(PerFamily, BoundsRegistry,
                         ::testing::ValuesIn(kernels::testing::family_representatives()),
                         kernels::testing::kernel_param_name);
INSTANTIATE_TEST_SUITE_P(Deep, BoundsRegistry, ::testing::ValuesIn(kernels::testing::all_kernels()),
                         kernels::testing::kernel_param_name);

TEST(Bounds, CorrectTiledProgramIsProved) {
  const auto all = prove_bounds(exp_kernel(0));
  // Two dims for each of: t written, x read, t written and read, y written, t read.
  EXPECT_EQ(all.size(), 12u);
  EXPECT_TRUE(not_proved(all).empty());
}

TEST(Bounds, OffByOneLoadIsACounterexampleThatReplays) {
  const auto bad = not_proved(prove_bounds(exp_kernel(1)));
  ASSERT_EQ(bad.size(), 1u);
  const BoundsObligation& o = bad[0];
  EXPECT_EQ(o.verdict, Verdict::counterexample);
  EXPECT_EQ(o.instruction, 0u);
  EXPECT_NE(o.instruction_text.find("dma_copy"), std::string::npos);
  EXPECT_EQ(o.role, "read");
  EXPECT_EQ(o.tensor, "x");
  EXPECT_EQ(o.dim, 0);
  ASSERT_TRUE(o.counterexample);
  const int64_t n = o.counterexample->params.at("N");
  EXPECT_TRUE(n >= 128 && n <= 1024 && n % 128 == 0) << n;
  // Only the last tile reads past the end: i = N/128 - 1, last index N.
  ASSERT_EQ(o.counterexample->loop_indices.size(), 1u);
  EXPECT_EQ(o.counterexample->loop_indices[0], (std::pair<std::string, int64_t>{"i", n / 128 - 1}));
  EXPECT_NE(o.counterexample->violated.find("last index " + std::to_string(n) + " > " +
                                            std::to_string(n - 1)),
            std::string::npos)
      << o.counterexample->violated;
  ASSERT_TRUE(o.replay);
  EXPECT_TRUE(o.replay->reproduced) << o.replay->detail;
  EXPECT_FALSE(o.replay->disagreement);
  EXPECT_NE(o.replay->detail.find("same instruction"), std::string::npos) << o.replay->detail;
}

// Shifts the innermost window of the first DMA load from a kernel input by one element; returns
// the instruction's id.
std::optional<uint32_t> shift_first_input_load(Program& p, std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    if (auto* l = std::get_if<Loop>(&s.node)) {
      if (auto id = shift_first_input_load(p, l->body)) return id;
    } else if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      auto* dma = std::get_if<DmaCopy>(&i->ins);
      if (dma && p.tensor(dma->src.tensor).kind == TensorKind::Input) {
        AccessDim& d = dma->src.dims.back();
        d.start = d.start + 1;
        return i->id;
      }
    }
  }
  return std::nullopt;
}

TEST(Bounds, RegisteredKernelWithAShiftedLoadIsACounterexampleThatReplays) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  Program p = v.build(v.resolve({}));
  const std::optional<uint32_t> id = shift_first_input_load(p, p.body);
  ASSERT_TRUE(id);
  const auto bad = not_proved(prove_bounds(p));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].verdict, Verdict::counterexample);
  EXPECT_EQ(bad[0].instruction, *id);
  EXPECT_EQ(bad[0].role, "read");
  ASSERT_TRUE(bad[0].counterexample);
  for (const Param& prm : p.params) {
    const int64_t value = bad[0].counterexample->params.at(prm.name);
    EXPECT_TRUE(value >= prm.lo && value <= prm.hi && value % prm.multiple_of == 0)
        << prm.name << "=" << value;
  }
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

TEST(Bounds, NegativeShiftFailsAtTheFirstIndex) {
  const auto bad = not_proved(prove_bounds(exp_kernel(-1)));
  ASSERT_EQ(bad.size(), 1u);
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].counterexample->loop_indices[0].second, 0);
  EXPECT_NE(bad[0].counterexample->violated.find("first index -1 < 0"), std::string::npos)
      << bad[0].counterexample->violated;
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

// x has a fixed 512 rows: the kernel is right for N <= 512 only. Widening the domain to 640
// gives the counterexample at the boundary, N = 640 and its last tile.
TEST(Bounds, WidenedDomainFailsExactlyAtTheBoundary) {
  EXPECT_TRUE(not_proved(prove_bounds(exp_kernel(0, 512, 512))).empty());
  const auto bad = not_proved(prove_bounds(exp_kernel(0, 640, 512)));
  ASSERT_EQ(bad.size(), 1u);
  ASSERT_TRUE(bad[0].counterexample);
  EXPECT_EQ(bad[0].tensor, "x");
  EXPECT_EQ(bad[0].counterexample->params.at("N"), 640);
  EXPECT_EQ(bad[0].counterexample->loop_indices[0].second, 4);
  EXPECT_NE(bad[0].counterexample->violated.find("last index 639 > 511"), std::string::npos)
      << bad[0].counterexample->violated;
  ASSERT_TRUE(bad[0].replay);
  EXPECT_TRUE(bad[0].replay->reproduced) << bad[0].replay->detail;
}

// The domain x^3 + y^3 = z^3 is empty (Fermat, n = 3), so no counterexample exists, but proving
// the read of a[x] in bounds needs that theorem: within 1 ms Z3 cannot, and the verdict must be
// unknown rather than proved.
TEST(Bounds, UndecidedObligationIsUnknownNeverProved) {
  Builder b("fermat");
  Expr x = b.param("x", 1, 1'000'000'000), y = b.param("y", 1, 1'000'000'000),
       z = b.param("z", 1, 1'000'000'000);
  b.require(RelationKind::EQ, x * x * x + y * y * y, z * z * z);
  auto a = b.input("a", DType::fp32, {4, 1});
  auto o = b.output("o", DType::fp32, {1, 1});
  b.dma_copy(o(), a({ds(x, 1), all()}));
  ProveOptions opts;
  opts.timeout_ms = 1;
  opts.resource_limit = 1;  // stops each query at once on any machine (the timeout alone may not)
  const auto bad = not_proved(prove_bounds(b.finish(), opts));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].verdict, Verdict::unknown);
  EXPECT_EQ(bad[0].tensor, "a");
  EXPECT_FALSE(bad[0].counterexample);
  EXPECT_NE(bad[0].unknown_reason.find("unknown"), std::string::npos) << bad[0].unknown_reason;
  EXPECT_NE(bad[0].describe().find("unknown:"), std::string::npos);
}

// Every offered combination: the product of the option values less the excluded ones, each
// labelled once (the enumeration itself is tested in kernels/tests/option_programs_test.cpp).
TEST(Bounds, OptionProgramsCoverEveryCombination) {
  for (const kernels::Variant& v : kernels::registry()) {
    size_t combos = 1;
    for (const kernels::OptionSpec& o : v.options) combos *= o.values.size();
    const auto programs = option_programs(v);
    if (!v.excluded) {
      EXPECT_EQ(programs.size(), combos) << v.name;
    } else {
      EXPECT_LT(programs.size(), combos) << v.name << " excludes some combination";
      for (const auto& lp : programs) EXPECT_EQ(v.excluded(lp.options), "") << lp.label;
    }
  }
}

}  // namespace
}  // namespace ncv::solver
