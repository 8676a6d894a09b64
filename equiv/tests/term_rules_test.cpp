// The term store's construction rules (equiv/term.cpp) cannot change bits: every rewrite it does
// at construction is checked here against the model's own scalar code, exhaustively where the
// domain is small (every bit pattern of the 8- and 16-bit dtypes) and on millions of random and
// special fp32 operands otherwise. Also: hash-consing, constant folding, provenance, str().
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "equiv/term.h"
#include "equiv/term_eval.h"
#include "model/semantics/semantics.h"

namespace ncv::equiv {
namespace {

float f(uint32_t b) {
  return std::bit_cast<float>(b);
}
uint32_t u(float x) {
  return std::bit_cast<uint32_t>(x);
}

// Equal bits, or both NaN (the store's rules hold modulo NaN payloads).
bool same_modulo_nan(float a, float b) {
  return u(a) == u(b) || (std::isnan(a) && std::isnan(b));
}

// Special fp32 operands: zeros, infinities, NaNs with payloads and signs, subnormals, the
// extremes, and values whose sums and products round.
std::vector<uint32_t> special_bits() {
  return {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
          0x7fc00001u, 0xffc12345u, 0x7f800001u, 0xff800123u, 0x7fbfffffu, 0x00000001u,
          0x80000001u, 0x007fffffu, 0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
          0x3f800000u, 0xbf800000u, 0x3f800001u, 0x33800000u, 0x4b800000u, 0xcb800001u};
}

// ---------------------------------------------------------------------------------------------
// round(dt, x) == x for x of dtype dt: encode(dt, decode(dt, b)) == b for every bit pattern b of
// the dtypes the rule covers (a NaN may come back quieted: still a NaN).

TEST(TermRules, RoundTripExhaustiveForSmallDtypes) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn, DType::fp8_e5m2,
                  DType::uint8, DType::uint16}) {
    const uint32_t count = 1u << (8 * dtype_size(t));
    int64_t nans = 0;
    for (uint32_t b = 0; b < count; ++b) {
      const float v = decode_to_float(t, b);
      const uint32_t back = encode_from_float(t, v);
      if (std::isnan(v)) {
        ++nans;
        ASSERT_TRUE(std::isnan(decode_to_float(t, back))) << dtype_name(t) << " " << b;
      } else {
        ASSERT_EQ(back, b) << dtype_name(t) << " bits " << b;
      }
    }
    if (is_integer(t)) {
      EXPECT_EQ(nans, 0);
    }
  }
}

// round(fp32, x) == x for x of a float dtype: the value is exact in fp32, and encoding it as fp32
// gives the same value back (consumers decode to fp32, so the narrower dtype is kept).
TEST(TermRules, FloatDtypesAreExactInFp32) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn, DType::fp8_e5m2}) {
    const uint32_t count = 1u << (8 * dtype_size(t));
    for (uint32_t b = 0; b < count; ++b) {
      const float v = decode_to_float(t, b);
      const float back = decode_to_float(DType::fp32, encode_from_float(DType::fp32, v));
      ASSERT_TRUE(same_modulo_nan(back, v)) << dtype_name(t) << " " << b;
    }
  }
}

// round(fp32, x) == x for x of dtype fp32: on a dense sample of all 2^32 patterns (every 61st,
// which visits every exponent with many mantissas) plus the specials.
TEST(TermRules, Fp32RoundTrip) {
  auto check = [](uint32_t b) {
    const uint32_t back = encode_from_float(DType::fp32, f(b));
    if (std::isnan(f(b))) {
      ASSERT_TRUE(std::isnan(f(back))) << b;
    } else {
      ASSERT_EQ(back, b);
    }
  };
  for (uint64_t b = 0; b <= 0xffffffffu; b += 61) check(static_cast<uint32_t>(b));
  for (uint32_t b : special_bits()) check(b);
}

// No rule for int32 / uint32: their values above 2^24 are not exact in fp32, so a round through
// them is kept.
TEST(TermRules, WideIntegersKeepTheirRound) {
  EXPECT_NE(encode_from_float(DType::int32, decode_to_float(DType::int32, (1u << 24) + 1)),
            (1u << 24) + 1);
  EXPECT_NE(encode_from_float(DType::uint32, decode_to_float(DType::uint32, 0xffffff01u)),
            0xffffff01u);
  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  for (DType t : {DType::int32, DType::uint32}) {
    const TermId x = ts.input(slot, 0, t);
    const TermId r = ts.round(t, x);
    EXPECT_NE(r, x) << dtype_name(t);
    EXPECT_EQ(ts.node(r).op, TermOp::round);
    EXPECT_NE(ts.round(DType::fp32, x), x) << dtype_name(t);
  }
}

