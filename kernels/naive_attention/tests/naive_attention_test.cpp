// naive_attention (eager attention, every stage in HBM): metadata, the materialised HBM
// intermediates, .nkir round trips for every option combination, `check` against the oracle at
// small shapes and at seqlens that are not multiples of 128 (a partial last tile), bit-for-bit
// agreement with the contract reference (the contract is exact for mixed precision fp32), capacity
// at the largest seqlens, and broken copies (causal mask off by one, P not normalised, the partial
// tail tile ignored) that must fail.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "check/check.h"
#include "kernels/families.h"
#include "model/interp/dynamic_error.h"
#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"
#include "oracle/contract_reference.h"
#include "oracle/input_distributions.h"

namespace ncv::kernels {
namespace {

const Variant& naive() {
  static const Variant v = naive_attention_variant();
  return v;
}

Options opts(bool causal, bool mp = true, const std::string& dtype = "fp32") {
  return naive().resolve({{"use_causal_mask", causal ? "true" : "false"},
                          {"mixed_precision", mp ? "true" : "false"},
                          {"dtype", dtype}});
}

ParamValues shape(int64_t seqlen, int64_t d_head) {
  return {{"seqlen", seqlen}, {"d_head", d_head}};
}

std::string describe(const Options& o, const ParamValues& p) {
  std::string s;
  for (const auto& [k, val] : o) s += k + "=" + val + " ";
  for (const auto& [k, val] : p) s += k + "=" + std::to_string(val) + " ";
  return s;
}

CheckResult check(const Program& p, const Options& o, const ParamValues& params, int cases) {
  CheckOptions co;
  co.cases = cases;
  return check_kernel(naive(), p, o, params, co);
}

// Every statement of a program, mutable (for the broken copies).
void for_each_mut(std::vector<Stmt>& body, const std::function<void(Stmt&)>& f) {
  for (Stmt& s : body) {
    f(s);
    if (auto* l = std::get_if<Loop>(&s.node)) for_each_mut(l->body, f);
  }
}

TEST(NaiveAttention, Metadata) {
  const Variant& v = naive();
  EXPECT_EQ(v.name, "naive_attention");
  EXPECT_EQ(v.family, "naive_attention");
  EXPECT_TRUE(v.rewrites.empty());
  EXPECT_FALSE(v.summary.empty());
  EXPECT_FALSE(v.models.empty());
  EXPECT_FALSE(v.notes.empty());
  EXPECT_EQ(v.options.size(), 3u);
  const oracle::PrecisionContract c = v.contract(opts(false));
  c.validate();
  EXPECT_EQ(c.norm, oracle::Normalisation::before_pv);
  EXPECT_TRUE(c.scale_folded_into_q);
  EXPECT_EQ(c.q_dtype, DType::bf16);
  EXPECT_EQ(c.score_dtype, DType::fp32);
  EXPECT_EQ(c.p_dtype, DType::bf16);
  EXPECT_EQ(c.norm_dtype, DType::fp32);
  // bf16 inputs with fp32 matmuls: the stored probs are bf16, so P is bf16 whatever pe is.
  const oracle::PrecisionContract b = v.contract(opts(false, false, "bf16"));
  EXPECT_EQ(b.q_dtype, DType::fp32);
  EXPECT_EQ(b.score_dtype, DType::bf16);
  EXPECT_EQ(b.p_dtype, DType::bf16);
  EXPECT_EQ(b.out_dtype, DType::bf16);
  const oracle::AttentionSpec s = v.spec(opts(true), shape(256, 64));
  EXPECT_EQ(s.seqlen_q, 256);
  EXPECT_EQ(s.d_head, 64);
  EXPECT_EQ(s.scale, 0.125);
  EXPECT_EQ(s.mask.kind, oracle::MaskKind::causal);
}

// An eager lowering takes any sequence length: the domain is every seqlen in [1, 8192], in one
// Program (seqlen stays symbolic), and the spec follows the odd lengths.
TEST(NaiveAttention, DomainIsEverySeqlenUpTo8192) {
  const Program p = naive().build(opts(false));
  const Param* seq = p.find_param("seqlen");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->lo, 1);
  EXPECT_EQ(seq->hi, 8192);
  EXPECT_EQ(seq->multiple_of, 1);
  const Param* d = p.find_param("d_head");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->lo, 1);
  EXPECT_EQ(d->hi, 128);
  const oracle::AttentionSpec s = naive().spec(opts(true), shape(129, 40));
  EXPECT_EQ(s.seqlen_q, 129);
  EXPECT_EQ(s.seqlen_kv, 129);
}

