// prove's check that the domain holds params (solver/prove.h): an empty domain is refused, a
// non-empty one proves as before, and one Z3 cannot decide within the query's time is an unknown
// "non-empty domain" obligation, so the proof is never complete (its other obligations may hold
// only because there is nothing to prove). Nonlinear relations, since those used to hang there.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "model/ir/builder.h"
#include "solver/prove.h"
#include "solver/tests/obligation_helpers.h"

namespace ncv::solver {
namespace {

using testing_helpers::describe_all;
using testing_helpers::not_proved;

constexpr int64_t kHi = int64_t{1} << 20;

// A copy through SBUF whose shapes do not depend on the params: only the domain is in question.
Program copy_with(Builder& b) {
  auto x = b.input("x", DType::fp32, {128, 1});
  auto y = b.output("y", DType::fp32, {128, 1});
  auto t = b.sbuf("t", DType::fp32, {128, 1});
  b.dma_copy(t(), x());
  b.dma_copy(y(), t());
  return b.finish();
}

// a^3 + c^3 = e^3 has no solution (Fermat, n = 3); Z3 cannot show it.
Program fermat_domain() {
  Builder b("fermat_domain");
  const Expr a = b.param("a", 1, kHi), c = b.param("c", 1, kHi), e = b.param("e", 1, kHi);
  b.require(RelationKind::EQ, a * a * a + c * c * c, e * e * e);
  return copy_with(b);
}

const Obligation* find_rule(const std::vector<Obligation>& all, const std::string& rule) {
  for (const Obligation& o : all) {
    if (o.rule == rule) return &o;
  }
  return nullptr;
}

TEST(ProveDomain, AnUndecidedDomainIsAnUnknownObligationAfterTheQueryTimeout) {
  ProveOptions o;
  o.timeout_ms = 100;  // hung here at 0% CPU (Z3's own timeout, solver/z3_query.h)
  const std::vector<Obligation> all = prove_program(fermat_domain(), o);
  ASSERT_FALSE(all.empty());
  const Obligation& first = all.front();
  EXPECT_EQ(first.rule, "non-empty domain") << describe_all(all);
  EXPECT_EQ(first.cls, ObligationClass::well_formed);
  EXPECT_EQ(first.verdict, Verdict::unknown);
  EXPECT_FALSE(first.out_of_budget);
  EXPECT_NE(first.unknown_reason.find("timeout 100 ms"), std::string::npos) << first.describe();
  EXPECT_NE(first.unknown_reason.find("nothing to prove"), std::string::npos) << first.describe();
  for (const Obligation& ob : all) EXPECT_NE(ob.verdict, Verdict::counterexample) << ob.describe();
}

// With a budget shorter than the query timeout the query stops at the budget's deadline, and the
// obligation says it ran out of time.
TEST(ProveDomain, AnUndecidedDomainStopsAtTheBudget) {
  ProveOptions o;
  o.timeout_ms = 20'000;
  o.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Obligation> all = prove_program(fermat_domain(), o);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().rule, "non-empty domain") << describe_all(all);
  EXPECT_EQ(all.front().verdict, Verdict::unknown);
  EXPECT_TRUE(all.front().out_of_budget);
  EXPECT_NE(all.front().unknown_reason.find("nothing to prove"), std::string::npos);
  // A bound, not a speed target (50 times the budget, for a loaded machine): a query that
  // ignored the budget would run for the 20 s of its timeout.
  EXPECT_LT(took, std::chrono::seconds(10));
}

// a * b = 7 with a, b >= 2: no point (7 is prime), which Z3 decides at once.
TEST(ProveDomain, AnEmptyNonlinearDomainIsRefused) {
  Builder b("prime");
  const Expr a = b.param("a", 2, 100), c = b.param("c", 2, 100);
  b.require(RelationKind::EQ, a * c, Expr(7));
  const Program p = copy_with(b);
  try {
    prove_program(p);
    ADD_FAILURE() << "an empty domain was proved";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no params satisfy its declared domain"),
              std::string::npos)
        << e.what();
  }
}

// a^3 = c^2 + 4 holds at a = c = 2: the obligations are those of the same program without the
// relation, all proved, with no "non-empty domain" among them.
TEST(ProveDomain, ANonEmptyNonlinearDomainProvesAsBefore) {
  Builder b("cubic");
  const Expr a = b.param("a", 1, kHi), c = b.param("c", 1, kHi);
  b.require(RelationKind::EQ, a * a * a, c * c + 4);
  const std::vector<Obligation> all = prove_program(copy_with(b));
  Builder free("cubic");
  free.param("a", 1, kHi);
  free.param("c", 1, kHi);
  const std::vector<Obligation> plain = prove_program(copy_with(free));
  EXPECT_EQ(all.size(), plain.size()) << describe_all(all);
  EXPECT_TRUE(not_proved(all).empty()) << describe_all(all);
  EXPECT_EQ(find_rule(all, "non-empty domain"), nullptr);
}

}  // namespace
}  // namespace ncv::solver
