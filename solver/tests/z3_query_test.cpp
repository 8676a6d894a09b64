// Z3 queries keep their deadline (solver/z3_query.h): a query Z3 cannot decide stops at it as
// unknown, where Z3 4.8.12's own `timeout` deadlocked, and the context answers normally after.
#include "solver/z3_query.h"

#include <gtest/gtest.h>

#include <chrono>

#include "solver/z3_context.h"

namespace ncv::solver {
namespace {

// x^3 + y^3 = z^3 over [1, 2^20]: no solution (Fermat, n = 3), which Z3 cannot show.
void add_fermat(z3::context& ctx, z3::solver& s) {
  const z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), z = ctx.int_const("z");
  const z3::expr hi = ctx.int_val(int64_t{1} << 20);
  s.add(x >= 1 && x <= hi && y >= 1 && y <= hi && z >= 1 && z <= hi);
  s.add(x * x * x + y * y * y == z * z * z);
}

// The case that hung: a first check without push runs QF_NIA's tactic, whose try_for timers,
// armed after Z3's own timeout had fired, waited for that timer's mutex forever. (Setting
// `timeout` to 100 on this solver instead of check_within hangs this test at 0% CPU.)
TEST(Z3Query, AnUndecidableTacticQueryStopsAtItsDeadline) {
  z3::context& ctx = shared_context();
  z3::solver s(ctx);
  add_fermat(ctx, s);
  const auto t0 = std::chrono::steady_clock::now();
  const QueryResult r = check_within(s, 100);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.result, z3::unknown);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.why, "timeout");
  // A bound, not a speed target (100 times the deadline, for a loaded machine): a query that
  // ignored its deadline would not end (the tactic's last step has no time limit).
  EXPECT_LT(took, std::chrono::seconds(10));
}

// The obligations' solver: every check after a push, so Z3's incremental solver answers.
TEST(Z3Query, AnUndecidableIncrementalQueryStopsAtItsDeadlineAndTheSolverGoesOn) {
  z3::context& ctx = shared_context();
  z3::solver s(ctx);
  add_fermat(ctx, s);
  s.push();
  const QueryResult r = check_within(s, 100);
  EXPECT_EQ(r.result, z3::unknown);
  EXPECT_TRUE(r.timed_out);
  s.pop();
  s.push();
  s.add(ctx.int_const("x") > ctx.int_val(int64_t{1} << 20));  // outside the range: unsat at once
  const QueryResult next = check_within(s, 10'000);
  EXPECT_EQ(next.result, z3::unsat) << next.why;
  EXPECT_FALSE(next.timed_out);
}

TEST(Z3Query, ADecidedQueryIsNotInterrupted) {
  z3::context& ctx = shared_context();
  z3::solver s(ctx);
  const z3::expr a = ctx.int_const("a"), b = ctx.int_const("b");
  s.add(a >= 1 && a <= 100 && b >= 1 && b <= 100 && a * a * a == b * b + 4);  // a = b = 2
  s.push();
  const QueryResult r = check_within(s, 10'000);
  ASSERT_EQ(r.result, z3::sat) << r.why;
  EXPECT_FALSE(r.timed_out);
  const z3::model m = s.get_model();
  EXPECT_EQ(m.eval(a * a * a - b * b, true).get_numeral_int64(), 4);
}

// An interrupt that arrives after the check has finished leaves the context cancelled (the
// premise, asserted first); clear_interrupt lets it simplify and evaluate again.
TEST(Z3Query, ClearInterruptUndoesALateInterrupt) {
  z3::context& ctx = shared_context();
  const z3::expr a = ctx.int_const("a");
  ctx.interrupt();
  EXPECT_THROW((a + 1 + 2).simplify(), z3::exception);
  clear_interrupt(ctx);
  EXPECT_EQ((a + 1 + 2).simplify().to_string(), "(+ 3 a)");
}

}  // namespace
}  // namespace ncv::solver
