// nearest_in_domain: the legal point nearest to a wanted one, under ranges, grids and relations
// between params (model/ir/domain_search.h).
#include "model/ir/domain_search.h"

#include <gtest/gtest.h>

namespace ncv {
namespace {

Relation le(Expr a, Expr b) {
  return Relation{RelationKind::LE, std::move(a), std::move(b)};
}

// A batch split over two cores: bs even, 129 <= bs * heads * queries <= 256, a tiled seqlen.
struct SplitDomain {
  std::vector<Param> params = {
      {"bs", 2, 256, 2}, {"heads", 1, 128, 1}, {"queries", 1, 8, 1}, {"seqlen", 128, 32768, 128}};
  Expr product = Expr::var("bs") * (Expr::var("heads") * Expr::var("queries"));
  std::vector<Relation> relations = {le(Expr(129), product), le(product, Expr(256)),
                                     le(Expr::var("queries") * 128, Expr::var("seqlen"))};
};

TEST(DomainSearch, ALegalWantedPointIsItself) {
  const SplitDomain d;
  const std::map<std::string, int64_t> want = {
      {"bs", 2}, {"heads", 65}, {"queries", 1}, {"seqlen", 256}};
  ASSERT_TRUE(in_domain(d.params, d.relations, want));
  EXPECT_EQ(nearest_in_domain(d.params, d.relations, want), want);
}

TEST(DomainSearch, GrowsTheSmallestPointUntilEveryRelationHolds) {
  const SplitDomain d;
  const std::map<std::string, int64_t> smallest = {
      {"bs", 2}, {"heads", 1}, {"queries", 1}, {"seqlen", 128}};
  ASSERT_FALSE(in_domain(d.params, d.relations, smallest));
  const auto got = nearest_in_domain(d.params, d.relations, smallest);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(in_domain(d.params, d.relations, *got));
  const int64_t product = got->at("bs") * got->at("heads") * got->at("queries");
  EXPECT_GE(product, 129);
  // Nearest: the product grows no further than the next candidates allow (x1.5 / x2 steps), and
  // the seqlen grows only as far as queries * 128 needs.
  EXPECT_LE(product, 256);
  EXPECT_EQ(got->at("seqlen"), std::max<int64_t>(128, got->at("queries") * 128));
}

TEST(DomainSearch, FixedParamsKeepTheirValueOrThereIsNoPoint) {
  const SplitDomain d;
  const auto got = nearest_in_domain(d.params, d.relations,
                                     {{"bs", 4}, {"heads", 1}, {"queries", 8}, {"seqlen", 128}},
                                     {"queries", "seqlen"});
  // queries 8 needs seqlen >= 1024, and seqlen is fixed at 128: no legal point.
  EXPECT_FALSE(got.has_value());
  const auto fixed_bs = nearest_in_domain(
      d.params, d.relations, {{"bs", 4}, {"heads", 1}, {"queries", 1}, {"seqlen", 128}}, {"bs"});
  ASSERT_TRUE(fixed_bs.has_value());
  EXPECT_EQ(fixed_bs->at("bs"), 4);
  EXPECT_GE(fixed_bs->at("heads") * fixed_bs->at("queries"), 33);
}

TEST(DomainSearch, CandidatesAreOnTheGridInRangeNearestFirst) {
  const Param seqlen{"seqlen", 512, 4096, 512};
  const std::vector<int64_t> v = values_near(seqlen, 1000);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front(), 1024);
  for (int64_t x : v) {
    EXPECT_EQ(x % 512, 0) << x;
    EXPECT_GE(x, 512);
    EXPECT_LE(x, 4096);
  }
  EXPECT_NE(std::find(v.begin(), v.end(), 512), v.end());
  EXPECT_NE(std::find(v.begin(), v.end(), 4096), v.end());
  // An empty grid (no multiple of 3 in [4, 5]) has no candidates.
  EXPECT_TRUE(values_near(Param{"x", 4, 5, 3}, 4).empty());
}

TEST(DomainSearch, AnEmptyDomainHasNoPoint) {
  const std::vector<Param> params = {{"a", 1, 4, 1}, {"b", 1, 4, 1}};
  const std::vector<Relation> relations = {
      le(Expr::var("a") * Expr::var("b"), Expr(0))};  // no point
  EXPECT_FALSE(nearest_in_domain(params, relations, {{"a", 1}, {"b", 1}}).has_value());
}

}  // namespace
}  // namespace ncv
