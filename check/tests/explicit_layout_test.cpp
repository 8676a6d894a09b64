// check --layout's problem beyond the shapes (check/explicit_positions.h): the masks it states in
// positions, as nki-library's attention_cte reference does, and the layout roles that feed it.
#include "check/explicit_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/option_programs.h"
#include "kernels/registry.h"

namespace ncv::kernels {
namespace {

// The visible keys of every query, one string per query ("0110": keys 1 and 2).
std::vector<std::string> visible(const ExplicitProblem& p, const PositionsGeometry& g,
                                 const PositionsDraw& d) {
  oracle::AttentionSpec s;
  set_positions_mask(p, g, d, s);
  s.validate();
  std::vector<std::string> rows;
  for (int64_t i = 0; i < s.seqlen_q; ++i) {
    std::string r;
    for (int64_t j = 0; j < s.seqlen_kv; ++j) r += s.visible(0, i, j) ? '1' : '0';
    rows.push_back(r);
  }
  return rows;
}

using Rows = std::vector<std::string>;

TEST(ExplicitPositions, CausalIsBottomRightUnlessTopLeftIsGiven) {
  ExplicitProblem p;
  p.causal = true;
  const PositionsGeometry g{2, 4};
  EXPECT_EQ(visible(p, g, {}), (Rows{"1110", "1111"}));
  p.align = Align::top_left;
  EXPECT_EQ(visible(p, g, {}), (Rows{"1000", "1100"}));
  // At Sq = Skv both alignments are the oracle's causal kind.
  oracle::AttentionSpec s;
  set_positions_mask(p, PositionsGeometry{3, 3}, {}, s);
  EXPECT_EQ(s.mask.kind, oracle::MaskKind::causal);
}

TEST(ExplicitPositions, AWindowOfWKeysEndsAtTheQuerysPosition) {
  ExplicitProblem p;
  p.causal = true;
  p.window = 2;
  EXPECT_EQ(visible(p, PositionsGeometry{3, 3}, {}), (Rows{"100", "110", "011"}));
  p.align = Align::top_left;
  EXPECT_EQ(visible(p, PositionsGeometry{2, 4}, {}), (Rows{"1000", "1100"}));
  // Without causal the reference masks the keys W or more behind only.
  p.causal = false;
  EXPECT_EQ(visible(p, PositionsGeometry{3, 3}, {}), (Rows{"111", "111", "011"}));
}

TEST(ExplicitPositions, APriorPrecedesTheActiveKeysAndOnlyItsUsedSlotsAreVisible) {
  ExplicitProblem p;
  p.causal = true;
  p.align = Align::top_left;
  PositionsGeometry g{2, 2, 3};
  PositionsDraw d;
  d.prior_len = 2;  // slots 0, 1 at positions -2, -1; slot 2 unused
  EXPECT_EQ(visible(p, g, d), (Rows{"11010", "11011"}));
  p.window = 2;  // positions > q - 2
  EXPECT_EQ(visible(p, g, d), (Rows{"01010", "00011"}));
}

TEST(ExplicitPositions, AQueryOffsetPlacesTheRanksQueries) {
  ExplicitProblem p;
  p.causal = true;
  p.align = Align::top_left;
  p.cp_degree = 2;
  PositionsGeometry g{2, 4};
  g.q_offset = true;
  PositionsDraw d;
  d.q_offset = 2;  // rank 1 of 2, contiguous: queries at 2, 3
  EXPECT_EQ(visible(p, g, d), (Rows{"1110", "1111"}));
  p.cp_strided = true;
  d.q_offset = 1;  // rank 1, strided: queries at 1, 3
  EXPECT_EQ(visible(p, g, d), (Rows{"1100", "1111"}));
  std::mt19937_64 rng(7);
  for (int n = 0; n < 20; ++n) {
    const int64_t off = draw_positions(p, g, rng).q_offset;
    EXPECT_TRUE(off == 0 || off == 1) << off;
  }
}

TEST(ExplicitPositions, KeyBoundsKeepEachQueryInItsPackedSequence) {
  ExplicitProblem p;
  PositionsGeometry g{4, 4};
  g.key_bounds = true;
  PositionsDraw d;
  d.key_min = {0, 0, 2, 2};
  d.key_max = {2, 2, 4, 4};
  EXPECT_EQ(visible(p, g, d), (Rows{"1100", "1100", "0011", "0011"}));
  // Drawn: contiguous sequences covering the queries, each query inside its own.
  std::mt19937_64 rng(3);
  for (int n = 0; n < 20; ++n) {
    const PositionsDraw r = draw_positions(p, PositionsGeometry{8, 8, 0, false, true}, rng);
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_LE(r.key_min[static_cast<size_t>(i)], i);
      EXPECT_GT(r.key_max[static_cast<size_t>(i)], i);
    }
  }
}

TEST(ExplicitPositions, InconsistentProblemsAreRefused) {
  ExplicitProblem p;
  PositionsGeometry g{2, 2};
  g.q_offset = true;
  EXPECT_THROW(validate_positions(p, g), std::invalid_argument);  // no --cp-degree
  p.cp_degree = 2;
  EXPECT_THROW(validate_positions(p, g), std::invalid_argument);  // bottom-right
  p.align = Align::top_left;
  EXPECT_NO_THROW(validate_positions(p, g));
  EXPECT_THROW(validate_positions(p, PositionsGeometry{2, 2}), std::invalid_argument);
  EXPECT_THROW(validate_positions(ExplicitProblem{}, PositionsGeometry{2, 2, 1, false, true}),
               std::invalid_argument);
}

TEST(ExplicitLayoutParse, OptionalRolesNameTheirTensorsAndInputs) {
  const ExplicitLayout el = parse_explicit_layout(
      "q=h,d,s k=h,d,s v=h,s,d out=h,s,d sink=h,b k_prior=h,d,s v_prior=h,s,d "
      "prior_len=prior_used_len");
  ASSERT_TRUE(el.layout.sink && el.k_prior && el.v_prior);
  EXPECT_EQ(el.layout.sink->tensor, "sink");
  EXPECT_EQ(el.k_prior->tensor, "k_prior");
  EXPECT_EQ(el.prior_len, "prior_used_len");
  const ExplicitLayout cp =
      parse_explicit_layout("q=d,s k=d,s v=d,s out=s,d q_offset=cp_offset key_min=a key_max=b");
  EXPECT_EQ(cp.q_offset, "cp_offset");
  EXPECT_EQ(cp.key_min, "a");
  EXPECT_EQ(cp.key_max, "b");
  for (const char* bad :
       {"q=d,s k=d,s v=d,s out=s,d k_prior=d,s v_prior=d,s", "q=d,s k=d,s v=d,s out=s,d key_min=a",
        "q=d,s k=d,s v=d,s out=s,d x=s", "q=d,s k=d,s v=d,s out=s,d q_offset="}) {
    EXPECT_THROW(parse_explicit_layout(bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW(parse_layout("q=d,s k=d,s v=d,s out=s,d sink=h"), std::invalid_argument);
}

// The attention_cte contract a --layout check borrows depends on the option dtype alone: the
// others (causal_mask, sliding_window, sink, lnc, scale) change the registered kernel's program
// and problem, which a --layout check replaces by its own program and the problem it states
// (--scale, --causal, --window, the sink role). So nkilib_attention.py's check plan may give them
// at the values offered with any dtype, and a check may give any --scale.
TEST(ExplicitLayoutContract, AttentionCteContractDependsOnTheDtypeOnly) {
  for (const char* name : {"attention_cte", "attention_cte_multi_section"}) {
    const Variant& v = *find_variant(name);
    int compared = 0;
    for (const Options& o : option_combinations(v)) {
      const Options base = v.resolve({{"dtype", o.at("dtype")}});
      EXPECT_EQ(v.contract(o).to_json(), v.contract(base).to_json()) << name;
      compared += o != base;
    }
    EXPECT_GT(compared, 0) << name;
  }
}

}  // namespace
}  // namespace ncv::kernels
