// The bounds on a kernel's cached softmax statistics (ErrorBound::row_max, recip_sum;
// ERROR_BOUNDS.md §4 "The cached softmax statistics"): a computation rounding as attention_cte
// does (bf16 q and k, fp32 scores, max, exp, sum and reciprocal) stays within them on every hard
// distribution, with and without sinks and a mask; the same statistics off by what a bug would
// do (the max cached as a bf16 value, the sum missing its last key) leave the all-fp32 ones; the
// oracle's own statistics are within FastStatBounds of the exact oracle's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/numerics/dtype.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"

namespace ncv::oracle {
namespace {

AttentionSpec stats_spec(bool causal, bool sink) {
  AttentionSpec s;
  s.heads = 2;
  s.kv_heads = 1;
  s.seqlen_q = s.seqlen_kv = 64;
  s.d_head = 16;
  s.scale = 0.125;
  if (causal) s.mask.kind = MaskKind::causal;
  if (sink) s.sink = {18.5, -3.0};
  return s;
}

float bf16(double x) {
  return decode_to_float(DType::bf16, encode_from_float(DType::bf16, static_cast<float>(x)));
}

// Per row (b, h, i): the max m^ and 1 / l^ as attention_cte computes them (q and k rounded to
// bf16 when `bf16_operands`, fp32 scores, max, exp, sum and reciprocal), and the bugs'.
struct Stats {
  std::vector<double> max, recip, max_bf16, recip_short, last_share;
};
Stats kernel_stats(const AttentionSpec& s, const AttentionInputs& in, bool bf16_operands) {
  Stats st;
  std::vector<int64_t> keys;
  const auto op = [&](double x) { return bf16_operands ? bf16(x) : static_cast<float>(x); };
  for (int64_t h = 0; h < s.heads; ++h) {
    for (int64_t i = 0; i < s.seqlen_q; ++i) {
      s.visible_keys(0, i, keys);
      std::vector<float> sc;
      for (int64_t j : keys) {
        float acc = 0;
        for (int64_t c = 0; c < s.d_head; ++c) {
          acc += op(in.q[static_cast<size_t>(s.q_index(0, h, i, c))]) *
                 op(in.k[static_cast<size_t>(s.kv_index(0, s.kv_head_of(h), j, c))]);
        }
        sc.push_back(acc * static_cast<float>(s.scale));
      }
      float m = *std::max_element(sc.begin(), sc.end());
      const bool sink = !s.sink.empty();
      const float sk = sink ? static_cast<float>(s.sink[static_cast<size_t>(h)]) : 0.0f;
      if (sink) m = std::max(m, sk);
      float l = sink ? std::exp(sk - m) : 0.0f, l_short = l, last = 0;
      for (size_t t = 0; t < sc.size(); ++t) {
        const float p = std::exp(sc[t] - m);
        l += p;
        if (t + 1 < sc.size()) l_short += p;
        last = p;
      }
      st.max.push_back(m);
      st.recip.push_back(1.0f / l);
      st.max_bf16.push_back(bf16(m));
      st.recip_short.push_back(1.0f / l_short);
      st.last_share.push_back(last / l);
    }
  }
  return st;
}

// Within the bounds under the bf16-operand contract and the all-fp32 one; under all-fp32 (where
// the a-priori score error is ~1e-6 relative, not bf16's 0.4% of sum |q k| that would hide a bf16
// max) the max cached as a bf16 value is caught wherever bf16 moves it, and the sum without its
// last key (99%) wherever that key holds more than 1e-4 of it.
TEST(CachedSoftmaxBound, AttentionCteStatisticsWithinAndBugsOutside) {
  int64_t rows = 0, max_exposing = 0, max_caught = 0, sum_exposing = 0, sum_caught = 0;
  double worst = 0;
  for (bool masked : {false, true}) {
    for (Distribution dist : gate_distributions()) {
      const AttentionSpec s = stats_spec(masked, masked);
      const AttentionInputs in = generate_inputs(s, dist, 7);
      const OracleOutput ex = exact_attention(s, in);
      for (bool bf16_operands : {true, false}) {
        const PrecisionContract ct = bf16_operands ? PrecisionContract::bf16_matmul_fp32_accum()
                                                   : PrecisionContract::all_fp32();
        const ErrorBound eb = error_bound(ct, s, in, ex);
        const Stats st = kernel_stats(s, in, bf16_operands);
        ASSERT_EQ(eb.row_max.size(), st.max.size());
        for (size_t r = 0; r < st.max.size(); ++r) {
          const double m = ex.row_max[r], inv = 1 / ex.row_sum[r];
          ASSERT_TRUE(std::isfinite(eb.row_max[r]) && std::isfinite(eb.recip_sum[r]));
          EXPECT_LE(std::fabs(st.max[r] - m), eb.row_max[r]) << distribution_name(dist) << r;
          EXPECT_LE(std::fabs(st.recip[r] - inv), eb.recip_sum[r]) << distribution_name(dist) << r;
          worst = std::max({worst, std::fabs(st.max[r] - m) / eb.row_max[r],
                            std::fabs(st.recip[r] - inv) / eb.recip_sum[r]});
          ++rows;
          if (bf16_operands) continue;
          if (st.max_bf16[r] != st.max[r]) {
            ++max_exposing;
            max_caught += std::fabs(st.max_bf16[r] - m) > eb.row_max[r] ? 1 : 0;
          }
          if (st.last_share[r] > 1e-4) {
            ++sum_exposing;
            sum_caught += std::fabs(st.recip_short[r] - inv) > eb.recip_sum[r] ? 1 : 0;
          }
        }
      }
    }
  }
  std::printf(
      "cached statistics: %lld rows, worst ratio %.3g; bf16 max caught %lld/%lld, short "
      "sum caught %lld/%lld\n",
      static_cast<long long>(rows), worst, static_cast<long long>(max_caught),
      static_cast<long long>(max_exposing), static_cast<long long>(sum_caught),
      static_cast<long long>(sum_exposing));
  EXPECT_GT(max_exposing, rows / 8);
  EXPECT_GT(sum_exposing, rows / 8);
  EXPECT_GE(max_caught, max_exposing * 9 / 10);
  EXPECT_GE(sum_caught, sum_exposing * 99 / 100);
}

TEST(CachedSoftmaxBound, FastOracleStatisticsWithinTheirBounds) {
  for (bool masked : {false, true}) {
    for (Distribution dist : gate_distributions()) {
      const AttentionSpec s = stats_spec(masked, masked);
      const AttentionInputs in = generate_inputs(s, dist, 5);
      const OracleOutput ex = exact_attention(s, in);
      std::vector<double> bound;
      FastStatBounds fb;
      const OracleOutput fast = fast_attention_with_bound(s, in, bound, nullptr, &fb);
      ASSERT_EQ(fb.row_max.size(), ex.row_max.size());
      for (size_t r = 0; r < ex.row_max.size(); ++r) {
        const double inv = 1 / ex.row_sum[r];
        EXPECT_LE(std::fabs(fast.row_max[r] - ex.row_max[r]), fb.row_max[r])
            << distribution_name(dist);
        EXPECT_LE(std::fabs(1 / fast.row_sum[r] - inv), fb.recip_sum[r]) << distribution_name(dist);
        EXPECT_LT(fb.row_max[r], 1e-9 * (1 + std::fabs(ex.row_max[r]))) << distribution_name(dist);
        EXPECT_LT(fb.recip_sum[r], 1e-9 * inv) << distribution_name(dist);
      }
    }
  }
}

}  // namespace
}  // namespace ncv::oracle
