// The bug-exposing input distributions (oracle/README.md "Inputs that expose bugs") have the
// property each one claims, at several shapes and masks, are deterministic by seed, exact in the
// input dtype and finite; the gate order lists every distribution once, bug-exposing first.
#include "oracle/input_distributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "model/numerics/dtype.h"

namespace ncv::oracle {
namespace {

AttentionSpec sd_spec(int64_t seqlen, int64_t d, bool causal, DType t = DType::fp32) {
  AttentionSpec s;
  s.seqlen_q = s.seqlen_kv = seqlen;
  s.d_head = d;
  s.scale = 0.125;
  if (causal) s.mask.kind = MaskKind::causal;
  s.input_dtype = s.output_dtype = t;
  return s;
}

// scale * q_i . k_j for batch 0, head 0, exactly as the inputs hold them.
double logit(const AttentionSpec& s, const AttentionInputs& in, int64_t i, int64_t j) {
  double acc = 0;
  for (int64_t c = 0; c < s.d_head; ++c) {
    acc += in.q[static_cast<size_t>(s.q_index(0, 0, i, c))] *
           in.k[static_cast<size_t>(s.kv_index(0, 0, j, c))];
  }
  return s.scale * acc;
}

const double kExpOverflow = std::log(static_cast<double>(dtype_max_finite(DType::fp32)));

const Distribution kNew[] = {Distribution::peaked, Distribution::overflow_logits,
                             Distribution::rowmax_across_tiles, Distribution::masked_dominant,
                             Distribution::signed_values};

TEST(InputDistributions, PeakedRowsPutFarMoreThanUniformWeightOnTheirTopKey) {
  for (int64_t seqlen : {128, 384}) {
    for (int64_t d : {1, 64, 128}) {
      const AttentionSpec s = sd_spec(seqlen, d, false);
      const AttentionInputs in = generate_inputs(s, Distribution::peaked, 3);
      for (int64_t i = 0; i < seqlen; ++i) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < seqlen; ++j) m = std::max(m, logit(s, in, i, j));
        for (int64_t j = 0; j < seqlen; ++j) sum += std::exp(logit(s, in, i, j) - m);
        // Uniform weight is 1 / seqlen; the top key holds at least 5 times that (~0.07 of the row
        // at 128 keys: the weight falls off exponentially over the keys nearest the top).
        EXPECT_GT(1.0 / sum, 5.0 / static_cast<double>(seqlen))
            << "row " << i << " seqlen " << seqlen << " d " << d;
      }
    }
  }
}

TEST(InputDistributions, OverflowLogitsOverflowExpOfEveryRowMax) {
  for (bool causal : {false, true}) {
    for (int64_t d : {1, 2, 64}) {
      for (DType t : {DType::fp32, DType::bf16}) {
        const AttentionSpec s = sd_spec(256, d, causal, t);
        const AttentionInputs in = generate_inputs(s, Distribution::overflow_logits, 5);
        for (int64_t i = 0; i < 256; ++i) {
          const int64_t last = causal ? i : 255;
          double m = -INFINITY;
          for (int64_t j = 0; j <= last; ++j) m = std::max(m, logit(s, in, i, j));
          EXPECT_GT(m, kExpOverflow) << "row " << i << " d " << d << " causal " << causal;
          EXPECT_TRUE(std::isinf(std::exp(static_cast<float>(m))));
        }
      }
    }
  }
}

TEST(InputDistributions, LargeLogitsDoNotOverflowEveryRowWhichIsWhyOverflowLogitsExists) {
  const AttentionSpec s = sd_spec(128, 1, true);
  const AttentionInputs in = generate_inputs(s, Distribution::large_logits, 5);
  int64_t below = 0;
  for (int64_t i = 0; i < 128; ++i) {
    double m = -INFINITY;
    for (int64_t j = 0; j <= i; ++j) m = std::max(m, logit(s, in, i, j));
    below += m <= kExpOverflow;
  }
  EXPECT_GT(below, 0);
}

TEST(InputDistributions, RowmaxAcrossTilesPutsEachRowMaxInItsTargetTileFarAboveTheOthers) {
  for (bool causal : {false, true}) {
    for (int64_t d : {1, 4, 64}) {  // 1 and 4: fewer dims than the 8 tiles of 1024 keys
      const int64_t seqlen = 1024;
      const AttentionSpec s = sd_spec(seqlen, d, causal);
      const AttentionInputs in = generate_inputs(s, Distribution::rowmax_across_tiles, 9);
      std::set<int64_t> targets;
      for (int64_t i = 0; i < seqlen; ++i) {
        const int64_t target = rowmax_target_tile(s, 0, i), last = causal ? i : seqlen - 1;
        ASSERT_GE(target, 0);
        targets.insert(target);
        double in_target = -INFINITY, elsewhere = -INFINITY;
        for (int64_t j = 0; j <= last; ++j) {
          double& m = j / kKeyTile == target ? in_target : elsewhere;
          m = std::max(m, logit(s, in, i, j));
        }
        EXPECT_GT(in_target, elsewhere + kExpOverflow)
            << "row " << i << " target " << target << " d " << d << " causal " << causal;
      }
      EXPECT_GE(targets.size(), causal || d < 8 ? 2u : 8u) << "d " << d;
    }
  }
  // Without a mask and with enough head dims the target is row mod tiles.
  const AttentionSpec s = sd_spec(512, 64, false);
  for (int64_t i = 0; i < 512; ++i) EXPECT_EQ(rowmax_target_tile(s, 0, i), i % 4);
}

