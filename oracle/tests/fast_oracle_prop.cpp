// The fast oracle's certificate: over random specs (GQA, every mask kind, fully masked rows,
// sinks, RoPE, paged KV, logits up to ~1000, rows up to 512 keys, v with large offsets) every
// element satisfies |fast - exact| <= fast_oracle_bound. And the check has teeth: an output
// moved by 10x the bound, or a plain float32 computation, is rejected.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/tests/paged_kv_gen.h"

namespace ncv::oracle {
namespace {

struct Case {
  AttentionSpec spec;
  AttentionInputs in;
};

// Uniform double in [lo, hi] on a 2^-20 grid, from an integer generator (RapidCheck's
// inRange is integer-only).
double grid(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_int_distribution<int64_t> n(0, int64_t{1} << 20);
  return lo + (hi - lo) * std::ldexp(static_cast<double>(n(rng)), -20);
}

rc::Gen<Case> gen_case() {
  return rc::gen::exec([] {
    Case c;
    AttentionSpec& s = c.spec;
    const bool long_row = *rc::gen::inRange(0, 4) == 0;
    s.kv_heads = *rc::gen::inRange<int64_t>(1, 3);
    s.heads = s.kv_heads * (long_row ? 1 : *rc::gen::element<int64_t>(1, 2, 3));
    s.batch = long_row ? 1 : *rc::gen::inRange<int64_t>(1, 3);
    s.seqlen_q = *rc::gen::inRange<int64_t>(1, long_row ? 3 : 6);
    s.seqlen_kv =
        long_row ? *rc::gen::inRange<int64_t>(64, 513) : *rc::gen::inRange<int64_t>(1, 20);
    const bool rope = *rc::gen::inRange(0, 3) == 0;
    s.d_head = *rc::gen::inRange<int64_t>(1, long_row ? 9 : 17);
    if (rope && s.d_head % 2 != 0) ++s.d_head;
    std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());

    // Logit magnitude target: |s| up to `logit` (q, k in [-1, 1]).
    const double logit = *rc::gen::element(0.5, 4.0, 30.0, 100.0, 1000.0);
    s.scale = logit / static_cast<double>(s.d_head) * grid(rng, 0.5, 1.0);
    switch (*rc::gen::inRange(0, 5)) {
      case 0:
        s.mask.kind = MaskKind::none;
        break;
      case 1:
        s.mask.kind = MaskKind::causal;
        break;
      case 2:
        s.mask.kind = MaskKind::sliding_window;
        s.mask.window = *rc::gen::inRange<int64_t>(1, s.seqlen_kv + 2);
        break;
      case 3: {
        s.mask.kind = MaskKind::explicit_mask;
        const int density = *rc::gen::inRange(0, 4);  // 0: mostly masked
        for (int64_t x = 0; x < s.seqlen_q * s.seqlen_kv; ++x) {
          s.mask.allowed.push_back(static_cast<uint8_t>(static_cast<int>(rng() % 4) < density));
        }
        break;
      }
      default:
        s.mask.kind = MaskKind::position_ids;
        for (int64_t x = 0; x < s.batch * s.seqlen_q; ++x) {
          s.mask.pos.push_back(
              static_cast<int64_t>(rng() % static_cast<uint64_t>(s.seqlen_kv + 2)) - 1);
        }
    }
    if (*rc::gen::inRange(0, 3) == 0) {
      for (int64_t h = 0; h < s.heads; ++h) s.sink.push_back(grid(rng, -logit, logit));
    }
    if (rope) {
      Rope r;
      r.theta = *rc::gen::element(10000.0, 500000.0, 10.0);
      const int64_t max_pos = *rc::gen::element<int64_t>(16, 4096, 100000);
      for (int64_t x = 0; x < s.batch * s.seqlen_q; ++x)
        r.pos_q.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(max_pos)));
      for (int64_t x = 0; x < s.batch * s.seqlen_kv; ++x)
        r.pos_k.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(max_pos)));
      s.rope = r;
    }
    if (*rc::gen::inRange(0, 4) == 0) s.block_kv = random_block_kv(s, rng);
    s.validate();

    const double v_offset = *rc::gen::element(0.0, 100.0, -1e4);
    const double v_spread = *rc::gen::element(1.0, 1e-3, 1e3);
    c.in.q.resize(static_cast<size_t>(s.q_elements()));
    c.in.k.resize(static_cast<size_t>(s.kv_elements()));
    c.in.v.resize(static_cast<size_t>(s.kv_elements()));
    for (auto& x : c.in.q) x = grid(rng, -1, 1);
    for (auto& x : c.in.k) x = grid(rng, -1, 1);
    for (auto& x : c.in.v) x = v_offset + grid(rng, -v_spread, v_spread);
    return c;
  });
}

