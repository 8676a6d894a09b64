// The ISA rules are stated once (model/isa/rules.h) and both the interpreter and the solver are
// built from them: for one rule at a time, change its limit in the hardware configuration and
// see the interpreter's run and the solver's obligation move together. Each program sits exactly
// at trn1's limit, so it is clean on trn1 and breaks the rule once the limit moves by one step.
// (The partition count is covered by BufferPartitions: an operand never spans more partitions
// than its buffer, so moving the count always fails the buffer rule first at run time; the
// alignment part of the partition rule has no generation limit to move.)
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"
#include "model/isa/rules.h"
#include "solver/prove.h"

namespace ncv::solver {
namespace {

struct RuleCase {
  std::string name;
  Rule rule;
  std::function<Program()> build;
  std::function<void(HwConfig&)> move_limit;          // makes the program break the rule
  std::function<std::string(const HwConfig&)> label;  // the obligation's name on a config
};

void PrintTo(const RuleCase& c, std::ostream* os) {
  *os << c.name;
}

// The interpreter's verdict: the kind of the first dynamic error, or nothing.
std::optional<CheckKind> run_error(const Program& p, const HwConfig& hw) {
  RunOptions o;
  o.hw = &hw;
  const ParamValues params = {{"n", 1}};
  RunResult r = interptest::run_random(p, params, 7, o);
  if (!r.error) return std::nullopt;
  return r.error->kind;
}

// The solver's verdict on the rule's obligations: proved when every one is.
struct SolverVerdict {
  size_t obligations = 0, proved = 0, reproduced = 0;
};
SolverVerdict prove_rule(const Program& p, const HwConfig& hw, const std::string& label) {
  ProveOptions o;
  o.hw = &hw;
  SolverVerdict v;
  for (const Obligation& ob : prove_program(p, o)) {
    if (ob.rule != label) continue;
    ++v.obligations;
    if (ob.verdict == Verdict::proved) ++v.proved;
    if (ob.replay && ob.replay->reproduced) ++v.reproduced;
  }
  return v;
}

// A program with one param n in [1, 1], so that every verdict is about one point.
Builder builder(const std::string& name) {
  Builder b(name);
  b.param("n", 1, 1);
  return b;
}

Program matmul(int64_t k, int64_t n_free, int64_t dst_free) {
  Builder b = builder("matmul");
  auto st = b.sbuf("st", DType::bf16, {k, 128});
  auto mv = b.sbuf("mv", DType::bf16, {k, n_free});
  auto dst = b.psum("dst", DType::fp32, {128, dst_free});
  b.memset(st(), 1.0f);
  b.memset(mv(), 1.0f);
  b.matmul(dst(), st(), mv());
  return b.finish();
}

Program transpose(int64_t side, Engine engine) {
  Builder b = builder("transpose");
  const bool tensor = engine == Engine::Tensor;
  auto src = b.sbuf("src", DType::fp32, {side, side});
  auto dst =
      tensor ? b.psum("dst", DType::fp32, {side, side}) : b.sbuf("dst", DType::fp32, {side, side});
  b.memset(src(), 1.0f);
  b.transpose(dst(), src(), engine);
  return b.finish();
}

Program psum_copy(int64_t free) {
  Builder b = builder("psum_copy");
  auto acc = b.psum("acc", DType::fp32, {128, free});
  b.memset(acc(), 1.0f);
  return b.finish();
}

Program scalar_copy() {
  Builder b = builder("scalar_copy");
  auto src = b.sbuf("src", DType::fp32, {128, 64});
  auto dst = b.sbuf("dst", DType::fp32, {128, 64});
  b.memset(src(), 1.0f);
  b.tensor_copy(dst(), src(), Engine::Scalar);
  return b.finish();
}

std::vector<RuleCase> cases() {
  return {
      {"MatmulK", Rule::matmul_k, [] { return matmul(128, 512, 512); },
       [](HwConfig& h) { h.matmul_max_k = 64; },
       [](const HwConfig& h) { return rule_label(Rule::matmul_k, h.matmul_max_k); }},
      {"MatmulN", Rule::matmul_n, [] { return matmul(128, 512, 512); },
       [](HwConfig& h) { h.matmul_max_n = 256; },
       [](const HwConfig& h) { return rule_label(Rule::matmul_n, h.matmul_max_n); }},
      {"PsumBank", Rule::psum_bank, [] { return matmul(128, 512, 512); },
       [](HwConfig& h) { h.psum_bank_bytes = 1024; },
       [](const HwConfig&) { return std::string(rule_info(Rule::psum_bank).name); }},
      {"TensorTranspose", Rule::transpose_size, [] { return transpose(128, Engine::Tensor); },
       [](HwConfig& h) { h.tensor_transpose_max = 64; },
       [](const HwConfig& h) {
         return rule_label(Rule::transpose_size, transpose_limit(Engine::Tensor, h));
       }},
      {"VectorTranspose", Rule::transpose_size, [] { return transpose(32, Engine::Vector); },
       [](HwConfig& h) { h.vector_transpose_max = 16; },
       [](const HwConfig& h) {
         return rule_label(Rule::transpose_size, transpose_limit(Engine::Vector, h));
       }},
      {"PsumFreeSize", Rule::free_size, [] { return psum_copy(512); },
       [](HwConfig& h) { h.free_max_psum_elems = 256; },
       [](const HwConfig& h) { return free_size_label(Memory::PSUM, h); }},
      {"BufferPartitions", Rule::buffer_partitions, [] { return psum_copy(64); },
       [](HwConfig& h) { h.partitions = 64; },
       [](const HwConfig& h) { return rule_label(Rule::buffer_partitions, h.partitions); }},
      {"ScalarTensorCopy", Rule::scalar_tensor_copy, scalar_copy,
       [](HwConfig& h) { h.scalar_tensor_copy = false; },
       [](const HwConfig&) { return std::string(rule_info(Rule::scalar_tensor_copy).name); }},
  };
}

class SharedRule : public testing::TestWithParam<RuleCase> {};

TEST_P(SharedRule, InterpreterAndSolverMoveTogether) {
  const RuleCase& c = GetParam();
  const Program p = c.build();
  // At the limit (trn2 for the scalar tensor_copy, which trn1 lacks): both accept.
  const HwConfig at_limit =
      c.rule == Rule::scalar_tensor_copy ? hw_config_trn2() : hw_config_trn1();
  EXPECT_EQ(run_error(p, at_limit), std::nullopt) << c.name;
  const SolverVerdict ok = prove_rule(p, at_limit, c.label(at_limit));
  EXPECT_GE(ok.obligations, 1u) << c.name << ": no obligation '" << c.label(at_limit) << "'";
  EXPECT_EQ(ok.proved, ok.obligations) << c.name;

  // One step past it: the interpreter raises the rule's kind, the solver refutes the rule and
  // its counterexample replays as that error.
  HwConfig moved = at_limit;
  moved.name = "moved";
  c.move_limit(moved);
  EXPECT_EQ(run_error(p, moved), rule_info(c.rule).kind) << c.name;
  const SolverVerdict bad = prove_rule(p, moved, c.label(moved));
  EXPECT_GE(bad.obligations, 1u) << c.name << ": no obligation '" << c.label(moved) << "'";
  EXPECT_LT(bad.proved, bad.obligations) << c.name;
  EXPECT_GE(bad.reproduced, 1u) << c.name;
}

INSTANTIATE_TEST_SUITE_P(IsaRules, SharedRule, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<RuleCase>& i) { return i.param.name; });

// Every rule has a name, a kind and a source.
TEST(IsaRules, EveryRuleHasANameAKindAndASource) {
  for (int r = 0; r < kNumRules; ++r) {
    const RuleInfo& info = rule_info(static_cast<Rule>(r));
    EXPECT_FALSE(info.name.empty()) << r;
    EXPECT_FALSE(info.source.empty()) << r;
    EXPECT_FALSE(check_kind_name(info.kind).empty()) << r;
  }
}

// The top-8 rules have no generation limit to move: programs just inside and just outside them,
// judged alike by the interpreter and the solver (whose counterexample replays).
Program top8(int64_t data_free, int64_t vals_free) {
  Builder b = builder("top8");
  auto data = b.sbuf("data", DType::fp32, {128, data_free});
  auto vals = b.sbuf("vals", DType::fp32, {128, vals_free});
  auto idx = b.sbuf("idx", DType::uint32, {128, 8});
  b.memset(data(), 1.0f);
  b.emit(Max8{vals(), data()});
  b.emit(FindIndex8{idx(), data(), vals()});
  return b.finish();
}

TEST(IsaRules, Top8RulesInterpreterAndSolverAgree) {
  const HwConfig& hw = hw_config_trn1();
  struct Case {
    int64_t data_free, vals_free;
    std::optional<Rule> broken;
  };
  for (const Case& c :
       {Case{8, 8, std::nullopt}, Case{16384, 8, std::nullopt}, Case{7, 8, Rule::top8_source_size},
        Case{16385, 8, Rule::top8_source_size}, Case{64, 9, Rule::top8_values}}) {
    SCOPED_TRACE(std::to_string(c.data_free) + " " + std::to_string(c.vals_free));
    const Program p = top8(c.data_free, c.vals_free);
    for (Rule r : {Rule::top8_source_size, Rule::top8_values}) {
      const SolverVerdict v = prove_rule(p, hw, std::string(rule_info(r).name));
      EXPECT_GE(v.obligations, 1u);
      if (c.broken == r) {
        EXPECT_LT(v.proved, v.obligations);
        EXPECT_GE(v.reproduced, 1u);
      } else {
        EXPECT_EQ(v.proved, v.obligations);
      }
    }
    const std::optional<CheckKind> err = run_error(p, hw);
    if (c.broken) {
      EXPECT_EQ(err, rule_info(*c.broken).kind);
    } else {
      EXPECT_EQ(err, std::nullopt);
    }
  }
}

// The free-size limit is a tile's ("maximum free dimension of a tile", nl.tile_size): a read
// that repeats a PSUM tile's elements through a zero-step (broadcast) dim counts each distinct
// element once. nki-library d2ad3a5's layernorm_tkg, a hardware test row, reads a [128, 320]
// PSUM mean broadcast to [128, 320, 24]. `tile` distinct fp32 elements are read `repeat` times
// each into SBUF.
Program psum_broadcast_read(int64_t tile, int64_t repeat) {
  Builder b = builder("psum_broadcast_read");
  auto acc = b.psum("acc", DType::fp32, {128, tile, 1});
  auto dst = b.sbuf("dst", DType::fp32, {128, tile, repeat});
  b.memset(acc(), 1.0f);
  b.tensor_copy(dst(), broadcast(acc(), 2, repeat), Engine::Vector);
  return b.finish();
}

TEST(IsaRules, PsumFreeSizeCountsDistinctElementsOfABroadcastRead) {
  HwConfig hw = hw_config_trn1();
  hw.name = "psum512";
  hw.free_max_psum_elems = 512;
  const std::string label = free_size_label(Memory::PSUM, hw);
  // 256 distinct elements read 8 times (2048 reads): within the 512-element tile limit.
  const Program inside = psum_broadcast_read(256, 8);
  EXPECT_EQ(run_error(inside, hw), std::nullopt);
  const SolverVerdict ok = prove_rule(inside, hw, label);
  EXPECT_GE(ok.obligations, 1u);
  EXPECT_EQ(ok.proved, ok.obligations);
  // 1024 distinct elements (the memset's operand, and the read) are past it: both refuse.
  const Program outside = psum_broadcast_read(1024, 2);
  EXPECT_EQ(run_error(outside, hw), rule_info(Rule::free_size).kind);
  const SolverVerdict bad = prove_rule(outside, hw, label);
  EXPECT_LT(bad.proved, bad.obligations);
  EXPECT_GE(bad.reproduced, 1u);
}

}  // namespace
}  // namespace ncv::solver
