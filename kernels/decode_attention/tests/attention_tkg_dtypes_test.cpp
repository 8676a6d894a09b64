// attention_tkg's contract at the dtypes of nki-library's own fp32 and fp8_kv test rows, which the
// registered kernel is not built with (contract-only values q_dtype fp32 / fp8_e4m3, kv_dtype
// fp32, out_dtype fp32): a plain C++ decode attention rounding where the library's
// attention_tkg.py rounds for that q dtype (io_type = q.dtype: exp written straight into io_type,
// the row sum and PV both of that P, fp32 PSUM, scores and softmax statistics; fp32 1 / sum times
// PV, rounded to the output's dtype) stays within both bounds of the contract; the same
// computation with the bug of a kernel that keeps its scores in io_type (fp8), or its P in bf16
// under fp32, leaves them; and the fp8 computation leaves the bf16-q contract (why the library's
// fp8 rows FAILed under it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "check/check.h"
#include "kernels/decode_attention/tests/attention_tkg_test_support.h"
#include "model/numerics/fp32_exp.h"
#include "oracle/case_bound.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {
namespace {

using tkg_test::shape;
using tkg_test::tkg;

// Every option at its default but the three dtypes (contract-only values: `resolve` would refuse
// them, as `check --contract-option` does not).
Options dtype_options(const std::string& q, const std::string& kv, const std::string& out) {
  Options o = tkg().resolve({});
  o["q_dtype"] = q;
  o["kv_dtype"] = kv;
  o["out_dtype"] = out;
  return o;
}

// How the computation rounds: q, K, V already hold values of their dtypes (the spec's input
// dtype); `score` is the dtype the scores are kept in between the matmul and exp (the library:
// fp32 inter_type), `p` the dtype exp writes (the library: io_type).
struct Flow {
  DType score, p, out;
};

// Per row (b, h, i): s_j = the fp32 fma chain of q . k_j in head-dimension order, rounded to
// flow.score; m = max over the visible keys; p_j = fl_p(exp_f32(s_j - m)); l = sum of p_j in
// fp32 (key order); o_c = fp32 fma chain of p_j v_jc; out = fl_out(o_c * fl32(1 / l)).
std::vector<double> tkg_flow(const oracle::AttentionSpec& s, const oracle::AttentionInputs& in,
                             const Flow& flow) {
  std::vector<double> out(static_cast<size_t>(s.q_elements()), 0.0);
  std::vector<int64_t> keys;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        s.visible_keys(b, i, keys);
        if (keys.empty()) continue;
        std::vector<float> sc(keys.size());
        float m = -INFINITY;
        for (size_t n = 0; n < keys.size(); ++n) {
          float acc = 0.0f;
          for (int64_t c = 0; c < s.d_head; ++c) {
            acc = std::fma(static_cast<float>(in.q[size_t(s.q_index(b, h, i, c))]),
                           static_cast<float>(in.k[size_t(s.kv_index(b, 0, keys[n], c))]), acc);
          }
          sc[n] = quantize(flow.score, acc);
          m = std::max(m, sc[n]);
        }
        float l = 0.0f;
        std::vector<float> o(size_t(s.d_head), 0.0f);
        for (size_t n = 0; n < keys.size(); ++n) {
          const float p = quantize(flow.p, exp_f32(sc[n] - m));
          l += p;
          for (int64_t c = 0; c < s.d_head; ++c) {
            o[size_t(c)] = std::fma(
                p, static_cast<float>(in.v[size_t(s.kv_index(b, 0, keys[n], c))]), o[size_t(c)]);
          }
        }
        const float r = 1.0f / l;
        for (int64_t c = 0; c < s.d_head; ++c) {
          out[size_t(s.q_index(b, h, i, c))] = quantize(flow.out, o[size_t(c)] * r);
        }
      }
    }
  }
  return out;
}

struct Worst {
  double case_ratio = 0, apriori_ratio = 0;
};