// First element where |candidate - exact| > bound (both NaN counts as agreement), or -1.
int64_t first_violation(const OracleOutput& exact, const std::vector<double>& candidate,
                        const std::vector<double>& bound) {
  for (size_t x = 0; x < candidate.size(); ++x) {
    if (std::isnan(exact.out[x]) && std::isnan(candidate[x])) continue;
    if (!(std::fabs(candidate[x] - exact.out[x]) <= bound[x])) return static_cast<int64_t>(x);
  }
  return -1;
}

RC_GTEST_PROP(FastOracle, WithinStatedBound, ()) {
  const Case c = *gen_case();
  const OracleOutput e = exact_attention(c.spec, c.in);
  const OracleOutput f = fast_attention(c.spec, c.in);
  const std::vector<double> bound = fast_oracle_bound(c.spec, c.in, f);
  const int64_t bad = first_violation(e, f.out, bound);
  if (bad >= 0) {
    const auto x = static_cast<size_t>(bad);
    RC_LOG() << "element " << bad << ": exact " << e.out[x] << " fast " << f.out[x] << " bound "
             << bound[x] << "\n";
  }
  RC_ASSERT(bad < 0);
  for (size_t r = 0; r < e.lse.size(); ++r) {
    // lse: same rows non-finite; otherwise close. lse is not part of the certified bound; its
    // error is dominated by the score errors (RoPE at large positions, |s| ~ 1000).
    RC_ASSERT(std::isnan(e.lse[r]) == std::isnan(f.lse[r]));
    if (std::isfinite(e.lse[r])) {
      RC_ASSERT(std::fabs(e.lse[r] - f.lse[r]) <= 1e-9 * (1 + std::fabs(e.lse[r])));
    }
  }
}

RC_GTEST_PROP(FastOracle, OutputMovedByTenBoundsIsRejected, ()) {
  const Case c = *gen_case();
  const OracleOutput f = fast_attention(c.spec, c.in);
  const std::vector<double> bound = fast_oracle_bound(c.spec, c.in, f);
  // The element with the largest finite bound relative to its magnitude.
  int64_t pick = -1;
  for (size_t x = 0; x < bound.size(); ++x) {
    if (std::isfinite(bound[x]) && bound[x] > 1e-300 &&
        (pick < 0 || bound[x] > bound[static_cast<size_t>(pick)])) {
      pick = static_cast<int64_t>(x);
    }
  }
  RC_PRE(pick >= 0);
  const OracleOutput e = exact_attention(c.spec, c.in);
  std::vector<double> moved = f.out;
  moved[static_cast<size_t>(pick)] += 10 * bound[static_cast<size_t>(pick)];
  RC_ASSERT(first_violation(e, moved, bound) == pick);
}

// A plain float32 computation (no compensation) is far outside the fast oracle's bound.
TEST(FastOracle, Float32ComputationIsRejected) {
  AttentionSpec s;
  s.seqlen_q = 4;
  s.seqlen_kv = 64;
  s.d_head = 16;
  s.scale = 0.25;
  std::mt19937_64 rng(7);
  AttentionInputs in;
  for (int64_t x = 0; x < s.q_elements(); ++x) in.q.push_back(grid(rng, -1, 1));
  for (int64_t x = 0; x < s.kv_elements(); ++x) in.k.push_back(grid(rng, -1, 1));
  for (int64_t x = 0; x < s.kv_elements(); ++x) in.v.push_back(grid(rng, -1, 1));
  std::vector<double> f32(static_cast<size_t>(s.q_elements()));
  for (int64_t i = 0; i < s.seqlen_q; ++i) {
    std::vector<float> p(64);
    float m = -INFINITY, l = 0;
    for (int64_t j = 0; j < 64; ++j) {
      float dot = 0;
      for (int64_t c = 0; c < 16; ++c)
        dot += static_cast<float>(in.q[static_cast<size_t>(i * 16 + c)]) *
               static_cast<float>(in.k[static_cast<size_t>(j * 16 + c)]);
      p[static_cast<size_t>(j)] = static_cast<float>(s.scale) * dot;
      m = std::max(m, p[static_cast<size_t>(j)]);
    }
    for (auto& x : p) l += (x = std::exp(x - m));
    for (int64_t c = 0; c < 16; ++c) {
      float acc = 0;
      for (int64_t j = 0; j < 64; ++j)
        acc +=
            p[static_cast<size_t>(j)] * static_cast<float>(in.v[static_cast<size_t>(j * 16 + c)]);
      f32[static_cast<size_t>(i * 16 + c)] = acc / l;
    }
  }
  const OracleOutput e = exact_attention(s, in);
  const OracleOutput f = fast_attention(s, in);
  const std::vector<double> bound = fast_oracle_bound(s, in, f);
  EXPECT_EQ(first_violation(e, f.out, bound), -1);
  int64_t violations = 0;
  for (size_t x = 0; x < f32.size(); ++x) violations += std::fabs(f32[x] - e.out[x]) > bound[x];
  EXPECT_GT(violations, static_cast<int64_t>(f32.size()) * 9 / 10);
}

}  // namespace
}  // namespace ncv::oracle