TEST(TermRules, RoundRulesInTheStore) {
  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  for (DType t : {DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn,
                  DType::fp8_e5m2, DType::uint8, DType::uint16}) {
    const TermId x = ts.input(slot, 1, t);
    EXPECT_EQ(ts.round(t, x), x) << dtype_name(t);
    if (is_float(t)) {
      EXPECT_EQ(ts.round(DType::fp32, x), x) << dtype_name(t);
    }
  }
  // A narrowing round stays, and so does a widening into a non-fp32 float type (bf16 -> fp16
  // can overflow or lose subnormals).
  const TermId x32 = ts.input(slot, 2, DType::fp32);
  EXPECT_NE(ts.round(DType::bf16, x32), x32);
  const TermId xb = ts.input(slot, 3, DType::bf16);
  EXPECT_NE(ts.round(DType::fp16, xb), xb);
  EXPECT_NE(ts.round(DType::uint8, x32), x32);
}

// ---------------------------------------------------------------------------------------------
// alu sorts the operands of add, multiply, max and min: op(a, b) == op(b, a) up to which NaN
// comes out, on millions of operand pairs.

TEST(TermRules, CommutativeOperatorsOnManyPairs) {
  std::mt19937_64 rng(20240611);
  const std::vector<uint32_t> specials = special_bits();
  std::vector<std::pair<float, float>> pairs;
  for (uint32_t a : specials) {
    for (uint32_t b : specials) pairs.emplace_back(f(a), f(b));
  }
  int64_t checked = 0;
  auto check_pair = [&](float a, float b) {
    for (AluOp op : {AluOp::add, AluOp::multiply, AluOp::max, AluOp::min}) {
      const float x = alu_apply(op, a, b), y = alu_apply(op, b, a);
      if (!same_modulo_nan(x, y)) {
        ADD_FAILURE() << alu_op_name(op) << "(" << std::hexfloat << a << ", " << b << ") = " << x
                      << " but reversed " << y;
        return false;
      }
    }
    // An fma chain step with the pair swapped (fma_chain sorts each pair).
    const float c = f(static_cast<uint32_t>(rng()));
    if (!same_modulo_nan(std::fma(a, b, c), std::fma(b, a, c))) {
      ADD_FAILURE() << "fma(" << std::hexfloat << a << ", " << b << ", " << c << ")";
      return false;
    }
    ++checked;
    return true;
  };
  for (auto [a, b] : pairs) {
    if (!check_pair(a, b)) return;
  }
  for (int i = 0; i < 3'000'000; ++i) {
    const uint64_t r = rng();
    const auto a_bits = static_cast<uint32_t>(r);
    uint32_t b_bits = static_cast<uint32_t>(r >> 32);
    switch (i % 4) {
      case 0:  // uniform bit patterns
        break;
      case 1:  // close exponents (sums that round, cancellations)
        b_bits = (a_bits & 0xff800000u) ^ (b_bits & 0x807fffffu) ^ ((b_bits >> 8) & 0x01800000u);
        break;
      case 2:  // equal magnitudes with either sign (+0 / -0 results, max/min ties)
        b_bits = a_bits ^ (b_bits & 0x80000000u);
        break;
      default:  // one special operand
        b_bits = specials[b_bits % specials.size()];
        break;
    }
    if (!check_pair(f(a_bits), f(b_bits))) return;
  }
  EXPECT_GT(checked, 3'000'000);
}

// alu(multiply, x, 1) == x and alu(add, x, -0) == x for float x (either operand order): on the
// dense fp32 sample, the specials and every value of the narrower float dtypes.
TEST(TermRules, MultiplyByOneAndAddMinusZero) {
  auto check = [](float x) {
    for (float r : {alu_apply(AluOp::multiply, x, 1.0f), alu_apply(AluOp::multiply, 1.0f, x),
                    alu_apply(AluOp::add, x, -0.0f), alu_apply(AluOp::add, -0.0f, x)}) {
      if (!same_modulo_nan(r, x)) {
        ADD_FAILURE() << std::hexfloat << x << " became " << r;
        return false;
      }
    }
    return true;
  };
  for (uint64_t b = 0; b <= 0xffffffffu; b += 61) {
    if (!check(f(static_cast<uint32_t>(b)))) return;
  }
  for (uint32_t b : special_bits()) {
    if (!check(f(b))) return;
  }
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn, DType::fp8_e5m2}) {
    for (uint32_t b = 0; b < (1u << (8 * dtype_size(t))); ++b) {
      if (!check(decode_to_float(t, b))) return;
    }
  }
  // +0 is not an identity of add: -0 + +0 = +0.
  EXPECT_EQ(u(alu_apply(AluOp::add, -0.0f, 0.0f)), 0u);

  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  const TermId one = ts.constant_f32(1.0f), minus_zero = ts.constant_f32(-0.0f);
  for (DType t : {DType::fp32, DType::bf16, DType::fp8_e5m2}) {
    const TermId x = ts.input(slot, 0, t);
    EXPECT_EQ(ts.alu(AluOp::multiply, x, one), x);
    EXPECT_EQ(ts.alu(AluOp::multiply, one, x), x);
    EXPECT_EQ(ts.alu(AluOp::add, x, minus_zero), x);
    EXPECT_EQ(ts.alu(AluOp::add, minus_zero, x), x);
  }
  const TermId x = ts.input(slot, 0, DType::fp32);
  EXPECT_NE(ts.alu(AluOp::add, x, ts.constant_f32(0.0f)), x);
  EXPECT_NE(ts.alu(AluOp::divide, one, x), x);
}

