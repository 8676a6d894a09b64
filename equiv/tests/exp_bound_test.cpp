// The overflow obligation's term-level pattern (equiv/exp_bound.h): exp's argument a max minus a
// max over a superset. Accepted where it holds for every input (a score minus its row max, an
// online softmax's rescale, a running max kept negated as a min of negated maxes), refused where
// an input exists that makes the argument positive (a score of another row, a max added, not
// subtracted, a row max that misses the score).
#include "equiv/exp_bound.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "equiv/term.h"

namespace ncv::equiv {
namespace {

struct Rows {
  TermStore ts;
  std::vector<TermId> x;  // inputs x#0 .. x#7
  Rows() {
    const uint32_t slot = ts.input_slot("x");
    for (int i = 0; i < 8; ++i) x.push_back(ts.input(slot, i, DType::fp32));
  }
  // A tensor_reduce's max: a left fold from max's identity -inf.
  TermId row_max(int first, int count) {
    TermId m = ts.constant_f32(-std::numeric_limits<float>::infinity());
    for (int i = first; i < first + count; ++i) m = ts.alu(AluOp::max, m, x[i]);
    return m;
  }
  TermId neg(TermId t) { return ts.alu(AluOp::multiply, ts.constant_f32(-1.0f), t); }
};

TEST(NegatedMaxPattern, ScoreMinusItsRowMax) {
  Rows r;
  const TermId m = r.row_max(0, 4);
  NegatedMaxPattern p(r.ts);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(p.nonpositive(r.ts.alu(AluOp::subtract, r.x[i], m))) << i;    // x - max
    EXPECT_TRUE(p.nonpositive(r.ts.alu(AluOp::add, r.neg(m), r.x[i]))) << i;  // -max + x
    EXPECT_TRUE(p.nonpositive(r.ts.alu(AluOp::add, r.x[i], r.neg(m)))) << i;  // bias = -max
  }
  // A score of the next row, a max added, a row max that misses the score: not shown.
  for (int i = 4; i < 8; ++i) EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::subtract, r.x[i], m)));
  EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::add, r.x[0], m)));
  EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::subtract, r.x[0], r.row_max(1, 3))));
  EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::subtract, m, r.x[0])));  // max - x >= 0
  // Scaled: 2 * x - max is positive for x = max = 1; the pattern does not take scales.
  EXPECT_FALSE(p.nonpositive(
      r.ts.alu(AluOp::subtract, r.ts.alu(AluOp::multiply, r.ts.constant_f32(2.0f), r.x[0]), m)));
}

TEST(NegatedMaxPattern, OnlineRescaleAndNegatedRunningMax) {
  Rows r;
  const TermId m_old = r.row_max(0, 4);
  const TermId m_new = r.ts.alu(AluOp::max, m_old, r.row_max(4, 4));
  NegatedMaxPattern p(r.ts);
  EXPECT_TRUE(p.nonpositive(r.ts.alu(AluOp::subtract, m_old, m_new)));   // exp(m_old - m_new)
  EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::subtract, m_new, m_old)));  // the wrong way round
  // min(-max(tile 0), -max(tile 1)) = -max(both): every score of either tile is covered.
  const TermId neg_running = r.ts.alu(AluOp::min, r.neg(r.row_max(0, 4)), r.neg(r.row_max(4, 4)));
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(p.nonpositive(r.ts.alu(AluOp::add, r.x[i], neg_running)));
  // min(-max(tile 0), x[5]) is no negated max: x[5] is not negated.
  const TermId mixed = r.ts.alu(AluOp::min, r.neg(r.row_max(0, 4)), r.x[5]);
  EXPECT_FALSE(p.nonpositive(r.ts.alu(AluOp::add, r.x[0], mixed)));
}

}  // namespace
}  // namespace ncv::equiv