TEST(NaiveAttention, EveryStageIsMaterialisedInHbm) {
  for (bool causal : {false, true}) {
    for (const char* dt : {"fp32", "bf16"}) {
      const bool bf16 = std::string(dt) == "bf16";
      const Program p = naive().build(opts(causal, true, dt));
      std::vector<std::string> scratch;
      for (const Tensor& t : p.tensors) {
        if (t.kind == TensorKind::Scratch) {
          EXPECT_EQ(t.memory, Memory::HBM);
          scratch.push_back(t.name);
        }
      }
      std::vector<std::string> want = {"scores", "row_max", "exp", "row_sum", "probs"};
      if (causal) want.insert(want.begin() + 1, "masked_scores");
      if (bf16) want.push_back("probs_cast");
      EXPECT_EQ(scratch, want);
      // One top-level loop per eager op: no fusion across ops.
      int passes = 0;
      for (const Stmt& s : p.body) passes += std::holds_alternative<Loop>(s.node) ? 1 : 0;
      EXPECT_EQ(passes, 6 + (causal ? 1 : 0) + (bf16 ? 1 : 0));
    }
  }
}

TEST(NaiveAttention, EveryOptionCombinationRoundTrips) {
  for (bool causal : {false, true}) {
    for (bool mp : {true, false}) {
      for (const char* dt : {"fp32", "bf16"}) {
        const Options o = opts(causal, mp, dt);
        SCOPED_TRACE(describe(o, {}));
        const Program p = naive().build(o);
        const std::string text = print_program(p);
        const Program back = parse_program(text, "naive_attention.nkir");
        EXPECT_EQ(back, p);
        EXPECT_EQ(print_program(back), text);
      }
    }
  }
}

TEST(NaiveAttention, PassesCheckAtSmallShapes) {
  for (bool causal : {false, true}) {
    const Options o = opts(causal);
    const Program p = naive().build(o);
    for (int64_t seqlen : {128, 256, 384}) {
      for (int64_t d : {64, 32}) {
        const ParamValues params = shape(seqlen, d);
        // Every hard distribution at one shape (causal), one case at the others.
        const int cases = (causal && seqlen == 256 && d == 64) ? 9 : 1;
        const CheckResult r = check(p, o, params, cases);
        EXPECT_TRUE(r.pass) << describe(o, params) << "\n" << r.summary();
      }
    }
  }
}

TEST(NaiveAttention, PassesCheckForOtherDtypes) {
  for (bool causal : {false, true}) {
    for (bool mp : {true, false}) {
      for (const char* dt : {"fp32", "bf16"}) {
        if (mp && std::string(dt) == "fp32") continue;  // covered above
        const Options o = opts(causal, mp, dt);
        const ParamValues params = shape(256, 64);
        const CheckResult r = check(naive().build(o), o, params, 2);
        EXPECT_TRUE(r.pass) << describe(o, params) << "\n" << r.summary();
      }
    }
  }
}

