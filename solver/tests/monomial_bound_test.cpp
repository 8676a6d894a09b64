// The monomial fast path (solver/monomial_bound.h): it proves footprints bounded through the
// relations' products, which the params' box alone cannot; it never proves an inequality that
// some point of the domain violates (random expressions against every point of a small domain);
// and an SBUF buffer over capacity is still refuted (by Z3) with the fast path in front.
#include "solver/monomial_bound.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "solver/allocation.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;

IntervalBounds box(const Program& p) {
  IntervalBounds b;
  for (const Param& prm : p.params) b.bind(intern_symbol(prm.name), {prm.lo, prm.hi});
  return b;
}

// attention_tkg's shape of problem: scores of bs * heads * queries columns (at most 128 by a
// relation) for each of seqlen // 128 tiles, seqlen a multiple of 128.
struct Scores {
  Program p;
  Expr bhs, tiles, seqlen;
};
Scores scores() {
  Builder b("scores");
  Expr bs = b.param("bs", 1, 128), h = b.param("heads", 1, 128), q = b.param("queries", 1, 8);
  Expr s = b.param("seqlen", 128, 8192, 128);
  b.require(RelationKind::LE, bs * (h * q), Expr(128));
  auto x = b.input("x", DType::fp32, {128, bs});
  auto y = b.output("y", DType::fp32, {128, bs});
  b.dma_copy(y(), x());
  return {b.finish(), bs * h * q, Expr::floordiv(s, 128), s};
}

TEST(MonomialBounds, ProvesAProductBoundedByARelationThatTheBoxAloneCannot) {
  const Scores s = scores();
  MonomialBounds m(s.p, box(s.p));
  // 64 tiles of at most 128 fp32 columns, plus a seqlen // 128 * 256 byte buffer: at most
  // 64 * 128 * 4 + 64 * 256 bytes (the box alone gives 64 * 128^2 * 8 * 4 for the first term).
  const Expr footprint = s.tiles * 4 * s.bhs + s.tiles * 256;
  EXPECT_TRUE(m.proves_le(footprint, Expr(64 * 128 * 4 + 64 * 256)));
  EXPECT_FALSE(m.proves_le(footprint, Expr(64 * 128 * 4 + 64 * 256 - 1)));
  // Aligned sizes (floor division of a sum) and a max of two scopes' peaks.
  const Expr aligned = Expr::floordiv(s.tiles * 2 * s.bhs + 3, 4) * 4;
  EXPECT_TRUE(m.proves_le(Expr::max(aligned, footprint), Expr(64 * 128 * 4 + 64 * 256)));
  EXPECT_TRUE(m.proves_le(aligned, Expr(64 * 128 * 2 + 3)));
  // Unbounded by the relation: heads alone reaches 128.
  EXPECT_FALSE(m.proves_le(s.tiles * 4 * Expr::var("heads"), Expr(64 * 127 * 4)));
}

// Random expressions over a small domain with a relation: whatever the fast path proves holds at
// every point of the domain (the points violating the relation excluded).
Expr random_expr(std::mt19937_64& rng, int depth) {
  static const char* const vars[] = {"ma", "mb", "mc"};
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 7);
  switch (pick(rng)) {
    case 0:
      return Expr(std::uniform_int_distribution<int64_t>(-6, 6)(rng));
    case 1:
      return Expr::var(vars[std::uniform_int_distribution<int>(0, 2)(rng)]);
    case 2:
      return random_expr(rng, depth - 1) + random_expr(rng, depth - 1);
    case 3:
      return random_expr(rng, depth - 1) * random_expr(rng, depth - 1);
    case 4:
      return Expr::floordiv(random_expr(rng, depth - 1),
                            std::uniform_int_distribution<int64_t>(1, 5)(rng));
    case 5:
      return Expr::mod(random_expr(rng, depth - 1),
                       std::uniform_int_distribution<int64_t>(1, 5)(rng));
    case 6:
      return Expr::min(random_expr(rng, depth - 1), random_expr(rng, depth - 1));
    default:
      return Expr::max(random_expr(rng, depth - 1), random_expr(rng, depth - 1));
  }
}

