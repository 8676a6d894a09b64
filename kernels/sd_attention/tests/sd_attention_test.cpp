// The sd_attention family (tutorial, Autocomp steps 1-5, batched reference layout): metadata,
// .nkir round trips for every option combination, `check` against the oracle, the
// same-numerics claims between steps (bit for bit on the interpreter), the benchmark shape on
// trn1, and broken copies (causal predicate off by one, last key tile dropped) that must fail.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <string>

#include "check/check.h"
#include "kernels/families.h"
#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/allocator.h"
#include "model/ir/builder.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = sd_attention_variants();
  return v;
}
const Variant& variant(const std::string& name) {
  for (const Variant& v : variants()) {
    if (v.name == name) return v;
  }
  throw std::invalid_argument(name);
}

Options opts(const Variant& v, bool causal, bool mp, const std::string& dtype) {
  return v.resolve({{"use_causal_mask", causal ? "true" : "false"},
                    {"mixed_precision", mp ? "true" : "false"},
                    {"dtype", dtype}});
}

ParamValues shape(const Variant& v, int64_t seqlen, int64_t d_head, int64_t bs = 2) {
  ParamValues p{{"seqlen", seqlen}, {"d_head", d_head}};
  if (v.name == "sd_attention_batched") p["bs"] = bs;
  return p;
}

std::string describe(const Options& o) {
  std::string s;
  for (const auto& [k, val] : o) s += k + "=" + val + " ";
  return s;
}

// One seeded input set, fast oracle (the exact oracle costs ~0.5 s per case at S = 128).
CheckResult check(const Variant& v, const Program& p, const Options& o, const ParamValues& params) {
  CheckOptions co;
  co.cases = 1;
  co.exact_oracle_max_macs = 0;
  return check_kernel(v, p, o, params, co);
}

// Every statement of a program, mutable (for the broken copies).
void for_each_mut(std::vector<Stmt>& body, const std::function<void(Stmt&)>& f) {
  for (Stmt& s : body) {
    f(s);
    if (auto* l = std::get_if<Loop>(&s.node)) for_each_mut(l->body, f);
  }
}

TEST(SdAttention, VariantsInOrderWithTheirPredecessors) {
  const std::vector<std::string> names = {
      "sd_attention",       "sd_attention_step1", "sd_attention_step2",  "sd_attention_step3",
      "sd_attention_step4", "sd_attention_step5", "sd_attention_batched"};
  const bool same[] = {false, false, true, false, false, false, false};
  ASSERT_EQ(variants().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const Variant& v = variants()[i];
    EXPECT_EQ(v.name, names[i]);
    EXPECT_EQ(v.family, "sd_attention");
    EXPECT_FALSE(v.summary.empty());
    EXPECT_FALSE(v.notes.empty());
    EXPECT_EQ(v.same_numerics_as_predecessor, same[i]) << v.name;
    if (i >= 1 && i <= 5) {
      EXPECT_EQ(v.rewrites, names[i - 1]);
      EXPECT_NE(v.models.find("5_sd_attention_trace.py, step " + std::to_string(i)),
                std::string::npos);
    } else {
      EXPECT_EQ(v.rewrites, "");
    }
  }
  EXPECT_NE(variants()[0].models.find("7af4e4d"), std::string::npos);
  EXPECT_NE(variants()[6].models.find("8370e11"), std::string::npos);
}

TEST(SdAttention, EveryOptionCombinationBuildsAndRoundTripsThroughText) {
  for (const Variant& v : variants()) {
    for (bool causal : {false, true}) {
      for (bool mp : {true, false}) {
        for (const char* dt : {"fp32", "bf16"}) {
          Options o = opts(v, causal, mp, dt);
          SCOPED_TRACE(v.name + " " + describe(o));
          Program p = v.build(o);
          EXPECT_EQ(p.name, v.name);
          std::string text = print_program(p);
          Program back = parse_program(text, v.name + ".nkir");
          EXPECT_EQ(back, p) << text;
          EXPECT_EQ(print_program(back), text);
        }
      }
    }
  }
}