// Seqlens that leave a partial last tile along the query and key axes (1: one row; 127: one
// short tile; 129: a full tile and a 1-row tail; 200, 1000: a 72- and 104-row tail, and 1000 a
// 488-key QK^T chunk), and 384 as the multiple-of-128 control; causal and not, fp32 and bf16.
TEST(NaiveAttention, PassesCheckAtSeqlensThatAreNotMultiplesOf128) {
  for (bool causal : {false, true}) {
    for (const char* dt : {"fp32", "bf16"}) {
      const Options o = opts(causal, true, dt);
      const Program p = naive().build(o);
      for (int64_t seqlen : {1, 127, 129, 200, 384, 1000}) {
        const ParamValues params = shape(seqlen, 40);
        const CheckResult r = check(p, o, params, 1);
        EXPECT_TRUE(r.pass) << describe(o, params) << "\n" << r.summary();
      }
    }
  }
}

// The fp32 Tensor-engine path (mixed_precision=false) through the partial tiles too.
TEST(NaiveAttention, PassesCheckWithFp32MatmulsAtAPartialTile) {
  for (bool causal : {false, true}) {
    const Options o = opts(causal, false, "fp32");
    const ParamValues params = shape(200, 64);
    const CheckResult r = check(naive().build(o), o, params, 2);
    EXPECT_TRUE(r.pass) << describe(o, params) << "\n" << r.summary();
  }
}

TEST(NaiveAttention, OddHeadSizesAndTailChunk) {
  // d_head 1 and 128 (the domain's ends); seqlen 640 = one full 512-key chunk plus a 128 tail.
  const Options o = opts(true);
  const Program p = naive().build(o);
  for (const ParamValues& params : {shape(128, 1), shape(128, 128), shape(640, 16)}) {
    const CheckResult r = check(p, o, params, 1);
    EXPECT_TRUE(r.pass) << describe(o, params) << "\n" << r.summary();
  }
}

// With bf16 matmul operands every product is exact in fp32, so the PE array's fma chain equals
// the contract reference's rounded products; the fp32 softmax rounds where the reference does.
// The kernel must then agree with the reference bit for bit.
// At 200 the last query tile and the last PV key tile are partial.
TEST(NaiveAttention, MatchesTheContractReferenceBitForBit) {
  for (const Options& o : {opts(false), opts(true), opts(true, true, "bf16")}) {
    const Program p = naive().build(o);
    for (const ParamValues& params : {shape(384, 64), shape(200, 64)}) {
      const oracle::AttentionSpec spec = naive().spec(o, params);
      const oracle::AttentionInputs in =
          oracle::generate_inputs(spec, oracle::Distribution::normal, 7);
      const RunResult run =
          run_program(p, params, pack_inputs(naive().layout, p, params, spec, in));
      ASSERT_FALSE(run.error) << run.error->message;
      const std::vector<double> got = unpack_output(naive().layout, spec, run.outputs);
      const std::vector<double> want = oracle::contract_reference(naive().contract(o), spec, in);
      ASSERT_EQ(got.size(), want.size());
      int64_t diff = 0;
      for (size_t x = 0; x < got.size(); ++x) diff += got[x] != want[x] ? 1 : 0;
      EXPECT_EQ(diff, 0) << describe(o, params);
    }
  }
}

TEST(NaiveAttention, LargestSeqlenFitsTrn1) {
  // Trace-only runs at the top of the domain, with full tiles (8192) and with a 127-row partial
  // last tile (8191): bounds, partitions, PSUM banks and SBUF capacity.
  for (const char* dt : {"fp32", "bf16"}) {
    for (bool mp : {true, false}) {
      const Options o = opts(true, mp, dt);
      const Program p = naive().build(o);
      RunOptions ro;
      ro.compute_values = false;
      ro.record_trace = false;
      for (int64_t seqlen : {8192, 8191}) {
        const ParamValues params = shape(seqlen, 128);
        const RunResult r = interptest::run_random(p, params, 1, ro);
        EXPECT_FALSE(r.error) << describe(o, params) << (r.error ? r.error->message : "");
      }
    }
  }
}

// The broken copy runs clean on the model and fails only on its numbers.
void expect_numerical_failure(const CheckResult& r) {
  EXPECT_FALSE(r.pass) << r.summary();
  for (const CaseResult& c : r.cases) {
    EXPECT_FALSE(c.run_error) << c.run_error->message;
    EXPECT_FALSE(c.pass) << r.summary();
  }
}

