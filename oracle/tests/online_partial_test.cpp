// PrecisionContract::online_partial_dtype: a plain C++ two-section online softmax that rounds
// where the NKI pipelined_attention kernel rounds (section 0's unnormalised output stored in bf16
// and reloaded, then rescaled by exp(m0 - m1) and merged; the running sum rescaled by the same
// factor; the merged numerator rounded to bf16 before the fp32 multiply by 1 / l) stays within
// both bounds with the field set, and leaves the case bound without it (the field is needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "model/numerics/fp32_exp.h"
#include "oracle/case_bound.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/input_distributions.h"
#include "oracle/tests/worst_ratio.h"

namespace ncv::oracle {
namespace {

float bf(float x) {
  return quantize(DType::bf16, x);
}

// Per row: bf16 q, k, v; s = fl(q.k) * scale (fp32, fma in key order); per section of S / 2
// keys: the running max m (kept negated in the kernel: the same values), p = bf16(exp(s - m))
// with the row sum of the fp32 exp; section 0: o0 = sum p v (fp32), l0, o0 stored as bf16;
// section 1: sf = exp(m0 - m1), l = l0 * sf + l1, o = bf16(bf16(o0) * sf + o1) (one fp32 add);
// out = bf16(o * fl(1 / l)). `partial_rounded` false keeps o0 and o in fp32 (a flash-style
// merge: to show the field is needed; the kernel itself rounds both).
std::vector<double> pipelined_attention(const AttentionSpec& spec, const AttentionInputs& in,
                                        bool partial_rounded) {
  const int64_t S = spec.seqlen_kv, d = spec.d_head, half = S / 2;
  const float scale = static_cast<float>(spec.scale);
  std::vector<double> out(static_cast<size_t>(spec.q_elements()));
  for (int64_t i = 0; i < spec.seqlen_q; ++i) {
    std::vector<float> s(static_cast<size_t>(S));
    for (int64_t j = 0; j < S; ++j) {
      float acc = 0.0f;
      for (int64_t c = 0; c < d; ++c) {
        acc = std::fma(bf(static_cast<float>(in.q[spec.q_index(0, 0, i, c)])),
                       bf(static_cast<float>(in.k[spec.kv_index(0, 0, j, c)])), acc);
      }
      s[static_cast<size_t>(j)] = acc * scale;
    }
    auto section = [&](int64_t j0, float m, std::vector<float>& o, float& l) {
      l = 0.0f;
      for (int64_t j = j0; j < j0 + half; ++j) {
        const float e = exp_f32(s[static_cast<size_t>(j)] + (-m));
        l += e;
        for (int64_t c = 0; c < d; ++c) {
          o[c] = std::fma(bf(e), bf(static_cast<float>(in.v[spec.kv_index(0, 0, j, c)])), o[c]);
        }
      }
    };
    const float m0 = *std::max_element(s.begin(), s.begin() + half);
    const float m1 = std::max(m0, *std::max_element(s.begin() + half, s.end()));
    std::vector<float> o0(static_cast<size_t>(d), 0.0f), o1(static_cast<size_t>(d), 0.0f);
    float l0 = 0, l1 = 0;
    section(0, m0, o0, l0);
    section(half, m1, o1, l1);
    const float sf = exp_f32(m0 + (-m1));
    const float l = l0 * sf + l1;
    const float recip = 1.0f / l;
    for (int64_t c = 0; c < d; ++c) {
      const float partial = partial_rounded ? bf(o0[c]) : o0[c];
      const float sum = partial * sf + o1[c];
      const float merged = partial_rounded ? bf(sum) : sum;
      out[static_cast<size_t>(spec.q_index(0, 0, i, c))] = bf(merged * recip);
    }
  }
  return out;
}

PrecisionContract pipelined_contract(int64_t section, DType partial) {
  PrecisionContract ct = PrecisionContract::bf16_matmul_fp32_accum();
  ct.online_tile = section;
  ct.online_partial_dtype = partial;
  return ct;
}

Worst run_cases(DType contract_partial, bool partial_rounded,
                std::initializer_list<int64_t> seqlens = {128, 256}) {
  Worst w;
  for (int64_t S : seqlens) {
    for (Distribution dist : gate_distributions()) {
      AttentionSpec spec;
      spec.seqlen_q = spec.seqlen_kv = S;
      spec.d_head = 16;
      spec.scale = 0.125;
      spec.input_dtype = spec.output_dtype = DType::bf16;
      const AttentionInputs in = generate_inputs(spec, dist, 1);
      const OracleOutput ex = exact_attention(spec, in);
      const std::vector<double> got = pipelined_attention(spec, in, partial_rounded);
      const PrecisionContract ct = pipelined_contract(S / 2, contract_partial);
      const CaseBound cb = case_error_bound(ct, spec, in, ex.out);
      const ErrorBound ap = error_bound(ct, spec, in, ex);
      fold_worst(got, ex.out, cb, ap, w);
    }
  }
  return w;
}

TEST(OnlinePartialBound, PipelinedNumericsWithinBothBoundsWithTheField) {
  const Worst w = run_cases(DType::bf16, true);
  EXPECT_LE(w.case_ratio, 1.0);
  EXPECT_LE(w.apriori_ratio, 1.0);
}

TEST(OnlinePartialBound, CaseBoundWithoutTheFieldDoesNotCoverIt) {
  // The same kernel with the partial kept in fp32 is within the fp32-partial bound ...
  // (at seqlen 128 only: PipelinedNumericsWithinBothBoundsWithTheField runs 256 too)
  EXPECT_LE(run_cases(DType::fp32, false, {128}).case_ratio, 1.0);
  // ... and the rounding of the partial to bf16 leaves it.
  EXPECT_GT(run_cases(DType::fp32, true, {128}).case_ratio, 1.0);
}

TEST(OnlinePartialBound, ContractNeedsOnlineTilesForAPartialDtype) {
  PrecisionContract ct = pipelined_contract(128, DType::bf16);
  EXPECT_NO_THROW(ct.validate());
  ct.online_tile = 0;
  EXPECT_THROW(ct.validate(), std::invalid_argument);
  ct = pipelined_contract(128, DType::int32);
  EXPECT_THROW(ct.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace ncv::oracle