// alu(subtract, x, y) == alu(add, x, alu(multiply, -1, y)) and -1 * (-1 * y) == y for float x, y:
// on pairs of the specials and a dense sample against the specials, and in the store (both
// operand orders of the -1; integer-dtype operands are left alone).
TEST(TermRules, SubtractIsAddOfTheNegation) {
  auto check = [](float x, float y) {
    const float neg = alu_apply(AluOp::multiply, -1.0f, y);
    const float sub = alu_apply(AluOp::subtract, x, y), add = alu_apply(AluOp::add, x, neg);
    if (!same_modulo_nan(sub, add) || !same_modulo_nan(alu_apply(AluOp::multiply, -1.0f, neg), y) ||
        !same_modulo_nan(alu_apply(AluOp::multiply, neg, -1.0f), y)) {
      ADD_FAILURE() << std::hexfloat << x << " - " << y << " = " << sub
                    << " but x + (-y) = " << add;
      return false;
    }
    return true;
  };
  for (uint32_t a : special_bits()) {
    for (uint32_t b : special_bits()) {
      if (!check(f(a), f(b))) return;
    }
    for (uint64_t b = 0; b <= 0xffffffffu; b += 65537) {
      if (!check(f(a), f(static_cast<uint32_t>(b))) || !check(f(static_cast<uint32_t>(b)), f(a))) {
        return;
      }
    }
  }

  TermStore ts;
  const uint32_t sx = ts.input_slot("x"), sy = ts.input_slot("y");
  const TermId x = ts.input(sx, 0, DType::fp32), y = ts.input(sy, 0, DType::bf16);
  const TermId minus_one = ts.constant_f32(-1.0f);
  const TermId neg_y = ts.alu(AluOp::multiply, minus_one, y);
  EXPECT_EQ(ts.alu(AluOp::subtract, x, y), ts.alu(AluOp::add, x, neg_y));
  EXPECT_EQ(ts.alu(AluOp::subtract, x, y),
            ts.alu(AluOp::add, ts.alu(AluOp::multiply, y, minus_one), x));
  EXPECT_EQ(ts.alu(AluOp::multiply, minus_one, neg_y), y);
  EXPECT_EQ(ts.alu(AluOp::multiply, neg_y, minus_one), y);
  // x - y and y - x stay apart, and so does x - y against x + y.
  EXPECT_NE(ts.alu(AluOp::subtract, x, y), ts.alu(AluOp::subtract, y, x));
  EXPECT_NE(ts.alu(AluOp::subtract, x, y), ts.alu(AluOp::add, x, y));
  // Integer operands: the rule does not apply (their subtract may be native integer arithmetic).
  const TermId i = ts.input(ts.input_slot("i"), 0, DType::int32);
  EXPECT_EQ(ts.node(ts.alu(AluOp::subtract, i, x)).op, TermOp::alu);
  EXPECT_EQ(static_cast<AluOp>(ts.node(ts.alu(AluOp::subtract, i, x)).aux), AluOp::subtract);
}

TEST(TermRules, AluSortsOnlyCommutativeOperators) {
  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  const TermId a = ts.input(slot, 0, DType::fp32), b = ts.input(slot, 1, DType::fp32);
  for (AluOp op : {AluOp::add, AluOp::multiply, AluOp::max, AluOp::min}) {
    EXPECT_EQ(ts.alu(op, a, b), ts.alu(op, b, a)) << alu_op_name(op);
  }
  for (AluOp op : {AluOp::subtract, AluOp::divide, AluOp::pow, AluOp::is_gt, AluOp::abs_max}) {
    EXPECT_NE(ts.alu(op, a, b), ts.alu(op, b, a)) << alu_op_name(op);
  }
}