// The worst ratios of `flow` under the contract of `contract_opts`, over check's distributions
// and two drawn positions each (seed 1 puts batch 0 at position 0), on a problem whose dtypes are
// `problem_opts`' (the spec the registered kernel would have at those options: inputs fp8 with fp8
// q and KV, else fp32).
Worst run_cases(const Options& problem_opts, const Options& contract_opts, const Flow& flow) {
  const ParamValues pv = shape(2, 2, 3, 192, 16);
  const oracle::PrecisionContract ct = tkg().contract(contract_opts);
  Worst w;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (oracle::Distribution dist : check_distributions()) {
      oracle::AttentionSpec s = tkg().spec(problem_opts, pv);
      tkg().draw_case(s, pv, seed);
      const oracle::AttentionInputs in = oracle::generate_inputs(s, dist, seed);
      const oracle::OracleOutput ex = oracle::exact_attention(s, in);
      const std::vector<double> got = tkg_flow(s, in, flow);
      const oracle::CaseBound cb = oracle::case_error_bound(ct, s, in, ex.out, false);
      const oracle::ErrorBound ap = oracle::error_bound(ct, s, in, ex);
      for (size_t x = 0; x < got.size(); ++x) {
        const double err = std::fabs(got[x] - ex.out[x]);
        if (err == 0) continue;
        w.case_ratio = std::max(w.case_ratio, err / cb.bound[x]);
        w.apriori_ratio = std::max(w.apriori_ratio, err / ap.bound[x]);
      }
    }
  }
  std::printf("case ratio %.3g, a-priori ratio %.3g\n", w.case_ratio, w.apriori_ratio);
  return w;
}

const Options kFp8 = dtype_options("fp8_e4m3", "fp8_e4m3", "bf16");
const Options kFp32 = dtype_options("fp32", "fp32", "fp32");

TEST(AttentionTkgDtypes, TheContractStatesTheLibrarysDtypeFlow) {
  const oracle::PrecisionContract fp8 = tkg().contract(kFp8);
  EXPECT_EQ(fp8.q_dtype, DType::fp8_e4m3);
  EXPECT_EQ(fp8.k_dtype, DType::fp8_e4m3);
  EXPECT_EQ(fp8.exp_dtype, DType::fp8_e4m3);  // qk_io_type is io_type
  EXPECT_EQ(fp8.p_dtype, DType::fp8_e4m3);
  EXPECT_EQ(fp8.score_dtype, DType::fp32);  // inter_type
  EXPECT_EQ(fp8.out_dtype, DType::bf16);
  EXPECT_EQ(tkg().spec(kFp8, shape(2, 2, 3, 256, 32)).input_dtype, DType::fp8_e4m3);
  const oracle::PrecisionContract fp32 = tkg().contract(kFp32);
  EXPECT_EQ(fp32.exp_dtype, DType::fp32);
  EXPECT_EQ(fp32.v_dtype, DType::fp32);
  EXPECT_EQ(fp32.out_dtype, DType::fp32);
  // The registered kernel is not built with them: only `check --contract-option` takes them.
  EXPECT_THROW(tkg().resolve({{"q_dtype", "fp8_e4m3"}}), std::invalid_argument);
  EXPECT_THROW(tkg().resolve({{"out_dtype", "fp32"}}), std::invalid_argument);
}

TEST(AttentionTkgDtypes, Fp8QkvWithinBothBoundsOfTheFp8Contract) {
  const Worst w = run_cases(kFp8, kFp8, {DType::fp32, DType::fp8_e4m3, DType::bf16});
  EXPECT_LE(w.case_ratio, 1.0);
  EXPECT_LE(w.apriori_ratio, 1.0);
  EXPECT_GT(w.case_ratio, 0.0);  // the flow did round somewhere
}

// The library's fp8 rows under the bf16-q contract (P in bf16): outside its case bound.
TEST(AttentionTkgDtypes, Fp8PLeavesTheBf16QContract) {
  const Options bf16_q = dtype_options("bf16", "fp8_e4m3", "bf16");
  EXPECT_GT(run_cases(kFp8, bf16_q, {DType::fp32, DType::fp8_e4m3, DType::bf16}).case_ratio, 1.0);
}

// A kernel keeping its scores in io_type (fp8) instead of fp32 inter_type.
TEST(AttentionTkgDtypes, ScoresRoundedToFp8LeaveTheFp8Contract) {
  const Worst w = run_cases(kFp8, kFp8, {DType::fp8_e4m3, DType::fp8_e4m3, DType::bf16});
  EXPECT_GT(std::min(w.case_ratio, w.apriori_ratio), 1.0);
}

TEST(AttentionTkgDtypes, Fp32WithinBothBoundsOfTheFp32Contract) {
  const Worst w = run_cases(kFp32, kFp32, {DType::fp32, DType::fp32, DType::fp32});
  EXPECT_LE(w.case_ratio, 1.0);
  EXPECT_LE(w.apriori_ratio, 1.0);
}

// A kernel whose P is bf16 whatever q's dtype (the registered kernel's qk_io_type) with fp32 q.
TEST(AttentionTkgDtypes, PRoundedToBf16LeavesTheFp32Contract) {
  const Worst w = run_cases(kFp32, kFp32, {DType::fp32, DType::bf16, DType::fp32});
  EXPECT_GT(std::min(w.case_ratio, w.apriori_ratio), 1.0);
}

}  // namespace
}  // namespace ncv::kernels