TEST(SdAttention, StructureFollowsTheSource) {
  auto count = [](const Program& p, const std::string& op) {
    int n = 0;
    for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
      if (auto* i = std::get_if<InstrStmt>(&s.node)) n += op_name(i->ins) == op;
    });
    return n;
  };
  auto loops = [](const Program& p) {
    int n = 0;
    for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
      n += std::holds_alternative<Loop>(s.node);
    });
    return n;
  };
  const Options o = opts(variants()[0], false, true, "fp32");
  auto build = [&](const char* name) { return variant(name).build(o); };
  Program s0 = build("sd_attention"), s1 = build("sd_attention_step1");
  Program s2 = build("sd_attention_step2"), s3 = build("sd_attention_step3");
  Program s4 = build("sd_attention_step4"), s5 = build("sd_attention_step5");
  // Preload loops 3, 3, 2, 1, 1, 1; main loop with QK, transpose and PV(peeled) loops.
  EXPECT_EQ(loops(s0), 3 + 1 + 3);
  EXPECT_EQ(loops(s2), 2 + 1 + 3);
  EXPECT_EQ(loops(s3), 1 + 1 + 3 + 2);  // + the 32x32 vector transpose tiling
  EXPECT_EQ(loops(s5), 1 + 1 + 3);
  // Step 0 sums with tensor_reduce(add); step 1 fuses the sum into the activation.
  EXPECT_EQ(count(s0, "tensor_reduce"), 3);
  EXPECT_EQ(count(s1, "tensor_reduce"), 2);
  EXPECT_EQ(count(s1, "memset"), 1);
  // Step 5 drops the divisor broadcast, its transpose and the tensor_tensor multiply.
  EXPECT_EQ(count(s4, "tensor_tensor"), 1);
  EXPECT_EQ(count(s5, "tensor_tensor"), 0);
  EXPECT_EQ(count(s5, "tensor_scalar"), 2);  // q * 0.125 and the normalisation
  EXPECT_EQ(count(s5, "transpose"), 1);
  // Step 4 stores bf16 scores; step 3 kernel_dtype.
  auto dtype_of = [](const Program& p, const char* t) {
    return p.tensor(p.find_tensor(t).value()).dtype;
  };
  EXPECT_EQ(dtype_of(s3, "qk_res_buf"), DType::fp32);
  EXPECT_EQ(dtype_of(s4, "qk_res_buf"), DType::bf16);
  EXPECT_EQ(dtype_of(s3, "exp_res"), DType::fp32);
  EXPECT_EQ(dtype_of(s4, "exp_res"), DType::bf16);
  EXPECT_FALSE(s1.find_tensor("exp_res").has_value());
  EXPECT_TRUE(s2.find_tensor("k_block").has_value());
  EXPECT_FALSE(s3.find_tensor("k_block").has_value());
  // The causal build adds one affine_select per score tile (after the eviction).
  Program c0 = variant("sd_attention").build(opts(variants()[0], true, true, "fp32"));
  EXPECT_EQ(count(c0, "affine_select"), 1);
  EXPECT_EQ(count(s0, "affine_select"), 0);
}

TEST(SdAttention, EveryVariantPassesCheck) {
  struct Case {
    int64_t seqlen;
    bool causal, mp;
    const char* dtype;
  };
  // Every variant: one q/k tile, then two tiles causal with bf16 I/O; the third case alternates
  // between fp32 Tensor-engine operands (causal) and bf16 I/O without mixed precision.
  const Case common[] = {{128, false, true, "fp32"}, {256, true, true, "bf16"}};
  const Case alternate[] = {{256, true, false, "fp32"}, {256, false, false, "bf16"}};
  for (size_t n = 0; n < variants().size(); ++n) {
    const Variant& v = variants()[n];
    std::vector<Case> cases(std::begin(common), std::end(common));
    cases.push_back(alternate[n % 2]);
    for (const Case& c : cases) {
      Options o = opts(v, c.causal, c.mp, c.dtype);
      ParamValues params = shape(v, c.seqlen, 64);
      SCOPED_TRACE(v.name + " seqlen=" + std::to_string(c.seqlen) + " " + describe(o));
      CheckResult r = check(v, v.build(o), o, params);
      EXPECT_TRUE(r.pass) << r.summary();
    }
  }
}

TEST(SdAttention, OtherHeadSizesPassCheck) {
  // d = 32 and 128 (one q tile), d = 40 and 8 (two tiles; partial 32x32 vector transpose
  // blocks in steps 3-4).
  struct Case {
    const char* name;
    int64_t seqlen, d;
  };
  const Case cases[] = {{"sd_attention", 128, 32},
                        {"sd_attention_step3", 256, 40},
                        {"sd_attention_step4", 256, 8},
                        {"sd_attention_step5", 128, 128},
                        {"sd_attention_batched", 128, 128}};
  for (const Case& c : cases) {
    const Variant& v = variant(c.name);
    Options o = opts(v, c.d == 8, true, c.d == 40 ? "bf16" : "fp32");
    SCOPED_TRACE(v.name + " d_head=" + std::to_string(c.d));
    CheckResult r = check(v, v.build(o), o, shape(v, c.seqlen, c.d));
    EXPECT_TRUE(r.pass) << r.summary();
  }
}

// The output of variants 0..5 (tutorial and steps) for one option set, on the same inputs.
std::vector<HostTensor> step_outputs(const Options& o) {
  ParamValues params = shape(variants()[0], 256, 64);
  std::vector<HostTensor> outs;
  std::map<std::string, HostTensor> in;
  for (int s = 0; s <= 5; ++s) {
    Program p = variants()[s].build(o);
    if (s == 0) in = random_inputs(p, params, 42);
    RunResult r = run_program(p, params, in);
    EXPECT_FALSE(r.error) << r.error->what();
    outs.push_back(r.outputs.at("out"));
  }
  return outs;
}

bool same_bits(const HostTensor& x, const HostTensor& y) {
  return x.shape == y.shape && x.bytes == y.bytes;
}