TEST(MonomialBounds, NeverProvesWhatSomePointOfTheDomainViolates) {
  Builder b("small");
  Expr ma = b.param("ma", 0, 6, 2), mb = b.param("mb", 1, 7);
  b.param("mc", -3, 3);
  b.require(RelationKind::LE, ma * mb, Expr(12));
  auto x = b.input("x", DType::fp32, {128, 1});
  auto y = b.output("y", DType::fp32, {128, 1});
  b.dma_copy(y(), x());
  const Program p = b.finish();
  std::vector<Env> points;
  for (int64_t a = 0; a <= 6; a += 2) {
    for (int64_t bb = 1; bb <= 7; ++bb) {
      for (int64_t c = -3; c <= 3; ++c) {
        if (a * bb > 12) continue;
        Env env;
        env.set(intern_symbol("ma"), a);
        env.set(intern_symbol("mb"), bb);
        env.set(intern_symbol("mc"), c);
        points.push_back(env);
      }
    }
  }
  std::mt19937_64 rng(28);
  int proved = 0, tight = 0;
  for (int n = 0; n < 3000; ++n) {
    const Expr lhs = random_expr(rng, 4), rhs = random_expr(rng, 2);
    MonomialBounds m(p, box(p));
    int64_t worst = std::numeric_limits<int64_t>::min();
    for (const Env& env : points) worst = std::max(worst, eval(lhs, env) - eval(rhs, env));
    if (m.proves_le(lhs, rhs)) {
      ++proved;
      EXPECT_LE(worst, 0) << lhs.str() << " <= " << rhs.str() << " proved but violated";
    }
    // At the exact maximum: proved only if the bound is exact there; below it, never.
    if (m.proves_le(lhs - rhs, Expr(worst))) ++tight;
    EXPECT_FALSE(m.proves_le(lhs - rhs, Expr(worst - 1)))
        << lhs.str() << " - (" << rhs.str() << ") <= " << worst - 1 << " proved but violated";
  }
  // Not vacuous: the fast path proves a good share of them, some at their exact maximum.
  EXPECT_GT(proved, 300);
  EXPECT_GT(tight, 300);
}

// out[128, bs * heads] = 0 through one SBUF buffer of bs * heads fp32 per partition, with
// bs * heads <= limit: fits trn2's SBUF iff 4 * limit <= its usable bytes per partition.
Program product_buffer(int64_t limit) {
  Builder b("product_buffer");
  Expr bs = b.param("bs", 1, 1 << 20), h = b.param("heads", 1, 1 << 20);
  b.require(RelationKind::LE, bs * h, Expr(limit));
  auto out = b.output("out", DType::fp32, {128, bs * h});
  auto t = b.sbuf("t", DType::fp32, {128, bs * h});
  b.memset(t(), 0.0f);
  b.dma_copy(out(), t());
  return b.finish();
}

TEST(MonomialBounds, AllocationProvesAProductBufferAtCapacityAndRefutesOneElementMore) {
  const HwConfig& trn2 = hw_config_trn2();
  const int64_t fit = trn2.sbuf_usable_bytes_per_partition() / 4;
  auto capacity = [&](int64_t limit) {
    for (const Obligation& o : prove_allocation(product_buffer(limit), {.hw = &trn2})) {
      if (o.rule == "SBUF capacity") return o;
    }
    ADD_FAILURE() << "no SBUF capacity obligation";
    return Obligation{};
  };
  const Obligation fits = capacity(fit);
  EXPECT_EQ(fits.verdict, Verdict::proved) << fits.describe();
  const Obligation over = capacity(fit + 1);
  ASSERT_EQ(over.verdict, Verdict::counterexample) << over.describe();
  ASSERT_TRUE(over.counterexample);
  EXPECT_EQ(over.counterexample->params.at("bs") * over.counterexample->params.at("heads"),
            fit + 1);
  ASSERT_TRUE(over.replay);
  EXPECT_TRUE(over.replay->reproduced) << over.replay->detail;
}

}  // namespace
}  // namespace ncv::solver