TEST(InputDistributions, MaskedDominantPutsEachCausalRowMaxOnAMaskedKey) {
  for (int64_t seqlen : {128, 384, 1024}) {
    for (int64_t d : {3, 5, 64}) {
      const AttentionSpec s = sd_spec(seqlen, d, true);
      const AttentionInputs in = generate_inputs(s, Distribution::masked_dominant, 2);
      for (int64_t i = 0; i < seqlen; ++i) {
        double visible = -INFINITY, masked = -INFINITY;
        for (int64_t j = 0; j < seqlen; ++j) {
          double& m = j <= i ? visible : masked;
          m = std::max(m, logit(s, in, i, j));
        }
        // Every visible logit at or below -40 (plus noise): a fill of -30 would dominate.
        EXPECT_LT(visible, -39.5) << "row " << i << " d " << d;
        EXPECT_GT(visible, -40.5) << "row " << i << " d " << d;
        // With d >= 5 each key has its own logit; d = 3 codes 128 levels, so rows of the last
        // level tie with their masked keys.
        const bool last_level = d < 5 && i * 128 / seqlen == 127;
        if (i + 1 < seqlen && !last_level) {
          EXPECT_GT(masked, visible) << "row " << i << " d " << d << " seqlen " << seqlen;
        }
      }
    }
  }
}

TEST(InputDistributions, SignedValuesHaveColumnMeansOfBothSigns) {
  const AttentionSpec s = sd_spec(256, 32, false);
  const AttentionInputs in = generate_inputs(s, Distribution::signed_values, 4);
  for (const std::vector<double>* x : {&in.q, &in.k, &in.v}) {
    int positive = 0, negative = 0;
    for (int64_t c = 0; c < 32; ++c) {
      double sum = 0;
      for (int64_t r = 0; r < 256; ++r) sum += (*x)[static_cast<size_t>(r * 32 + c)];
      const double mean = sum / 256;
      EXPECT_GT(std::fabs(mean), 0.3) << "column " << c;
      (mean > 0 ? positive : negative)++;
    }
    EXPECT_GT(positive, 0);
    EXPECT_GT(negative, 0);
  }
}

TEST(InputDistributions, NewDistributionsAreDeterministicExactAndFinite) {
  for (Distribution dist : kNew) {
    for (DType t : {DType::fp32, DType::bf16, DType::fp16}) {
      const AttentionSpec s = sd_spec(256, 16, true, t);
      const AttentionInputs a = generate_inputs(s, dist, 11), b = generate_inputs(s, dist, 11),
                            c = generate_inputs(s, dist, 12);
      EXPECT_EQ(a.q, b.q) << distribution_name(dist);
      EXPECT_EQ(a.k, b.k) << distribution_name(dist);
      EXPECT_EQ(a.v, b.v) << distribution_name(dist);
      EXPECT_TRUE(a.q != c.q || a.k != c.k || a.v != c.v) << distribution_name(dist);
      for (const std::vector<double>* x : {&a.q, &a.k, &a.v}) {
        for (double e : *x) {
          ASSERT_TRUE(std::isfinite(e)) << distribution_name(dist);
          ASSERT_EQ(static_cast<double>(quantize(t, static_cast<float>(e))), e)
              << distribution_name(dist) << " " << dtype_name(t);
        }
      }
    }
  }
}

TEST(InputDistributions, GateOrderListsEveryDistributionOnceBugExposingFirst) {
  const auto& gate = gate_distributions();
  const std::set<Distribution> all(all_distributions().begin(), all_distributions().end());
  EXPECT_EQ(std::set<Distribution>(gate.begin(), gate.end()), all);
  EXPECT_EQ(gate.size(), all.size());
  EXPECT_EQ(all_distributions().size(), all.size());
  const std::vector<Distribution> first(gate.begin(), gate.begin() + 6);
  EXPECT_EQ(first, (std::vector<Distribution>{
                       Distribution::peaked, Distribution::overflow_logits,
                       Distribution::large_logits, Distribution::rowmax_across_tiles,
                       Distribution::masked_dominant, Distribution::signed_values}));
  EXPECT_EQ(gate.back(), Distribution::uniform_positive);
}

}  // namespace
}  // namespace ncv::oracle