TEST(TermRules, FmaChainSortsPairsButKeepsTheirOrder) {
  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  const TermId z = ts.constant_f32(0.0f);
  const TermId a = ts.input(slot, 0, DType::fp32), b = ts.input(slot, 1, DType::fp32),
               c = ts.input(slot, 2, DType::fp32), d = ts.input(slot, 3, DType::fp32);
  const std::pair<TermId, TermId> ab_cd[] = {{a, b}, {c, d}}, ba_dc[] = {{b, a}, {d, c}},
                                  cd_ab[] = {{c, d}, {a, b}};
  EXPECT_EQ(ts.fma_chain(z, ab_cd), ts.fma_chain(z, ba_dc));
  // The accumulation order is part of the value: a reordered chain is another term.
  EXPECT_NE(ts.fma_chain(z, ab_cd), ts.fma_chain(z, cd_ab));
  EXPECT_NE(ts.fma_chain(z, ab_cd), ts.fma_chain(ts.constant_f32(-0.0f), ab_cd));
  const TermId chain = ts.fma_chain(z, ab_cd);
  const FmaParts parts = ts.fma_parts(chain);
  EXPECT_EQ(parts.init, z);
  EXPECT_EQ(std::vector<TermId>(parts.a.begin(), parts.a.end()), (std::vector<TermId>{a, c}));
  EXPECT_EQ(std::vector<TermId>(parts.b.begin(), parts.b.end()), (std::vector<TermId>{b, d}));
  // Operand lists are shared: a second chain over the same columns adds one node, no list.
  const TermId one = ts.constant_f32(1.0f);
  const size_t before = ts.size();
  const std::pair<TermId, TermId> ab_cd_again[] = {{a, b}, {c, d}};
  const TermId again = ts.fma_chain(one, ab_cd_again);
  EXPECT_EQ(ts.size(), before + 1);
  EXPECT_EQ(again, before);
  // The lists of one chain are of one length.
  const TermId short_list = ts.operands(std::vector<TermId>{a});
  EXPECT_THROW(ts.fma_chain_of(z, short_list, ts.kids(chain)[1]), std::logic_error);
}

// ---------------------------------------------------------------------------------------------
// Hash-consing and constants.

