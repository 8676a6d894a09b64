// The Z3 translation agrees with Expr's own evaluation on random expressions and random values,
// negative dividends of floor division and modulo included.
#include "solver/z3_expr.h"

#include <gtest/gtest.h>

#include <random>

namespace ncv::solver {
namespace {

const std::vector<std::string> kVars = {"za", "zb", "zc"};

// Random expression trees of every node kind; constants and values small enough that no
// intermediate overflows int64 (eval would throw, Z3 would not).
Expr random_expr(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 7);
  switch (pick(rng)) {
    case 0:
      return Expr(std::uniform_int_distribution<int64_t>(-20, 20)(rng));
    case 1:
      return Expr::var(kVars[std::uniform_int_distribution<size_t>(0, kVars.size() - 1)(rng)]);
    case 2:
      return random_expr(rng, depth - 1) + random_expr(rng, depth - 1);
    case 3:
      return random_expr(rng, depth - 1) * random_expr(rng, depth - 1);
    case 4:
      return Expr::floordiv(random_expr(rng, depth - 1),
                            std::uniform_int_distribution<int64_t>(1, 9)(rng));
    case 5:
      return Expr::mod(random_expr(rng, depth - 1),
                       std::uniform_int_distribution<int64_t>(1, 9)(rng));
    case 6:
      return Expr::min(random_expr(rng, depth - 1), random_expr(rng, depth - 1));
    default:
      return Expr::max(random_expr(rng, depth - 1), random_expr(rng, depth - 1)) -
             random_expr(rng, depth - 1);
  }
}

TEST(Z3Expr, AgreesWithEvalOnRandomExpressionsAndValues) {
  std::mt19937_64 rng(7);
  z3::context ctx;
  int kinds_seen[8] = {};
  for (int n = 0; n < 3000; ++n) {
    const Expr e = random_expr(rng, 4);
    kinds_seen[static_cast<int>(e.kind())]++;
    Env env;
    SymbolTerms values;
    for (const std::string& v : kVars) {
      const int64_t x = std::uniform_int_distribution<int64_t>(-60, 60)(rng);
      env.set(v, x);
      values.emplace(intern_symbol(v), ctx.int_val(x));
    }
    const z3::expr t = to_z3(ctx, e, values).simplify();
    ASSERT_TRUE(t.is_numeral()) << e.str();
    ASSERT_EQ(t.get_numeral_int64(), eval(e, env)) << e.str();
  }
  for (int k = 0; k < 8; ++k) EXPECT_GT(kinds_seen[k], 0) << "expression kind " << k;
}

// The translation over free symbols, not just the simplifier on numerals: the solver proves the
// term equals eval's value once the symbols are pinned.
TEST(Z3Expr, SolverPinsTheSymbolicTermToEvalsValue) {
  std::mt19937_64 rng(11);
  z3::context ctx;
  SymbolTerms symbols;
  for (const std::string& v : kVars) symbols.emplace(intern_symbol(v), ctx.int_const(v.c_str()));
  for (int n = 0; n < 100; ++n) {
    const Expr e = random_expr(rng, 3);
    Env env;
    z3::solver s(ctx);
    for (const std::string& v : kVars) {
      const int64_t x = std::uniform_int_distribution<int64_t>(-60, 60)(rng);
      env.set(v, x);
      s.add(symbols.at(intern_symbol(v)) == ctx.int_val(x));
    }
    s.add(to_z3(ctx, e, symbols) != ctx.int_val(eval(e, env)));
    ASSERT_EQ(s.check(), z3::unsat) << e.str();
  }
}

TEST(Z3Expr, FloorSemanticsOnNegativeDividends) {
  z3::context ctx;
  const Expr x = Expr::var("zneg");
  SymbolTerms values{{intern_symbol("zneg"), ctx.int_val(-7)}};
  EXPECT_EQ(to_z3(ctx, Expr::floordiv(x, 2), values).simplify().get_numeral_int64(), -4);
  EXPECT_EQ(to_z3(ctx, Expr::mod(x, 2), values).simplify().get_numeral_int64(), 1);
}

TEST(Z3Expr, UnboundSymbolIsAnError) {
  z3::context ctx;
  EXPECT_THROW(to_z3(ctx, Expr::var("nowhere") + 1, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ncv::solver
