// The Z3 domain is the interpreter's domain: the same points pass check_params and satisfy
// param_domain (otherwise proofs could hold vacuously, or counterexamples fail to replay).
#include "solver/domain.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv::solver {
namespace {

bool interpreter_accepts(const Program& p, const ParamValues& params) {
  try {
    check_params(p, params);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

TEST(Domain, AgreesWithCheckParamsOnEveryPointOfASmallDomain) {
  Builder b("relations");
  Expr h = b.param("h", 1, 12), kv = b.param("kv", 0, 6, 2), s = b.param("s", 1, 9);
  b.require(RelationKind::Divides, kv, h);
  b.require(RelationKind::LE, s, h + 1);
  b.require(RelationKind::NE, Expr::mod(s, 3), 2);
  auto x = b.input("x", DType::fp32, {128, 1});
  auto y = b.output("y", DType::fp32, {128, 1});
  auto t = b.sbuf("t", DType::fp32, {128, 1});
  b.dma_copy(t(), x());
  b.dma_copy(y(), t());
  const Program p = b.finish();
  z3::context ctx;
  const SymbolTerms symbols = declare_params(ctx, p);
  const z3::expr domain = param_domain(ctx, p, symbols);
  z3::solver solver(ctx);
  solver.add(domain);
  int accepted = 0;
  for (int64_t hv = -1; hv <= 13; ++hv) {
    for (int64_t kvv = -1; kvv <= 7; ++kvv) {
      for (int64_t sv = 0; sv <= 10; ++sv) {
        solver.push();
        solver.add(symbols.at(intern_symbol("h")) == ctx.int_val(hv));
        solver.add(symbols.at(intern_symbol("kv")) == ctx.int_val(kvv));
        solver.add(symbols.at(intern_symbol("s")) == ctx.int_val(sv));
        solver.add(symbols.at(intern_symbol(kProgramIdParam)) == 0);
        const bool in = interpreter_accepts(p, {{"h", hv}, {"kv", kvv}, {"s", sv}});
        accepted += in;
        ASSERT_EQ(solver.check() == z3::sat, in) << "h=" << hv << " kv=" << kvv << " s=" << sv;
        solver.pop();
      }
    }
  }
  EXPECT_GT(accepted, 10);
}

// Bounds proofs over an empty domain would hold vacuously: every registered kernel's domain has
// a point, and the interpreter accepts the point Z3 picks.
TEST(Domain, EveryRegisteredKernelHasAPointTheInterpreterAccepts) {
  for (const kernels::Variant& v : kernels::registry()) {
    const Program p = v.build(v.resolve({}));
    z3::context ctx;
    const SymbolTerms symbols = declare_params(ctx, p);
    z3::solver solver(ctx);
    solver.add(param_domain(ctx, p, symbols));
    ASSERT_EQ(solver.check(), z3::sat) << v.name;
    ParamValues params;
    for (const Param& prm : p.params) {
      params[prm.name] =
          solver.get_model().eval(symbols.at(intern_symbol(prm.name)), true).get_numeral_int64();
    }
    EXPECT_TRUE(interpreter_accepts(p, params)) << v.name;
  }
}

TEST(Domain, LoopVariablesTakeExactlyTheInterpretersValues) {
  Builder b("loops");
  Expr n = b.param("n", 1, 20);
  b.affine_range("j", 2, n, 3, [&](Expr) {
    auto t = b.sbuf("t", DType::fp32, {128, 1});
    b.memset(t(), 0.0f);
  });
  const Program p = b.finish();
  const Loop& loop = std::get<Loop>(p.body.back().node);
  z3::context ctx;
  SymbolTerms symbols = declare_params(ctx, p);
  z3::solver solver(ctx);
  solver.add(loop_iterations(ctx, {&loop}, symbols));
  for (int64_t nv = 1; nv <= 20; ++nv) {
    for (int64_t j = -2; j <= 22; ++j) {
      solver.push();
      solver.add(symbols.at(intern_symbol("n")) == ctx.int_val(nv) &&
                 symbols.at(intern_symbol("j")) == ctx.int_val(j));
      const bool runs = j >= 2 && j < nv && (j - 2) % 3 == 0;
      ASSERT_EQ(solver.check() == z3::sat, runs) << "n=" << nv << " j=" << j;
      solver.pop();
    }
  }
}

}  // namespace
}  // namespace ncv::solver