TEST(SdAttention, SameNumericsClaimsHoldBitForBit) {
  struct Combo {
    bool causal, mp;
    const char* dtype;
  };
  const Combo combos[] = {{false, true, "fp32"},
                          {false, true, "bf16"},
                          {false, false, "fp32"},
                          {false, false, "bf16"},
                          {true, true, "bf16"}};
  for (const Combo& c : combos) {
    Options o = opts(variants()[0], c.causal, c.mp, c.dtype);
    SCOPED_TRACE(describe(o));
    const bool fp32 = std::strcmp(c.dtype, "fp32") == 0;
    std::vector<HostTensor> out = step_outputs(o);
    // step 2 claims the numerics of step 1: always bit-identical.
    EXPECT_TRUE(same_bits(out[1], out[2]));
    // The false claims: identical for an fp32 kernel_dtype, different for bf16.
    EXPECT_EQ(same_bits(out[0], out[1]), fp32);
    EXPECT_EQ(same_bits(out[4], out[5]), fp32);
    // step 3 differs from step 2 only for bf16 exp fed as fp32 P (no mixed precision).
    EXPECT_EQ(same_bits(out[2], out[3]), fp32 || c.mp);
    // step 4 stores the scores in the pe dtype: a change when that is narrower than
    // kernel_dtype (bf16 operands, fp32 kernel_dtype), a no-op when both are bf16.
    if (c.mp && fp32) {
      EXPECT_FALSE(same_bits(out[3], out[4]));
    }
  }
}

TEST(SdAttention, BenchmarkShapeFitsTrn1) {
  // The calibration shape (S = 4096, d = 64, fp32 inputs, mixed precision): every step runs
  // (trace only) within trn1's SBUF and PSUM.
  for (const Variant& v : variants()) {
    Options o = opts(v, false, true, "fp32");
    Program p = v.build(o);
    ParamValues params = shape(v, 4096, 64, 1);
    SCOPED_TRACE(v.name);
    RunOptions ro;
    ro.compute_values = false;
    ro.record_trace = false;
    RunResult r = interptest::run_random(p, params, 1, ro);
    EXPECT_FALSE(r.error) << r.error->what();
  }
}

TEST(SdAttention, LargestSeqlenThatFitsTrn1) {
  // SBUF capacity, not the params, bounds seqlen; recorded here so a change shows up.
  const HwConfig& hw = hw_config_trn1();
  const int64_t usable = hw.sbuf_bytes_per_partition - hw.sbuf_reserved_bytes_per_partition;
  auto largest = [&](const char* name, bool mp, const char* dt) {
    const Variant& v = variant(name);
    Program p = v.build(opts(v, false, mp, dt));
    Allocation a = allocate(p, hw);
    int64_t best = 0;
    for (int64_t s = 128; s <= 16384; s += 128) {
      Env env;
      env.set("seqlen", s);
      env.set("d_head", 64);
      if (eval(a.sbuf_peak_bytes, env) <= usable) best = s;
    }
    return best;
  };
  // Under the compiler's allocation rules (model/ir/liveness.h): a q tile's buffers count from
  // their first use to their last, not for the whole q tile (10368, 16256 and 6784 when every
  // buffer of a scope lived for the whole scope); step5 fits everything searched.
  EXPECT_EQ(largest("sd_attention", true, "fp32"), 13824);
  EXPECT_EQ(largest("sd_attention_step5", true, "fp32"), 16384);
  EXPECT_EQ(largest("sd_attention", false, "fp32"), 9984);
}

TEST(SdAttention, CausalPredicateOffByOneFailsCheck) {
  const Variant& v = variant("sd_attention");
  Options o = opts(v, true, true, "fp32");
  Program p = v.build(o);
  int edited = 0;
  for_each_mut(p.body, [&](Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      if (auto* sel = std::get_if<AffineSelect>(&i->ins)) {
        sel->offset = sel->offset + 1;  // key q + 1 becomes visible
        ++edited;
      }
    }
  });
  ASSERT_EQ(edited, 1);
  validate_program(p);
  CheckResult r = check(v, p, o, shape(v, 256, 64));
  EXPECT_FALSE(r.pass) << r.summary();
}

TEST(SdAttention, DroppedLastKeyTileFailsCheck) {
  for (const char* name : {"sd_attention_step4", "sd_attention_step5", "sd_attention_batched"}) {
    const Variant& v = variant(name);
    Options o = opts(v, false, true, "fp32");
    Program p = v.build(o);
    int edited = 0;
    for_each_mut(p.body, [&](Stmt& s) {
      auto* l = std::get_if<Loop>(&s.node);
      if (!l || l->body.size() != 1) return;
      auto* i = std::get_if<InstrStmt>(&l->body[0].node);
      auto* mm = i ? std::get_if<Matmul>(&i->ins) : nullptr;
      if (mm && mm->accumulate) {
        l->stop = l->stop - 1;  // the PV accumulation group misses the last key tile
        ++edited;
      }
    });
    ASSERT_EQ(edited, 1) << name;
    validate_program(p);
    CheckResult r = check(v, p, o, shape(v, 256, 64));
    EXPECT_FALSE(r.pass) << name << "\n" << r.summary();
  }
}

}  // namespace
}  // namespace ncv::kernels
