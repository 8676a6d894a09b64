// RapidCheck half of the >= 10^4-case soundness run: the
// contract-precision reference stays within error_bound() for generated contracts, shapes, masks,
// sinks, RoPE and hard value distributions. 100 runs x 50 cases = 5000 cases; the fixed-seed
// 5000 are in error_bound_test.cpp.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <random>

#include "oracle/comparison.h"
#include "oracle/contract_reference.h"
#include "oracle/error_bound.h"
#include "oracle/exact_oracle.h"
#include "oracle/tests/paged_kv_gen.h"

namespace ncv::oracle {
namespace {

// Float generators (gen::inRange is integer-only): uniform on [lo, hi] and log-uniform.
rc::Gen<double> gen_uniform(double lo, double hi) {
  return rc::gen::map(rc::gen::inRange<int64_t>(0, int64_t{1} << 30), [lo, hi](int64_t k) {
    return lo + (hi - lo) * static_cast<double>(k) / static_cast<double>(int64_t{1} << 30);
  });
}
rc::Gen<double> gen_log_uniform(double lo, double hi) {
  return rc::gen::map(gen_uniform(std::log(lo), std::log(hi)),
                      [](double x) { return std::exp(x); });
}
rc::Gen<DType> gen_stage_dtype() {
  return rc::gen::element(DType::fp32, DType::bf16, DType::fp16);
}

rc::Gen<PrecisionContract> gen_contract() {
  auto named = PrecisionContract::named();
  auto random = rc::gen::exec([] {
    PrecisionContract c;
    c.name = "random";
    c.q_dtype = *gen_stage_dtype();
    c.k_dtype = *gen_stage_dtype();
    c.v_dtype = *gen_stage_dtype();
    c.scale_folded_into_q = *rc::gen::arbitrary<bool>();
    c.score_dtype = *gen_stage_dtype();
    c.max_dtype = *gen_stage_dtype();
    c.exp_dtype = *gen_stage_dtype();
    c.p_dtype = *rc::gen::element(DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3fn,
                                  DType::fp8_e5m2);
    c.sum_dtype = *rc::gen::element(DType::fp32, DType::fp32, DType::bf16);
    c.sum_of_rounded_p = *rc::gen::arbitrary<bool>();
    c.pv_accum = *rc::gen::element(DType::fp32, DType::fp32, DType::fp32, DType::bf16);
    c.norm = *rc::gen::element(Normalisation::deferred, Normalisation::before_pv);
    if (*rc::gen::inRange(0, 4) == 0) c.norm_dtype = *gen_stage_dtype();
    c.out_dtype = *gen_stage_dtype();
    c.kv_tile = *rc::gen::element<int64_t>(16, 64, 128);
    return c;
  });
  return rc::gen::oneOf(rc::gen::elementOf(named), random);
}

struct Case {
  AttentionSpec spec;
  AttentionInputs in;
  PrecisionContract ct;
};

rc::Gen<Case> gen_case() {
  return rc::gen::exec([] {
    Case cs;
    cs.ct = *gen_contract();
    AttentionSpec& s = cs.spec;
    s.batch = *rc::gen::inRange<int64_t>(1, 3);
    s.kv_heads = *rc::gen::inRange<int64_t>(1, 3);
    s.heads = s.kv_heads * *rc::gen::inRange<int64_t>(1, 3);
    s.seqlen_q = *rc::gen::inRange<int64_t>(1, 9);
    const int size_class = *rc::gen::inRange(0, 16);
    s.seqlen_kv = *rc::gen::inRange<int64_t>(1, size_class < 9 ? 17 : size_class < 14 ? 81 : 301);
    if (size_class >= 14) s.seqlen_q = std::min<int64_t>(s.seqlen_q, 2);
    s.d_head = *rc::gen::inRange<int64_t>(1, *rc::gen::element<int64_t>(9, 33, 65));
    s.scale = *rc::gen::oneOf(rc::gen::just(1.0 / std::sqrt(static_cast<double>(s.d_head))),
                              rc::gen::just(0.125), gen_log_uniform(0.01, 4.0));
    s.input_dtype = *gen_stage_dtype();
    s.output_dtype = cs.ct.out_dtype;
    const int mk = *rc::gen::inRange(0, 6);
    if (mk == 1) s.mask.kind = MaskKind::causal;
    if (mk == 2) {
      s.mask.kind = MaskKind::sliding_window;
      s.mask.window = *rc::gen::inRange<int64_t>(1, s.seqlen_kv + 1);
    }
    if (mk == 3) {
      s.mask.kind = MaskKind::explicit_mask;
      s.mask.allowed = *rc::gen::container<std::vector<uint8_t>>(
          static_cast<size_t>(s.seqlen_q * s.seqlen_kv), rc::gen::element<uint8_t>(0, 1, 1));
      // One fully masked row.
      const int64_t dead = *rc::gen::inRange<int64_t>(0, s.seqlen_q);
      for (int64_t j = 0; j < s.seqlen_kv; ++j) {
        s.mask.allowed[static_cast<size_t>(dead * s.seqlen_kv + j)] = 0;
      }
    }
    // Values: a distribution, a logit magnitude, and a seed for the bulk of the values.
    std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
    if (mk == 4) {
      s.mask.kind = MaskKind::position_ids;
      for (int64_t x = 0; x < s.batch * s.seqlen_q; ++x) {
        s.mask.pos.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(s.seqlen_kv + 2)) -
                             1);
      }
    }
    if (*rc::gen::inRange(0, 4) == 0) s.block_kv = random_block_kv(s, rng);
    if (*rc::gen::inRange(0, 4) == 0) {
      s.sink = *rc::gen::container<std::vector<double>>(static_cast<size_t>(s.heads),
                                                        gen_uniform(-8, 8));
    }
    if (s.d_head % 2 == 0 && *rc::gen::inRange(0, 5) == 0) {
      Rope r;
      r.pos_q = *rc::gen::container<std::vector<int64_t>>(static_cast<size_t>(s.batch * s.seqlen_q),
                                                          rc::gen::inRange<int64_t>(0, 5000));
      r.pos_k = *rc::gen::container<std::vector<int64_t>>(
          static_cast<size_t>(s.batch * s.seqlen_kv), rc::gen::inRange<int64_t>(0, 5000));
      s.rope = r;
    }
    const int dist = *rc::gen::inRange(0, 6);
    const double logit = *gen_log_uniform(0.1, 100.0);  // typical |s|
    const double vscale = *gen_log_uniform(1e-3, 1e3);
    std::normal_distribution<double> N(0.0, 1.0);
    const DType it = s.input_dtype;
    const double qk_sigma = std::sqrt(logit / (s.scale * std::sqrt(static_cast<double>(s.d_head))));
    auto qz = [&](double x) { return static_cast<double>(quantize(it, static_cast<float>(x))); };
    auto fill = [&](std::vector<double>& x, int64_t n, double sigma) {
      x.resize(static_cast<size_t>(n));
      for (double& e : x) {
        double val = sigma * N(rng);
        if (dist == 1 && rng() % 2) val *= std::ldexp(1.0, -static_cast<int>(rng() % 150));
        if (dist == 2 && rng() % 3 == 0) val = -0.0;
        if (dist == 3) {  // bf16 bit patterns
          const uint32_t b = static_cast<uint32_t>((rng() & 1) << 15) |
                             static_cast<uint32_t>((127 - 12 + rng() % 15) << 7) |
                             static_cast<uint32_t>(rng() & 0x7f);
          val = decode_to_float(DType::bf16, b);
        }
        e = qz(val);
      }
    };
    fill(cs.in.q, s.q_elements(), qk_sigma);
    fill(cs.in.k, s.kv_elements(), qk_sigma);
    fill(cs.in.v, s.kv_elements(), vscale);
    const int64_t d = s.d_head, rows = s.kv_elements() / d;
    if (dist == 4) {  // constant key rows (uniform softmax)
      for (int64_t r = 1; r < rows; ++r) {
        for (int64_t c = 0; c < d; ++c) {
          cs.in.k[static_cast<size_t>(r * d + c)] = cs.in.k[static_cast<size_t>(c)];
        }
      }
    }
    if (dist == 5) {  // one key spiking along +1/-1
      const int64_t r = *rc::gen::inRange<int64_t>(0, rows);
      for (int64_t c = 0; c < d; ++c) {
        cs.in.k[static_cast<size_t>(r * d + c)] = qz((c % 2 ? 1 : -1) * 4 * qk_sigma);
      }
    }
    return cs;
  });
}