TEST(TermStore, HashConsing) {
  TermStore ts;
  const uint32_t q = ts.input_slot("q"), k = ts.input_slot("k");
  EXPECT_EQ(ts.input_slot("q"), q);
  EXPECT_NE(q, k);
  EXPECT_EQ(ts.input(q, 5, DType::bf16), ts.input(q, 5, DType::bf16));
  EXPECT_NE(ts.input(q, 5, DType::bf16), ts.input(k, 5, DType::bf16));
  EXPECT_NE(ts.input(q, 5, DType::bf16), ts.input(q, 6, DType::bf16));
  EXPECT_NE(ts.input(q, 5, DType::bf16), ts.input(q, 5, DType::fp32));
  EXPECT_EQ(ts.constant_f32(0.125f), ts.constant(DType::fp32, u(0.125f)));
  EXPECT_NE(ts.constant_f32(0.0f), ts.constant_f32(-0.0f));
  EXPECT_NE(ts.constant_f32(0.125f), ts.constant(DType::bf16, 0x3e00));
  EXPECT_NE(ts.constant(DType::fp32, 0x7fc00000u), ts.constant(DType::fp32, 0x7fc00001u));

  const TermId x = ts.input(q, 5, DType::bf16);
  auto build = [&](float c) {
    return ts.round(DType::bf16,
                    ts.act(ActFunc::exp, ts.alu(AluOp::multiply, x, ts.constant_f32(c))));
  };
  const size_t before = ts.size();
  const TermId t1 = build(0.125f);
  const size_t after_first = ts.size();
  EXPECT_EQ(build(0.125f), t1);
  EXPECT_EQ(ts.size(), after_first);  // nothing new
  EXPECT_GT(after_first, before);
  EXPECT_NE(build(0.25f), t1);

  // Many nodes: the index survives its growth.
  std::vector<TermId> ids;
  for (int i = 0; i < 200'000; ++i)
    ids.push_back(ts.alu(AluOp::add, x, ts.constant_f32(static_cast<float>(i))));
  for (int i = 0; i < 200'000; ++i)
    ASSERT_EQ(ts.alu(AluOp::add, ts.constant_f32(static_cast<float>(i)), x), ids[i]);

  // Opaque terms are never shared.
  EXPECT_NE(ts.opaque("why"), ts.opaque("why"));
  EXPECT_EQ(ts.opaque_reason(ts.opaque("because")), "because");
}

// Folded constants are what the unfolded node evaluates to.
TEST(TermStore, ConstantFoldingMatchesEvaluation) {
  TermStore ts;
  const std::vector<uint32_t> specials = special_bits();
  std::vector<std::pair<TermId, uint32_t>> folded;
  for (uint32_t a : specials) {
    for (uint32_t b : {0x3f800000u, 0x7fc00001u, 0x80000000u, 0x40490fdbu}) {
      for (AluOp op : {AluOp::add, AluOp::subtract, AluOp::multiply, AluOp::divide, AluOp::max,
                       AluOp::min, AluOp::pow, AluOp::is_ge}) {
        const TermId t = ts.alu(op, ts.constant(DType::fp32, a), ts.constant(DType::fp32, b));
        ASSERT_EQ(ts.node(t).op, TermOp::constant);
        folded.emplace_back(t, u(alu_apply(op, f(a), f(b))));
      }
    }
    for (ActFunc fn : {ActFunc::exp, ActFunc::tanh, ActFunc::gelu, ActFunc::rsqrt}) {
      const TermId t = ts.act(fn, ts.constant(DType::fp32, a));
      ASSERT_EQ(ts.node(t).op, TermOp::constant);
      folded.emplace_back(t, u(act_apply(fn, f(a))));
    }
    const TermId r = ts.round(DType::bf16, ts.constant(DType::fp32, a));
    folded.emplace_back(r, encode_from_float(DType::bf16, f(a)));
  }
  const std::vector<uint32_t> bits = evaluate_terms(ts, {});
  for (auto [t, expect] : folded) EXPECT_EQ(bits[t], expect) << ts.str(t);
}

// ---------------------------------------------------------------------------------------------
// Provenance: per side, the first instruction that constructed the term.

TEST(TermStore, ProvenancePerSide) {
  TermStore ts;
  const uint32_t slot = ts.input_slot("x");
  const TermId x = ts.input(slot, 0, DType::fp32);
  const TermId c = ts.constant_f32(2.0f);
  ts.set_context(0, 5);
  const TermId m = ts.alu(AluOp::multiply, x, c);
  ts.set_context(0, 9);
  EXPECT_EQ(ts.alu(AluOp::multiply, c, x), m);  // a hit keeps the first instruction
  ts.set_context(1, 7);
  EXPECT_EQ(ts.alu(AluOp::multiply, x, c), m);  // the other side records its own
  const TermId only1 = ts.act(ActFunc::exp, m);
  EXPECT_EQ(ts.provenance(0, m), 5u);
  EXPECT_EQ(ts.provenance(1, m), 7u);
  EXPECT_EQ(ts.provenance(0, only1), kNoInstruction);
  EXPECT_EQ(ts.provenance(1, only1), 7u);
  // Inputs belong to no instruction; a constant to the first that wrote it (c was made outside
  // any instruction).
  EXPECT_EQ(ts.provenance(0, x), kNoInstruction);
  EXPECT_EQ(ts.provenance(1, c), kNoInstruction);
  ts.set_context(1, 13);
  const TermId fill = ts.constant_f32(-9984.0f);
  EXPECT_EQ(ts.provenance(1, fill), 13u);
  EXPECT_EQ(ts.provenance(0, fill), kNoInstruction);
  // A rule that returns an existing term still records it for the constructing side.
  ts.set_context(0, 11);
  EXPECT_EQ(ts.round(DType::fp32, only1), only1);
  EXPECT_EQ(ts.provenance(0, only1), 11u);
}

TEST(TermStore, ReadableForm) {
  TermStore ts;
  const TermId q = ts.input(ts.input_slot("q"), 5, DType::bf16);
  const TermId t = ts.round(DType::bf16, ts.alu(AluOp::multiply, q, ts.constant_f32(0.125f)));
  EXPECT_EQ(ts.str(t), "round(bf16, mul(in[q#5], 0.125))");
  EXPECT_EQ(ts.str(t, 2), "round(bf16, mul(…, …))");
  const std::pair<TermId, TermId> pr[] = {{q, q}, {q, q}, {q, q}};
  const std::string chain = ts.str(ts.fma_chain(ts.constant_f32(0.0f), pr));
  EXPECT_NE(chain.find("dot3("), std::string::npos) << chain;
  EXPECT_NE(ts.str(ts.opaque("bf16 read of an fp32 element")).find("bf16 read"), std::string::npos);
}

}  // namespace
}  // namespace ncv::equiv
