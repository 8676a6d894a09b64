#include "model/ir/expr.h"

#include <gtest/gtest.h>

namespace ncv {
namespace {

TEST(Expr, HashConsingMakesStructuralEqualityPointerEquality) {
  Expr s = Expr::var("S");
  Expr a = Expr::floordiv(s, 128) * Expr::var("i") + 5;
  Expr b = Expr::floordiv(Expr::var("S"), 128) * Expr::var("i") + 5;
  EXPECT_TRUE(a.same(b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a, Expr::floordiv(s, 128) * Expr::var("i") + 6);
}

// Small constants come from a table (expr.cpp), the rest from the hash-consing factory; folding
// builds constants through the factory. Both routes must give the same node, on both sides of the
// table's bounds [-64, 1024].
TEST(Expr, ConstantsFromTheTableAndTheFactoryAreOneNode) {
  for (int64_t v : {int64_t{-65}, int64_t{-64}, int64_t{0}, int64_t{5}, int64_t{1024},
                    int64_t{1025}, int64_t{1} << 40}) {
    const Expr folded = Expr::var("c") * 0 + Expr(v - 1) + Expr(1);
    EXPECT_TRUE(folded.is_const());
    EXPECT_TRUE(folded.same(Expr(v))) << v;
    EXPECT_EQ(Expr(v).const_value(), v);
  }
  EXPECT_TRUE(Expr().same(Expr(0)));
}

TEST(Expr, CanonicalFormsFoldConstantsAndIdentities) {
  Expr x = Expr::var("x");
  EXPECT_EQ(x + 0, x);
  EXPECT_EQ(x * 1, x);
  EXPECT_EQ(x * 0, Expr(0));
  EXPECT_EQ(Expr(3) + x, x + 3);
  EXPECT_EQ((x + 3) + 4, x + 7);
  EXPECT_EQ((x * 2) * 4, x * 8);
  EXPECT_EQ(Expr::floordiv(x, 1), x);
  EXPECT_EQ(Expr::mod(x, 1), Expr(0));
  EXPECT_EQ(Expr::min(x, x), x);
  EXPECT_EQ(Expr(7) * Expr(6), Expr(42));
  EXPECT_EQ((x - 3).str(), "x + -3");
  EXPECT_EQ((x - Expr::var("y")).str(), "x + y * -1");
}

TEST(Expr, PrintsWithMinimalParentheses) {
  Expr x = Expr::var("x"), y = Expr::var("y");
  EXPECT_EQ((x * (y + 1)).str(), "x * (y + 1)");
  EXPECT_EQ(Expr::floordiv(x + y, 4).str(), "(x + y) // 4");
  EXPECT_EQ(Expr::mod(x * 3, 7).str(), "x * 3 % 7");
  EXPECT_EQ((x + (y + x)).str(), "x + (y + x)");
  EXPECT_EQ(Expr::max(x, Expr::min(y, 3)).str(), "max(x, min(y, 3))");
}

TEST(Expr, EvaluatesWithFloorSemantics) {
  Env env;
  env.set("x", -7);
  Expr x = Expr::var("x");
  EXPECT_EQ(eval(Expr::floordiv(x, 2), env), -4);
  EXPECT_EQ(eval(Expr::mod(x, 2), env), 1);
  EXPECT_EQ(eval(Expr::min(x, 3) + Expr::max(x, 3), env), -4);
  env.set("x", 9);
  EXPECT_EQ(eval(x * x + 1, env), 82);
}

TEST(Expr, UnboundVariablesAndOverflowAreTypedErrors) {
  Env env;
  EXPECT_THROW(eval(Expr::var("nobody"), env), EvalError);
  env.set("big", int64_t{1} << 62);
  EXPECT_THROW(eval(Expr::var("big") * 4, env), EvalError);
  EXPECT_THROW(eval(Expr::var("big") + Expr::var("big"), env), EvalError);
  // Constants whose product leaves int64 stay unfolded; evaluating them is the error.
  const Expr unfolded = Expr(int64_t{1} << 62) * Expr(8);
  EXPECT_EQ(unfolded.kind(), ExprKind::Mul);
  EXPECT_THROW(eval(unfolded, env), EvalError);
  EXPECT_THROW(eval(Expr(INT64_MAX) + Expr(1), env), EvalError);
  EXPECT_THROW(Expr::floordiv(Expr::var("x"), 0), EvalError);
  // The extremes fold without overflow.
  EXPECT_EQ(Expr::mod(Expr(INT64_MIN), 5), Expr(2));
  EXPECT_EQ(Expr::floordiv(Expr(INT64_MIN), 1), Expr(INT64_MIN));
}

TEST(Expr, SymbolsAreCollectedSortedAndUnique) {
  Expr e = Expr::var("b") * Expr::var("a") + Expr::var("b");
  auto s = e.symbols();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(e.mentions(intern_symbol("a")));
  EXPECT_FALSE(e.mentions(intern_symbol("zzz_not_used")));
}

// substitute replaces a variable (or any subexpression) everywhere, through every operator, and
// the rebuilt expression folds constants as building it would.
TEST(Expr, SubstituteReplacesEverywhereAndFolds) {
  const Expr i = Expr::var("i"), n = Expr::var("n");
  const Expr e = Expr::min(Expr::floordiv(i * Expr(128) + n, 4), Expr::mod(i, 3)) + i;
  const Expr at0 = substitute(e, i, Expr(0));
  EXPECT_FALSE(at0.mentions(intern_symbol("i")));
  Env env;
  env.set("n", 40);
  EXPECT_EQ(eval(at0, env), 0);  // min(40 // 4, 0) + 0
  env.set("i", 5);
  EXPECT_EQ(eval(substitute(e, i, Expr(5)), env), eval(e, env));
  EXPECT_EQ(substitute(i * Expr(128), i, Expr(2)), Expr(256));
  EXPECT_EQ(substitute(e, Expr::var("unused"), Expr(7)), e);
  // A whole subexpression, not only a variable.
  EXPECT_EQ(substitute(Expr::floordiv(n, 128) + Expr(1), Expr::floordiv(n, 128), i), i + Expr(1));
}

}  // namespace
}  // namespace ncv