RC_GTEST_PROP(ErrorBoundProp, ContractReferenceWithinBound, ()) {
  const auto batch = *rc::gen::container<std::vector<Case>>(50, gen_case());
  for (const Case& cs : batch) {
    try {
      cs.spec.validate();
    } catch (const SpecError&) {
      continue;  // generated an invalid spec (e.g. an out-of-range position): not a case
    }
    const OracleOutput ex = exact_attention(cs.spec, cs.in);
    const ErrorBound eb = error_bound(cs.ct, cs.spec, cs.in, ex);
    const auto got = contract_reference(cs.ct, cs.spec, cs.in);
    const Comparison cmp = compare(cs.spec, got, ex, eb, cs.ct.out_dtype);
    for (size_t e = 0; e < got.size(); ++e) {
      if (!std::isfinite(ex.out[e]) || std::isinf(eb.bound[e])) continue;
      if (!(std::fabs(got[e] - ex.out[e]) <= eb.bound[e])) {
        const AttentionSpec& s = cs.spec;
        RC_FAIL("element " + std::to_string(e) + " contract " + cs.ct.to_json().dump() +
                " Sq=" + std::to_string(s.seqlen_q) + " Skv=" + std::to_string(s.seqlen_kv) +
                " d=" + std::to_string(s.d_head) + " scale=" + std::to_string(s.scale) +
                " input=" + std::string(dtype_name(s.input_dtype)) +
                " mask=" + std::to_string(static_cast<int>(s.mask.kind)) +
                " sink=" + std::to_string(!s.sink.empty()) + "\n" + cmp.one_line());
      }
    }
    RC_ASSERT(cmp.nonfinite_mismatch == 0);
  }
}

}  // namespace
}  // namespace ncv::oracle
