// PrecisionContract::online_tile: a plain C++ online softmax that rounds where the NKI flash_fwd
// kernel rounds (P at each tile's running max, o rescaled per tile, the denominator carried as a
// log-sum-exp) stays within both bounds with the field set, and leaves the case bound without it
// (the field is needed, not decoration). Its log-sum-exp stays within the lse bound
// (ERROR_BOUNDS.md §4 "The log-sum-exp output") and an lse without the max does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "model/numerics/fp32_exp.h"
#include "oracle/case_bound.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/input_distributions.h"
#include "oracle/tests/worst_ratio.h"

namespace ncv::oracle {
namespace {

float bf(float x) {
  return quantize(DType::bf16, x);
}

// flash_fwd's numerics for every row: q = bf16(bf16(q) * scale), bf16 k and v, fp32 scores
// (fma in order), per tile of `tile` keys: m = max(m_prev, tile max), alpha = exp(m_prev - m),
// p = bf16(exp(s - m)) with the row sum from the fp32 exp, o = o * alpha + P V (fp32), lse = m +
// log(exp(lse - m) + sum); out = bf16(o * exp(m - lse)). Causal when `causal`. With `lse_out`,
// also the final lse per row.
std::vector<double> online_attention(const AttentionSpec& spec, const AttentionInputs& in,
                                     int64_t tile, bool causal,
                                     std::vector<double>* lse_out = nullptr) {
  const int64_t S = spec.seqlen_kv, d = spec.d_head;
  const float scale = static_cast<float>(spec.scale);
  const float lowest = std::numeric_limits<float>::lowest();
  std::vector<double> out(static_cast<size_t>(spec.q_elements()));
  for (int64_t i = 0; i < spec.seqlen_q; ++i) {
    std::vector<float> q(static_cast<size_t>(d)), o(static_cast<size_t>(d), 0.0f);
    for (int64_t c = 0; c < d; ++c)
      q[c] = bf(bf(static_cast<float>(in.q[spec.q_index(0, 0, i, c)])) * scale);
    float m = lowest, lse = lowest;
    for (int64_t j0 = 0; j0 < S; j0 += tile) {
      const int64_t j1 = std::min(S, j0 + tile);
      if (causal && j0 > i) break;  // the kernel skips tiles right of the diagonal
      std::vector<float> s(static_cast<size_t>(j1 - j0));
      float tmax = lowest;
      for (int64_t j = j0; j < j1; ++j) {
        float acc = 0.0f;
        for (int64_t c = 0; c < d; ++c)
          acc = std::fma(q[c], bf(static_cast<float>(in.k[spec.kv_index(0, 0, j, c)])), acc);
        s[j - j0] = causal && j > i ? lowest : acc;
        tmax = std::max(tmax, s[j - j0]);
      }
      const float m_prev = m;
      m = std::max(m_prev, tmax);
      const float alpha = exp_f32(-m + m_prev);
      for (float& x : o) x = x * alpha;
      float sum = 0.0f;
      std::vector<float> pv(static_cast<size_t>(d), 0.0f);
      for (int64_t j = j0; j < j1; ++j) {
        const float e = exp_f32(s[j - j0] + (-m));
        sum += e;
        for (int64_t c = 0; c < d; ++c)
          pv[c] = std::fma(bf(e), bf(static_cast<float>(in.v[spec.kv_index(0, 0, j, c)])), pv[c]);
      }
      for (int64_t c = 0; c < d; ++c) o[c] = o[c] + pv[c];
      lse = m + std::log(exp_f32(-m + lse) + sum);
    }
    if (lse_out != nullptr) lse_out->push_back(lse);
    const float f = exp_f32(-lse + m);
    for (int64_t c = 0; c < d; ++c) out[spec.q_index(0, 0, i, c)] = bf(o[c] * f);
  }
  return out;
}

PrecisionContract flash_contract(int64_t online_tile) {
  PrecisionContract ct = PrecisionContract::bf16_matmul_fp32_accum();
  ct.scale_folded_into_q = true;
  ct.q_rounded_before_scale = true;
  ct.online_tile = online_tile;
  return ct;
}

Worst run_cases(int64_t contract_tile, bool causal) {
  Worst w;
  const int64_t tile = 32;
  for (int64_t S : {96, 160}) {
    for (Distribution dist : gate_distributions()) {
      for (uint64_t seed = 1; seed <= 1; ++seed) {
        AttentionSpec spec;
        spec.seqlen_q = spec.seqlen_kv = S;
        spec.d_head = 16;
        spec.scale = static_cast<double>(static_cast<float>(1 / std::sqrt(128.0)));
        if (causal) spec.mask.kind = MaskKind::causal;
        const AttentionInputs in = generate_inputs(spec, dist, seed);
        const OracleOutput ex = exact_attention(spec, in);
        const std::vector<double> got = online_attention(spec, in, tile, causal);
        const PrecisionContract ct = flash_contract(contract_tile);
        const CaseBound cb = case_error_bound(ct, spec, in, ex.out);
        const ErrorBound ap = error_bound(ct, spec, in, ex);
        fold_worst(got, ex.out, cb, ap, w);
      }
    }
  }
  return w;
}

TEST(OnlineSoftmaxBound, FlashNumericsWithinBothBoundsWithTheField) {
  for (bool causal : {false, true}) {
    const Worst w = run_cases(32, causal);
    EXPECT_LE(w.case_ratio, 1.0) << "causal=" << causal;
    EXPECT_LE(w.apriori_ratio, 1.0) << "causal=" << causal;
  }
}

AttentionSpec flash_spec(int64_t S, bool causal) {
  AttentionSpec spec;
  spec.seqlen_q = spec.seqlen_kv = S;
  spec.d_head = 16;
  spec.scale = static_cast<double>(static_cast<float>(1 / std::sqrt(128.0)));
  if (causal) spec.mask.kind = MaskKind::causal;
  return spec;
}

// The kernel's lse (m + log of the running sum) within ErrorBound::lse of the exact lse on every
// hard distribution; the same lse without the max (log of the sum alone, the kernel storing
// l - m) over it on every row whose max is not ~0; the bound small (tight enough to matter).
TEST(OnlineSoftmaxBound, LseWithinItsBoundAndWithoutTheMaxOutside) {
  double worst = 0, largest_bound = 0;
  int64_t rows = 0, caught = 0, exposing = 0;
  for (bool causal : {false, true}) {
    for (int64_t S : {96, 160}) {
      for (Distribution dist : gate_distributions()) {
        const AttentionSpec spec = flash_spec(S, causal);
        const AttentionInputs in = generate_inputs(spec, dist, 3);
        const OracleOutput ex = exact_attention(spec, in);
        std::vector<double> lse;
        online_attention(spec, in, 32, causal, &lse);
        const ErrorBound ap = error_bound(flash_contract(32), spec, in, ex);
        ASSERT_EQ(ap.lse.size(), lse.size());
        for (size_t r = 0; r < lse.size(); ++r) {
          ++rows;
          ASSERT_TRUE(std::isfinite(ap.lse[r])) << distribution_name(dist) << " row " << r;
          worst = std::max(worst, std::fabs(lse[r] - ex.lse[r]) / ap.lse[r]);
          largest_bound = std::max(largest_bound, ap.lse[r]);
          if (std::fabs(ex.row_max[r]) > 4 * ap.lse[r]) {
            ++exposing;
            const double no_max = lse[r] - ex.row_max[r];
            caught += std::fabs(no_max - ex.lse[r]) > ap.lse[r] ? 1 : 0;
          }
        }
      }
    }
  }
  std::printf("lse: %lld rows, worst |err| / bound %.3g, largest bound %.3g\n",
              static_cast<long long>(rows), worst, largest_bound);
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(worst, 0.0);
  EXPECT_GT(exposing, rows / 2);
  EXPECT_EQ(caught, exposing);
}

// The fast oracle's lse within its own lse bound of the exact one; the bound far below fp32's.
TEST(OnlineSoftmaxBound, FastOracleLseWithinItsBound) {
  for (Distribution dist : gate_distributions()) {
    const AttentionSpec spec = flash_spec(160, true);
    const AttentionInputs in = generate_inputs(spec, dist, 5);
    const OracleOutput ex = exact_attention(spec, in);
    std::vector<double> bound, lse_bound;
    const OracleOutput fast = fast_attention_with_bound(spec, in, bound, &lse_bound);
    ASSERT_EQ(lse_bound.size(), ex.lse.size());
    for (size_t r = 0; r < ex.lse.size(); ++r) {
      EXPECT_LE(std::fabs(fast.lse[r] - ex.lse[r]), lse_bound[r]) << distribution_name(dist);
      EXPECT_LT(lse_bound[r], 1e-9 * (1 + std::fabs(ex.lse[r]))) << distribution_name(dist);
    }
  }
}

TEST(OnlineSoftmaxBound, TwoPassCaseBoundDoesNotCoverIt) {
  EXPECT_GT(run_cases(0, false).case_ratio, 1.0);
}

TEST(OnlineSoftmaxBound, ContractRejectsOnlineWithoutDeferredFp32Normalisation) {
  PrecisionContract ct = flash_contract(128);
  EXPECT_NO_THROW(ct.validate());
  ct.norm = Normalisation::before_pv;
  EXPECT_THROW(ct.validate(), std::invalid_argument);
  ct = flash_contract(-1);
  EXPECT_THROW(ct.validate(), std::invalid_argument);
}

TEST(OnlineSoftmaxBound, TermsGrowWithTilesAndScoresAndVanishWithoutTheField) {
  const PrecisionContract ct = flash_contract(512);
  const OnlineTerms one = online_softmax_terms(ct, 512, 512, 10);
  const OnlineTerms four = online_softmax_terms(ct, 2048, 2048, 10);
  const OnlineTerms big = online_softmax_terms(ct, 2048, 2048, 100);
  EXPECT_EQ(one.tiles, 1);
  EXPECT_EQ(four.tiles, 4);
  EXPECT_LT(one.numer, four.numer);
  EXPECT_LT(four.denom, big.denom);
  const OnlineTerms none = online_softmax_terms(flash_contract(0), 2048, 2048, 100);
  EXPECT_EQ(none.numer, 0);
  EXPECT_EQ(none.denom, 0);
}

}  // namespace
}  // namespace ncv::oracle