TEST(NaiveAttention, BrokenCopiesFail) {
  const Options o = opts(true);
  const ParamValues params = shape(256, 64);

  // The mask pass off by one: each query also sees the next key.
  Program off_by_one = naive().build(o);
  int selects = 0;
  for_each_mut(off_by_one.body, [&](Stmt& s) {
    auto* ins = std::get_if<InstrStmt>(&s.node);
    if (!ins) return;
    if (auto* sel = std::get_if<AffineSelect>(&ins->ins)) {
      sel->offset = sel->offset + 1;
      ++selects;
    }
  });
  ASSERT_EQ(selects, 1);
  expect_numerical_failure(check(off_by_one, o, params, 2));

  // P not normalised: the division by the row sum becomes a plain copy.
  Program unnormalised = naive().build(o);
  int divides = 0;
  for_each_mut(unnormalised.body, [&](Stmt& s) {
    auto* ins = std::get_if<InstrStmt>(&s.node);
    if (!ins) return;
    if (auto* ts = std::get_if<TensorScalar>(&ins->ins); ts && ts->op0 == AluOp::divide) {
      ins->ins = TensorCopy{ts->dst, ts->src};
      ++divides;
    }
  });
  ASSERT_EQ(divides, 1);
  expect_numerical_failure(check(unnormalised, o, params, 2));
}

// The kernel with the loops over 128-wide tiles (the query tiles of every pass, and the PV key
// tiles when `var` is given, only that loop) cut to floor(S / 128) iterations, as if the tail
// tile had been forgotten. Returns how many loops were cut.
int drop_tail_tiles(Program& p, const std::string& only_var = "") {
  const Expr S = Expr::var("seqlen");
  const Expr ceil_tiles = Expr::floordiv(S + 127, 128);
  int cut = 0;
  for_each_mut(p.body, [&](Stmt& s) {
    auto* loop = std::get_if<Loop>(&s.node);
    if (!loop || loop->stop != ceil_tiles) return;
    if (!only_var.empty() && loop->var != only_var) return;
    loop->stop = Expr::floordiv(S, 128);
    ++cut;
  });
  return cut;
}

// A tail bug is invisible at multiples of 128: the broken copies pass there and must fail at
// every other seqlen.
TEST(NaiveAttention, IgnoringThePartialTailTileFailsOnlyAtNonMultiples) {
  for (bool causal : {false, true}) {
    const Options o = opts(causal);
    // Every query-tile loop and the PV key loop: the tail rows of `out` are never written.
    Program no_tail_rows = naive().build(o);
    const int passes = causal ? 7 : 6;  // the fp32 build has no cast pass
    ASSERT_EQ(drop_tail_tiles(no_tail_rows), passes + 1) << "the query loops and the PV key loop";
    EXPECT_TRUE(check(no_tail_rows, o, shape(256, 32), 1).pass);
    for (int64_t seqlen : {1, 200}) {
      const CheckResult r = check(no_tail_rows, o, shape(seqlen, 32), 1);
      EXPECT_FALSE(r.pass) << "seqlen " << seqlen;
      ASSERT_EQ(r.cases.size(), 1u);
      ASSERT_TRUE(r.cases[0].run_error) << "seqlen " << seqlen << "\n" << r.summary();
      EXPECT_EQ(r.cases[0].run_error->kind, CheckKind::output_not_written) << r.summary();
    }

    // Only the PV key loop: every output row is written, but without the keys of the partial
    // last tile; the oracle comparison catches it.
    Program no_tail_keys = naive().build(o);
    ASSERT_EQ(drop_tail_tiles(no_tail_keys, "t7"), 1);
    EXPECT_TRUE(check(no_tail_keys, o, shape(256, 32), 1).pass);
    expect_numerical_failure(check(no_tail_keys, o, shape(200, 32), 2));
  }
}

}  // namespace
}  // namespace ncv::kernels
