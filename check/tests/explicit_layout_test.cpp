// check --layout's problem beyond the shapes (check/explicit_positions.h): the masks it states in
// positions, as nki-library's attention_cte reference does, and the layout roles that feed it.
#include "check/explicit_layout.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/ir/builder.h"
#include "oracle/input_distributions.h"

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

// A program with the tensors of a context-parallel --layout problem (q, k, v, out [S, d] and the
// q_offset input) and no body: packing reads the declarations only.
Program cp_program() {
  Builder b("cp_kernel");
  const Expr S = b.param("seqlen", 128, 512, 128);
  for (const char* name : {"q", "k", "v"}) b.input(name, DType::fp32, {S, Expr(64)});
  b.input("q_offset", DType::int32, {Expr(1)});
  b.output("out", DType::fp32, {S, Expr(64)});
  return b.finish();
}

// Each case's packing reads that case's own run-time values (Variant::draw_case returns them as
// CaseDraws), whatever other cases drew in between. Causal, top-left, four ranks at Sq = Skv:
// ranks 1 to 3 all see every key, so their cases' masks are identical while their q offsets
// (rank * Sq) differ; a look-up of the draws by the mask (the DrawLog this replaced) packed the
// first of two such cases with the second one's offset.
TEST(ExplicitLayoutDraws, EachCasePacksItsOwnRunTimeValues) {
  const Program p = cp_program();
  ExplicitProblem problem;
  problem.causal = true;
  problem.align = Align::top_left;
  problem.cp_degree = 4;
  const Variant v = explicit_layout_variant(
      *find_variant("attention_cte"), p,
      parse_explicit_layout("q=s,d k=s,d v=s,d out=s,d q_offset=q_offset"), problem);
  ASSERT_TRUE(v.draw_case);
  const ParamValues params{{"seqlen", 128}};
  const oracle::AttentionSpec base = v.spec({}, params);
  struct Drawn {
    oracle::AttentionSpec spec;
    CaseDraws draws;
    oracle::AttentionInputs in;
  };
  const auto draw = [&](uint64_t seed) {
    Drawn d{base, {}, {}};
    d.draws = v.draw_case(d.spec, params, seed);
    d.in = oracle::generate_inputs(d.spec, oracle::Distribution::normal, seed);
    return d;
  };
  const auto offset = [&](const Drawn& d) {
    return pack_inputs(v.layout, p, params, d.spec, d.in, d.draws).at("q_offset").get(0);
  };
  // Each seed drawn and packed alone: its offset. Two seeds with one mask and two offsets.
  std::map<uint64_t, float> alone;
  std::optional<std::pair<uint64_t, uint64_t>> pair;
  for (uint64_t seed = 1; seed <= 64 && !pair; ++seed) {
    const Drawn d = draw(seed);
    alone[seed] = offset(d);
    for (const auto& [other, off] : alone) {
      if (off != alone[seed] && draw(other).spec.mask.allowed == d.spec.mask.allowed) {
        pair = {other, seed};
      }
    }
  }
  ASSERT_TRUE(pair) << "no two seeds drew ranks with one mask";
  // Both drawn first, then packed in either order: each its own offset.
  const Drawn a = draw(pair->first), b = draw(pair->second);
  EXPECT_EQ(offset(a), alone[pair->first]);
  EXPECT_EQ(offset(b), alone[pair->second]);
  EXPECT_EQ(offset(a), alone[pair->first]);
  EXPECT_NE(offset(a), offset(b));
  // A case packed without its draws is refused, never packed with another case's values.
  EXPECT_THROW(pack_inputs(v.layout, p, params, a.spec, a.in, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ncv::kernels
