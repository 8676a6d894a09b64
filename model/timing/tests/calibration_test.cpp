// The calibration fit on synthetic points: measurements made by the model itself under known
// constants are recovered (loss down a hundredfold) from the committed table, every fitted
// constant stays inside its plausible range and nothing else in the table moves.
#include "model/timing/calibration.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/ir/builder.h"

namespace ncv {
namespace {

// N/128 tiles: load, exp, store.
Program tiles() {
  Builder b("tiles");
  Expr N = b.param("N", 128, 4096, 128);
  auto x = b.input("x", DType::bf16, {N, 512});
  auto y = b.output("y", DType::bf16, {N, 512});
  b.affine_range("i", Expr::floordiv(N, 128), [&](Expr i) {
    auto t = b.sbuf("t", DType::bf16, {128, 512}, {.bufs = 2});
    b.dma_copy(t(), x({ds(i * 128, 128), all()}), 0);
    b.activation(t(), t(), {.func = ActFunc::exp});
    b.dma_copy(y({ds(i * 128, 128), all()}), t(), 1);
  });
  return b.finish();
}

// Points at several shapes whose "measurements" are the model's own predictions under `truth`.
std::vector<CalibrationPoint> points_made_by(const CostTable& truth) {
  std::vector<CalibrationPoint> pts;
  for (int64_t n : {128, 512, 2048}) {
    CalibrationPoint p;
    p.kernel = "tiles";
    p.params = {{"N", n}};
    p.program = tiles();
    RunOptions ro;
    ro.compute_values = false;
    RunResult r = run_program(p.program, p.params, {}, ro);
    EXPECT_FALSE(r.error);
    p.trace = std::move(r.trace);
    pts.push_back(std::move(p));
  }
  const std::vector<double> measured = predict(pts, truth);
  for (size_t i = 0; i < pts.size(); ++i) pts[i].measured_us = measured[i];
  return pts;
}

void expect_in_ranges(const CostTable& t) {
  for (const FittedConstant& k : kFittedConstants) {
    EXPECT_GE(t.*k.field, k.lo) << k.name;
    EXPECT_LE(t.*k.field, k.hi) << k.name;
  }
}

TEST(Calibration, RecoversConstantsInsideTheirRanges) {
  CostTable truth = cost_table_trn1();
  truth.dma_fixed_ns = 1400;
  truth.static_overhead_cycles = 60;
  const std::vector<CalibrationPoint> pts = points_made_by(truth);
  const CostTable start = cost_table_trn1();
  const double before = calibration_loss(pts, predict(pts, start));
  const CostTable fitted = fit_constants(pts, start);
  const double after = calibration_loss(pts, predict(pts, fitted));
  EXPECT_GT(before, 1e-3);
  EXPECT_LT(after, before / 100);
  expect_in_ranges(fitted);
  EXPECT_NEAR(fitted.dma_fixed_ns, 1400, 150);
  // Only the fitted constants move.
  EXPECT_EQ(fitted.dma_engine_bytes_per_ns, start.dma_engine_bytes_per_ns);
  EXPECT_EQ(fitted.min_ii_cycles, start.min_ii_cycles);
}

TEST(Calibration, LossIsSymmetricInTheRatio) {
  std::vector<CalibrationPoint> pts(1);
  pts[0].measured_us = 100;
  EXPECT_DOUBLE_EQ(calibration_loss(pts, {200}), calibration_loss(pts, {50}));
  EXPECT_DOUBLE_EQ(calibration_loss(pts, {100}), 0);
}

}  // namespace
}  // namespace ncv
