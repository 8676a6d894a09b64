// The symbolic executor against the interpreter (the self-check): a program's output terms,
// evaluated on a run's inputs, give exactly that run's output bits (NaN payloads aside). Run on
// every registered attention kernel at two shapes and all option combinations, on the example
// programs, on a program that uses every instruction, and on inputs holding NaN, Inf and -0
// (which the Tensor-engine transpose spreads along its output rows). Terms built from one input
// set must also reproduce a run on another (the terms are functions of the inputs, and the check
// is not vacuous), and the executor's memory model (dtype mismatches, partial overwrites) is
// tested directly on hand-made Views.
#include "equiv/term_executor.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "equiv/term.h"
#include "equiv/term_eval.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {
namespace {

using Inputs = std::map<std::string, HostTensor>;

// A program run with the executor observing it.
struct Traced {
  TermStore store;
  TermExecutor exec{store, 0};
  RunResult run;
};

std::unique_ptr<Traced> trace(const Program& p, const ParamValues& params, const Inputs& inputs,
                              ExecMode mode = ExecMode::fast) {
  auto t = std::make_unique<Traced>();
  RunOptions o;
  o.observer = &t->exec;
  o.mode = mode;
  o.record_trace = false;
  t->run = run_program(p, params, inputs, o);
  return t;
}

struct Comparison {
  int64_t elements = 0, mismatches = 0, undefined = 0;
  std::string first;  // the first mismatch, described
};

// Output terms of `t` evaluated on `inputs`, against `expected` (a run's outputs): equal bits, or
// both NaN. Outputs whose term is undefined (opaque) are counted apart.
Comparison compare(const Traced& t, const Inputs& inputs, const Inputs& expected) {
  std::vector<bool> undef;
  const std::vector<uint32_t> bits = evaluate_terms(t.store, inputs, &undef);
  Comparison c;
  for (const auto& [name, terms] : t.exec.outputs()) {
    const HostTensor& h = expected.at(name);
    EXPECT_EQ(static_cast<int64_t>(terms.size()), h.num_elements()) << name;
    for (size_t k = 0; k < terms.size(); ++k) {
      const TermId id = terms[k];
      ++c.elements;
      if (undef[id]) {
        ++c.undefined;
        continue;
      }
      // A term may have a narrower float dtype than its element (term.h round rule): compare
      // in the output's dtype.
      const uint32_t got = t.store.dtype(id) == h.dtype
                               ? bits[id]
                               : encode_from_float(h.dtype, term_value(t.store, bits, id));
      const uint32_t want = h.bits(static_cast<int64_t>(k));
      const bool both_nan =
          std::isnan(decode_to_float(h.dtype, got)) && std::isnan(decode_to_float(h.dtype, want));
      if (got != want && !both_nan) {
        if (c.mismatches++ == 0) {
          std::ostringstream s;
          s << name << "[" << k << "]: term gives 0x" << std::hex << got << ", run gave 0x" << want
            << ": " << t.store.str(id, 4);
          c.first = s.str();
        }
      }
    }
  }
  return c;
}

// The self-check: no mismatch, and (unless allowed) no undefined output.
void expect_self_check(const Program& p, const ParamValues& params, const Inputs& inputs,
                       const std::string& what, ExecMode mode = ExecMode::fast) {
  SCOPED_TRACE(what);
  auto t = trace(p, params, inputs, mode);
  ASSERT_FALSE(t->run.error) << t->run.error->message;
  const Comparison c = compare(*t, inputs, t->run.outputs);
  EXPECT_GT(c.elements, 0);
  EXPECT_EQ(c.mismatches, 0) << c.first;
  EXPECT_EQ(c.undefined, 0);
}

// Some input elements replaced by NaNs (with payloads and signs), infinities and -0.
Inputs with_specials(Inputs in, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t specials[] = {0x7fc00000u, 0xffc00000u, 0x7fa00001u, 0x7f800000u,
                               0xff800000u, 0x80000000u, 0x80000000u, 0x80000000u};
  for (auto& [name, h] : in) {
    if (!is_float(h.dtype)) continue;
    const int64_t n = h.num_elements();
    for (int i = 0; i < 6; ++i) {
      const auto k = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      const uint32_t b = specials[rng() % std::size(specials)];
      h.set(k, std::bit_cast<float>(b));  // rounded into the dtype (a NaN stays a NaN)
    }
    // And a run of -0 (which the transpose turns into +0).
    for (int64_t k = 0; k < std::min<int64_t>(n, 40); ++k) h.set(k, -0.0f);
  }
  return in;
}

// ---------------------------------------------------------------------------------------------
// Registered kernels.

struct KernelCase {
  std::string variant;
  std::vector<ParamValues> params;  // the first also runs with special input values
  // Too big for the routine suite (seqlen >= 1024: about 4 GB of terms and minutes per option
  // set); runs when the environment sets NCV_EQUIV_LARGE.
  bool large = false;
};

ParamValues shape(int64_t seqlen, int64_t d_head, int64_t bs = 0) {
  ParamValues p{{"seqlen", seqlen}, {"d_head", d_head}};
  if (bs > 0) p["bs"] = bs;
  return p;
}

std::string describe(const ParamValues& params) {
  std::string s;
  for (const auto& [k, val] : params) s += k + "=" + std::to_string(val) + " ";
  return s;
}

// Every option combination the variant offers.
std::vector<kernels::Options> option_sets(const kernels::Variant& v) {
  std::vector<kernels::Options> out;
  for (const char* causal : {"false", "true"}) {
    for (const char* mp : {"true", "false"}) {
      for (const char* dt : {"fp32", "bf16"}) {
        if (!v.offers("use_causal_mask", causal) || !v.offers("mixed_precision", mp) ||
            !v.offers("dtype", dt)) {
          continue;
        }
        out.push_back(
            v.resolve({{"use_causal_mask", causal}, {"mixed_precision", mp}, {"dtype", dt}}));
      }
    }
  }
  return out;
}

std::string describe(const kernels::Options& o) {
  std::string s;
  for (const auto& [k, val] : o) s += k + "=" + val + " ";
  return s;
}

// One test per (variant, option combination), so that ctest runs them in parallel.
struct KernelOptionCase {
  KernelCase kernel;
  kernels::Options options;
};
void PrintTo(const KernelOptionCase& c, std::ostream* os) {
  *os << c.kernel.variant << " " << describe(c.options);
}

// The default tier (deep = false) runs each kernel at the option sets that take every option value
// at least once (greedy, in option_sets order: two of the eight); the deep tier the rest.
std::vector<KernelOptionCase> kernel_option_cases(bool deep) {
  const std::vector<ParamValues> shapes = {shape(128, 32), shape(256, 64)};
  const KernelCase kinds[] = {
      {"sd_attention", shapes},
      {"sd_attention_step1", shapes},
      {"sd_attention_step2", shapes},
      {"sd_attention_step3", shapes},
      {"sd_attention_step4", shapes},
      {"sd_attention_step5", shapes},
      {"sd_attention_batched", {shape(128, 32, 2), shape(256, 64, 1)}},
      {"naive_attention", {shape(128, 32), shape(256, 64), shape(100, 24)}},
      // Its smallest shape is seqlen 1024, d_head 128.
      {"sd_attention_allocated", {shape(1024, 128, 1)}, true},
  };
  std::vector<KernelOptionCase> out;
  for (const KernelCase& k : kinds) {
    const kernels::Variant* v = kernels::find_variant(k.variant);
    if (v == nullptr) {
      out.push_back({k, {}});  // fails in the test, naming the variant
      continue;
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (const kernels::Options& o : option_sets(*v)) {
      bool adds = o.empty();
      for (const auto& kv : o) adds = seen.insert(kv).second || adds;
      if (adds != deep) out.push_back({k, o});
    }
  }
  return out;
}

// variant_causal_mp_fp32 style test names.
std::string kernel_case_name(const ::testing::TestParamInfo<KernelOptionCase>& info) {
  const kernels::Options& o = info.param.options;
  if (o.empty()) return info.param.kernel.variant;
  return info.param.kernel.variant + (o.at("use_causal_mask") == "true" ? "_causal" : "_nomask") +
         (o.at("mixed_precision") == "true" ? "_mp" : "_nomp") + "_" + o.at("dtype");
}

class KernelSelfCheck : public ::testing::TestWithParam<KernelOptionCase> {};

TEST_P(KernelSelfCheck, OutputTermsGiveTheRunsBits) {
  const KernelCase& kc = GetParam().kernel;
  const kernels::Variant* v = kernels::find_variant(kc.variant);
  ASSERT_NE(v, nullptr) << kc.variant;
  if (kc.large && std::getenv("NCV_EQUIV_LARGE") == nullptr) {
    GTEST_SKIP() << kc.variant << " needs NCV_EQUIV_LARGE=1 (about 4 GB, minutes)";
  }
  const kernels::Options& o = GetParam().options;
  const Program p = v->build(o);
  for (const ParamValues& params : kc.params) {
    const std::string what = kc.variant + " " + describe(o) + describe(params);
    const Inputs in = random_inputs(p, params, 7);
    expect_self_check(p, params, in, what);
    if (&params == &kc.params.front()) {
      expect_self_check(p, params, with_specials(in, 11), what + "(special values)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelSelfCheck, ::testing::ValuesIn(kernel_option_cases(false)),
                         kernel_case_name);
INSTANTIATE_TEST_SUITE_P(DeepKernels, KernelSelfCheck,
                         ::testing::ValuesIn(kernel_option_cases(true)), kernel_case_name);

// ---------------------------------------------------------------------------------------------
// The example programs, in both execution modes.

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

TEST(ExampleSelfCheck, TiledMatmulAndSoftmaxTile) {
  struct Example {
    std::string file;
    ParamValues params;
    bool reference;  // also in the interpreter's reference mode (slow for big matmuls)
  };
  const Example examples[] = {{"tiled_matmul.nkir", {{"M", 128}, {"N", 512}, {"K", 256}}, false},
                              {"tiled_matmul.nkir", {{"M", 128}, {"N", 512}, {"K", 128}}, true},
                              {"softmax_qkv_one_tile.nkir", {{"d", 64}}, true},
                              {"softmax_qkv_one_tile.nkir", {{"d", 32}}, false}};
  for (const Example& e : examples) {
    const std::string path = std::string(NCV_EXAMPLES_DIR) + "/" + e.file;
    const Program p = parse_program(read_text(path), path);
    const Inputs in = random_inputs(p, e.params, 3);
    expect_self_check(p, e.params, in, e.file);
    if (e.reference) {
      expect_self_check(p, e.params, in, e.file + " (reference mode)", ExecMode::reference);
    }
    expect_self_check(p, e.params, with_specials(in, 5), e.file + " (special values)");
  }
}

// ---------------------------------------------------------------------------------------------
// A program that calls every observer entry point, with in-place and dtype-changing operands.

constexpr const char* kAllOps = R"(kernel all_ops
input X : hbm fp32 [64, 32]
input Y : hbm bf16 [64, 32]
input M : hbm uint8 [64, 32] range [0, 1]
input W : hbm bf16 [64, 48]
output T : hbm fp32 [32, 64]
output A : hbm bf16 [64, 32]
output S : hbm fp32 [64, 32]
output R : hbm fp32 [64, 4]
output C : hbm fp32 [64, 1]
output V : hbm fp32 [32, 48]
output F : hbm fp32 [32, 64]
output G : hbm fp32 [32, 32]

buffer x : sbuf fp32 [64, 32]
buffer y : sbuf bf16 [64, 32]
buffer m : sbuf uint8 [64, 32]
buffer w : sbuf bf16 [64, 48]
dma_copy x[:, :], X[:, :]
dma_copy y[:, :], Y[:, :], queue=1
dma_copy m[:, :], M[:, :], queue=2
dma_copy w[:, :], W[:, :], queue=3

buffer tp : psum fp32 [32, 64]
transpose tp[:, :], x[:, :]
buffer t_sb : sbuf fp32 [32, 64]
tensor_copy t_sb[:, :], tp[:, :]
dma_copy T[:, :], t_sb[:, :]

buffer col : sbuf fp32 [64, 1]
tensor_reduce col[:, :], x[:, :], op=max, negate=true
buffer a1 : sbuf bf16 [64, 32]
buffer rs : sbuf fp32 [64, 1]
activation a1[:, :], y[:, :], func=exp, scale=0.5, bias=col[:, :], reduce_cmd=reset_reduce, reduce_res=rs[:, :]
buffer a2 : sbuf fp32 [64, 32]
activation a2[:, :], a1[:, :], func=tanh, scale=rs[:, :], reduce_cmd=reduce
buffer a3 : sbuf bf16 [64, 32]
buffer rs2 : sbuf bf16 [64, 1]
activation a3[:, :], a2[:, :], func=gelu, bias=0.25, reduce_cmd=reduce, reduce_res=rs2[:, :]
dma_copy A[:, :], a3[:, :]

buffer tt : sbuf fp32 [64, 32]
tensor_tensor tt[:, :], a2[:, :], x[:, :], op=subtract
tensor_scalar tt[:, :], tt[:, :], op0=divide, operand0=col[:, :], reverse0=true, op1=max, operand1=-0.5
buffer cmp : sbuf uint8 [64, 32]
tensor_tensor cmp[:, :], tt[:, :], x[:, :], op=is_gt
tensor_copy_predicated tt[:, :], x[:, :], predicate=m[:, :]
tensor_copy_predicated tt[:, :], 3.5, predicate=cmp[:, :], reverse_predicate=true
buffer io : sbuf uint8 [64, 32]
iota io[:, :], offset=-20, channel_multiplier=1, steps=[1]
tensor_copy_predicated tt[:, :], a2[:, :], predicate=io[:, :]
affine_select tt[:, :], on_true=tt[:, :], offset=0, channel_multiplier=1, steps=[-1], cmp=ge, on_false=-9984
buffer f8 : sbuf fp8_e4m3 [64, 32]
tensor_copy f8[:, :], tt[:, :]
buffer s : sbuf fp32 [64, 32]
buffer sr : sbuf fp32 [64, 1]
tensor_scalar_reduce s[:, :], f8[:, :], op0=multiply, operand0=1.5, reduce_op=add, reduce_res=sr[:, :]
tensor_tensor s[:, :], s[:, :], a3[:, :], op=max
dma_copy S[:, :], s[:, :]

buffer r3 : sbuf fp32 [64, 4, 8]
tensor_copy r3[:, :, :], s[:, :]
buffer red : sbuf fp32 [64, 4]
tensor_reduce red[:, :], r3[:, :, :], op=add, axes=1
dma_copy R[:, :], red[:, :]
buffer c2 : sbuf fp32 [64, 1]
tensor_reduce c2[:, :], r3[:, :, :], op=min, axes=2
tensor_tensor c2[:, :], c2[:, :], sr[:, :], op=add
reciprocal c2[:, :], c2[:, :]
buffer fl : sbuf fp32 [64, 1]
iota fl[:, :], offset=3, channel_multiplier=-2, steps=[5]
tensor_tensor c2[:, :], c2[:, :], fl[:, :], op=multiply
tensor_tensor c2[:, :], c2[:, :], rs2[:, :], op=add
dma_copy C[:, :], c2[:, :]

buffer mm : psum fp32 [32, 48]
matmul mm[:, :], stationary=a3[:, :], moving=w[:, :]
matmul mm[:, :], stationary=y[:, :], moving=w[:, :], accumulate=true
buffer mm_sb : sbuf fp32 [32, 48]
tensor_copy mm_sb[:, :], mm[:, :]
dma_copy V[:, :], mm_sb[:, :]

buffer xf : sbuf fp32 [32, 64]
dma_copy xf[:, :], X[:, :]
buffer ms : sbuf fp32 [32, 64]
memset ms[:, :], value=0.1
tensor_tensor xf[:, :], xf[:, :], ms[:, :], op=add
dma_copy F[:, :], xf[:, :]

buffer vt : sbuf fp32 [32, 32]
transpose vt[:, :], x[0:+32, :], engine=vector
dma_copy G[:, :], vt[:, :]
)";

TEST(AllOpsSelfCheck, EveryInstruction) {
  const Program p = parse_program(kAllOps, "all_ops");
  const Inputs in = random_inputs(p, {}, 9);
  expect_self_check(p, {}, in, "all_ops");
  expect_self_check(p, {}, in, "all_ops (reference mode)", ExecMode::reference);
  for (uint64_t seed : {1, 2, 3}) {
    expect_self_check(p, {}, with_specials(in, seed), "all_ops (special values)");
  }
}

// dma_copy's modes: a gather that skips rows whose index leaves the table (oob_skip), a
// scatter that accumulates into bf16 rows (dst_rmw=add, repeated indices included) and a DMA that
// transposes an SBUF tile across partitions: the terms follow the interpreter's bits.
constexpr const char* kDmaModes = R"(kernel dma_modes
input X : hbm fp32 [8, 16]
input I : hbm int32 [4, 1] range [-3, 10]
input J : hbm int32 [4, 1] range [0, 2]
input B : hbm fp16 [16, 32]
output G : hbm fp32 [4, 16]
output Y : hbm bf16 [6, 16]
output T : hbm fp16 [32, 16]
buffer i : sbuf int32 [4, 1]
buffer j : sbuf int32 [4, 1]
dma_copy i[:, :], I[:, :]
dma_copy j[:, :], J[:, :], queue=1
buffer g : sbuf fp32 [4, 16]
memset g[:, :], value=-1
dma_copy g[:, :], X[0:+4:0, :].indirect(0, i[:, :], -2147483648, 2147483647), oob_skip=true
dma_copy G[:, :], g[:, :]
buffer z : sbuf bf16 [6, 16]
memset z[:, :], value=0.5
dma_copy Y[:, :], z[:, :]
buffer x4 : sbuf fp32 [4, 16]
dma_copy x4[:, :], X[0:+4, :]
dma_copy Y[0:+4:0, :].indirect(0, j[:, :], 0, 2), x4[:, :], dst_rmw=add
buffer b : sbuf fp16 [16, 32]
dma_copy b[:, :], B[:, :]
buffer bt : sbuf fp16 [32, 16]
dma_copy bt[:, :], b[:, :].perm(1, 0)
dma_copy T[:, :], bt[:, :]
)";

TEST(AllOpsSelfCheck, DmaModes) {
  const Program p = parse_program(kDmaModes, "dma_modes");
  for (uint64_t seed : {1, 2, 3, 4}) {
    const Inputs in = random_inputs(p, {}, seed);
    expect_self_check(p, {}, in, "dma_modes seed " + std::to_string(seed));
    expect_self_check(p, {}, in, "dma_modes (reference mode)", ExecMode::reference);
  }
}

// tensor_partition_reduce (max), select_reduce and range_select (NeuronCore-v3: run on trn2),
// with the Vector accumulator carried from one call to the next and read out in fp32 and bf16.
constexpr const char* kSelects = R"(kernel selects
input X : hbm fp32 [64, 32]
input M : hbm uint8 [64, 32] range [0, 1]
input L : hbm fp32 [64, 1]
input H : hbm fp32 [64, 1]
output P : hbm fp32 [1, 32]
output D : hbm bf16 [64, 32]
output Q : hbm fp32 [64, 1]
output E : hbm fp32 [64, 32]
output Z : hbm bf16 [64, 1]

buffer x : sbuf fp32 [64, 32]
buffer m : sbuf uint8 [64, 32]
buffer l : sbuf fp32 [64, 1]
dma_copy x[:, :], X[:, :]
dma_copy m[:, :], M[:, :], queue=1
dma_copy l[:, :], L[:, :], queue=2
buffer h : sbuf fp32 [64, 1]
dma_copy h[:, :], H[:, :], queue=3
buffer p : sbuf fp32 [1, 32]
tensor_partition_reduce p[:, :], x[:, :], op=max
dma_copy P[:, :], p[:, :]
buffer d : sbuf bf16 [64, 32]
buffer q : sbuf fp32 [64, 1]
select_reduce d[:, 0:+16], predicate=m[:, 0:+16], on_true=x[:, 0:+16], on_false=l[:, :], reduce_cmd=reset_reduce
select_reduce d[:, 16:+16], predicate=m[:, 16:+16], on_true=x[:, 16:+16], on_false=-2.5, reduce_cmd=reduce, reduce_res=q[:, :], reverse_pred=true
dma_copy D[:, :], d[:, :]
dma_copy Q[:, :], q[:, :]
buffer e : sbuf fp32 [64, 32]
buffer z : sbuf bf16 [64, 1]
range_select e[:, :], on_true=x[:, :], bound0=l[:, :], bound1=h[:, :], cmp0=gt, cmp1=le, range_start=-3, reduce_cmd=reset_reduce, reduce_res=z[:, :]
dma_copy E[:, :], e[:, :]
dma_copy Z[:, :], z[:, :]
)";

std::unique_ptr<Traced> trace_on_trn2(const Program& p, const Inputs& inputs) {
  auto t = std::make_unique<Traced>();
  RunOptions o;
  o.observer = &t->exec;
  o.hw = &hw_config_trn2();
  o.record_trace = false;
  t->run = run_program(p, {}, inputs, o);
  return t;
}

TEST(AllOpsSelfCheck, PartitionReduceSelectReduceAndRangeSelect) {
  const Program p = parse_program(kSelects, "selects");
  Inputs in = random_inputs(p, {}, 4);
  for (int64_t r = 0; r < 64; ++r) {
    in.at("L").set(r, static_cast<float>(r % 40));
    in.at("H").set(r, static_cast<float>(r % 40 + r % 7));  // (L, H]: empty when r % 7 == 0
  }
  for (const Inputs& run_in : {in, with_specials(in, 6)}) {
    auto t = trace_on_trn2(p, run_in);
    ASSERT_FALSE(t->run.error) << t->run.error->message;
    const Comparison c = compare(*t, run_in, t->run.outputs);
    EXPECT_EQ(c.elements, 32 + 64 * 32 + 64 + 64 * 32 + 64);
    EXPECT_EQ(c.mismatches, 0) << c.first;
    EXPECT_EQ(c.undefined, 0);
  }
}

// The order in which the hardware adds partitions is not documented: a partition sum is opaque,
// so no equivalence rests on the model's order.
TEST(AllOpsSelfCheck, PartitionSumIsOpaque) {
  std::string text = kSelects;
  text.replace(text.find("op=max"), 6, "op=add");
  const Program p = parse_program(text, "selects");
  const Inputs in = random_inputs(p, {}, 4);
  auto t = trace_on_trn2(p, in);
  ASSERT_FALSE(t->run.error) << t->run.error->message;
  const Comparison c = compare(*t, in, t->run.outputs);
  EXPECT_EQ(c.undefined, 32);
  EXPECT_EQ(c.mismatches, 0) << c.first;
}

// The Tensor-engine transpose of data with NaN, Inf and -0: the term reproduces the spreading.
TEST(AllOpsSelfCheck, TransposeSpreadsNonFinite) {
  const Program p = parse_program(kAllOps, "all_ops");
  Inputs in = random_inputs(p, {}, 4);
  HostTensor& x = in.at("X");
  x.set(3 * 32 + 5, std::numeric_limits<float>::infinity());  // column 5: Inf alone -> row 5 NaN
  x.set(9 * 32 + 7, std::bit_cast<float>(0x7fc00123u));       // column 7: NaN
  x.set(10 * 32 + 8, -0.0f);                                  // -> +0
  auto t = trace(p, {}, in);
  ASSERT_FALSE(t->run.error) << t->run.error->message;
  const HostTensor& out = t->run.outputs.at("T");
  EXPECT_TRUE(std::isnan(out.get(5 * 64 + 0)));  // spread along output row 5
  EXPECT_EQ(out.bits(8 * 64 + 10), 0u);
  const Comparison c = compare(*t, in, t->run.outputs);
  EXPECT_EQ(c.mismatches, 0) << c.first;
  EXPECT_EQ(c.undefined, 0);
}

// nc_stream_shuffle moves elements between partitions: each keeps its term (a 255 entry keeps
// dst's, an in-place shuffle reads the old partitions). The gathers pick elements by index
// values, outside the term language: their results are opaque.
constexpr const char* kShuffles = R"(kernel shuffles
input X : hbm fp32 [64, 16]
input I : hbm uint32 [64, 4]
output S : hbm fp32 [64, 16]
output G : hbm fp32 [64, 4]

buffer x : sbuf fp32 [64, 16]
dma_copy x[:, :], X[:, :]
buffer d : sbuf fp32 [64, 16]
memset d[:, :], value=1.5
nc_stream_shuffle d[:, :], x[:, :], shuffle_mask=[0, 255, 14, 21, 28, 255, 10, 17, 24, 255, 6, 13, 20, 255, 2, 9, 16, 255, 30, 5, 12, 255, 26, 1, 8, 255, 22, 29, 4, 255, 18, 25]
nc_stream_shuffle x[:, :], x[:, :], shuffle_mask=[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 0, 1, 2]
tensor_tensor d[:, :], d[:, :], x[:, :], op=add
dma_copy S[:, :], d[:, :]
buffer i : sbuf uint32 [64, 4]
dma_copy i[:, :], I[:, :], queue=1
buffer g : sbuf fp32 [64, 4]
gather_flattened g[:, :], x[:, :], indices=i[:, :]
dma_copy G[:, :], g[:, :]
)";

TEST(AllOpsSelfCheck, StreamShuffleKeepsTermsGathersAreOpaque) {
  const Program p = parse_program(kShuffles, "shuffles");
  Inputs in = random_inputs(p, {}, 5);
  for (int64_t k = 0; k < 256; ++k) in.at("I").set(k, static_cast<float>((k * 5) % 16));
  auto t = trace(p, {}, in);
  ASSERT_FALSE(t->run.error) << t->run.error->message;
  const Comparison c = compare(*t, in, t->run.outputs);
  EXPECT_EQ(c.mismatches, 0) << c.first;
  EXPECT_EQ(c.elements, 64 * 16 + 64 * 4);
  EXPECT_EQ(c.undefined, 64 * 4);  // G only
  // The terms follow the inputs: another input set evaluated through the same terms.
  Inputs other = random_inputs(p, {}, 6);
  other.at("I") = in.at("I");
  auto again = trace(p, {}, other);
  ASSERT_FALSE(again->run.error) << again->run.error->message;
  EXPECT_EQ(compare(*t, other, again->run.outputs).mismatches, 0);
}

// Bitwise operators are outside the term language: their results are opaque (undefined), never
// silently wrong.
TEST(AllOpsSelfCheck, BitwiseIsOpaque) {
  const Program p = parse_program(R"(kernel bitwise
input X : hbm int32 [8, 8] range [0, 100]
output O : hbm int32 [8, 8]
output P : hbm int32 [8, 8]
buffer x : sbuf int32 [8, 8]
dma_copy x[:, :], X[:, :]
buffer y : sbuf int32 [8, 8]
tensor_scalar y[:, :], x[:, :], op0=bitwise_and, operand0=6
dma_copy O[:, :], y[:, :]
buffer z : sbuf int32 [8, 8]
tensor_scalar z[:, :], x[:, :], op0=add, operand0=6
dma_copy P[:, :], z[:, :]
)",
                                  "bitwise");
  const Inputs in = random_inputs(p, {}, 1);
  auto t = trace(p, {}, in);
  ASSERT_FALSE(t->run.error) << t->run.error->message;
  const Comparison c = compare(*t, in, t->run.outputs);
  EXPECT_EQ(c.mismatches, 0) << c.first;
  EXPECT_EQ(c.undefined, 64);  // all of O, none of P
  const TermId o0 = t->exec.outputs().at("O")[0];
  EXPECT_EQ(t->store.node(o0).op, TermOp::opaque);
  EXPECT_NE(t->store.opaque_reason(o0).find("bitwise"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Not vacuous: terms recorded on one input set, evaluated on another, give the other run's bits
// (the terms are the computation, not the first run's numbers), and differ from the first run.

TEST(SelfCheckIsNotVacuous, TermsFollowTheInputs) {
  const kernels::Variant* v = kernels::find_variant("sd_attention");
  ASSERT_NE(v, nullptr);
  for (const char* dt : {"fp32", "bf16"}) {
    const Program p = v->build(v->resolve({{"use_causal_mask", "true"}, {"dtype", dt}}));
    const ParamValues params{{"seqlen", 128}, {"d_head", 32}};
    const Inputs a = random_inputs(p, params, 1);
    auto t = trace(p, params, a);
    ASSERT_FALSE(t->run.error);
    EXPECT_EQ(compare(*t, a, t->run.outputs).mismatches, 0);

    // One element of one input changed: some outputs change, and the terms follow.
    Inputs b = a;
    HostTensor& q = b.begin()->second;
    q.set(0, q.get(0) + 0.5f);
    const RunResult rb = run_program(p, params, b);
    ASSERT_FALSE(rb.error);
    const Comparison on_b = compare(*t, b, rb.outputs);
    EXPECT_EQ(on_b.mismatches, 0) << on_b.first;
    const Comparison stale = compare(*t, b, t->run.outputs);
    EXPECT_GT(stale.mismatches, 0) << "changing " << b.begin()->first << " changed nothing";

    // A whole new input set.
    const Inputs c = random_inputs(p, params, 2);
    const RunResult rc = run_program(p, params, c);
    ASSERT_FALSE(rc.error);
    const Comparison on_c = compare(*t, c, rc.outputs);
    EXPECT_EQ(on_c.mismatches, 0) << on_c.first;
    EXPECT_GT(compare(*t, c, t->run.outputs).mismatches, on_c.elements / 2);
  }
}

// A wrong executor is caught: a matmul whose operands are swapped evaluates to other bits.
TEST(SelfCheckIsNotVacuous, BrokenTermsAreCaught) {
  const Program p = parse_program(read_text(std::string(NCV_EXAMPLES_DIR) + "/tiled_matmul.nkir"),
                                  "tiled_matmul");
  const ParamValues params{{"M", 128}, {"N", 512}, {"K", 256}};
  const Inputs in = random_inputs(p, params, 1);
  auto t = trace(p, params, in);
  ASSERT_FALSE(t->run.error);
  ASSERT_EQ(compare(*t, in, t->run.outputs).mismatches, 0);
  // Evaluate the terms with A's first row replaced by B's: terms that ignored an operand (or
  // took it from the wrong tensor) would not notice; ours must.
  Inputs swapped = in;
  HostTensor& a = swapped.at("A");
  for (int64_t k = 0; k < 128; ++k) a.set(k, in.at("B").get(k));
  EXPECT_GT(compare(*t, swapped, t->run.outputs).mismatches, 0);
}

// ---------------------------------------------------------------------------------------------
// The memory model, on hand-made Views over a local byte array.

View tile(uint8_t* base, DType dt, int64_t rows, int64_t cols) {
  View v;
  v.base = base;
  v.dtype = dt;
  v.rows = rows;
  v.row_stride = cols * static_cast<int64_t>(dtype_size(dt));
  v.free_rank = 1;
  v.sizes[0] = cols;
  v.strides[0] = static_cast<int64_t>(dtype_size(dt));
  return v;
}

TEST(TermExecutorMemory, DtypeMismatchAndPartialOverwrite) {
  TermStore ts;
  TermExecutor ex(ts, 0);
  alignas(16) uint8_t mem[256] = {};
  Tensor in;
  in.name = "x";
  in.dtype = DType::fp32;
  ex.input(in, mem, 8);  // 8 fp32 elements at mem[0..32)
  InstrStmt s;
  s.id = 3;
  ex.instruction(s, 0);

  // A same-dtype copy moves the term; a bf16 read of an fp32 element is opaque.
  ex.copy(tile(mem + 64, DType::fp32, 1, 2), tile(mem, DType::fp32, 1, 2));
  Tensor out32;
  out32.name = "o";
  out32.dtype = DType::fp32;
  ex.output(out32, mem + 64, 2);
  EXPECT_EQ(ex.outputs().at("o")[0], ts.input(ts.input_slot("x"), 0, DType::fp32));
  EXPECT_EQ(ex.outputs().at("o")[1], ts.input(ts.input_slot("x"), 1, DType::fp32));

  ex.copy(tile(mem + 96, DType::fp32, 1, 2), tile(mem, DType::bf16, 1, 2));
  ex.output(out32, mem + 96, 2);
  const TermId bad = ex.outputs().at("o")[0];
  EXPECT_EQ(ts.node(bad).op, TermOp::opaque);  // element 96 holds an opaque term
  ex.copy(tile(mem + 128, DType::fp32, 1, 1), tile(mem, DType::fp32, 1, 1));

  // A bf16 write into the upper half of the fp32 element at 128 invalidates it.
  ex.memset(tile(mem + 130, DType::bf16, 1, 1), 1.0f);
  ex.output(out32, mem + 128, 1);
  EXPECT_EQ(ts.node(ex.outputs().at("o")[0]).op, TermOp::opaque);
  // ... and the bf16 element itself reads back as the constant.
  Tensor out16;
  out16.name = "h";
  out16.dtype = DType::bf16;
  ex.output(out16, mem + 130, 1);
  EXPECT_EQ(ex.outputs().at("h")[0], ts.constant(DType::bf16, 0x3f80));

  // An fp32 write over two bf16 elements drops both.
  ex.memset(tile(mem + 160, DType::bf16, 1, 2), 2.0f);
  ex.copy(tile(mem + 160, DType::fp32, 1, 1), tile(mem, DType::fp32, 1, 1));
  ex.output(out16, mem + 162, 1);
  EXPECT_EQ(ts.node(ex.outputs().at("h")[0]).op, TermOp::opaque);
  ex.output(out32, mem + 160, 1);
  EXPECT_EQ(ex.outputs().at("o")[0], ts.input(ts.input_slot("x"), 0, DType::fp32));
  // Terms made by the instruction carry its id.
  ex.tensor_tensor(tile(mem + 192, DType::fp32, 1, 1), tile(mem, DType::fp32, 1, 1),
                   tile(mem + 4, DType::fp32, 1, 1), AluOp::add, Engine::Vector);
  ex.output(out32, mem + 192, 1);
  EXPECT_EQ(ts.provenance(0, ex.outputs().at("o")[0]), 3u);
  EXPECT_EQ(ts.provenance(1, ex.outputs().at("o")[0]), kNoInstruction);
}

// Two programs that compute the same thing differently share their output terms: an fp32 copy
// through bf16 (exact for bf16 inputs) disappears, and add is commutative.
TEST(TermExecutorSharing, EquivalentProgramsShareTerms) {
  const Program p0 = parse_program(R"(kernel k0
input X : hbm bf16 [16, 8]
input Y : hbm bf16 [16, 8]
output O : hbm fp32 [16, 8]
buffer x : sbuf bf16 [16, 8]
buffer y : sbuf bf16 [16, 8]
dma_copy x[:, :], X[:, :]
dma_copy y[:, :], Y[:, :]
buffer o : sbuf fp32 [16, 8]
tensor_tensor o[:, :], x[:, :], y[:, :], op=add
dma_copy O[:, :], o[:, :]
)",
                                   "k0");
  const Program p1 = parse_program(R"(kernel k1
input X : hbm bf16 [16, 8]
input Y : hbm bf16 [16, 8]
output O : hbm fp32 [16, 8]
buffer x : sbuf fp32 [16, 8]
buffer y : sbuf bf16 [16, 8]
dma_copy x[:, :], X[:, :]
dma_copy y[:, :], Y[:, :]
buffer o : sbuf fp32 [16, 8]
tensor_tensor o[:, :], y[:, :], x[:, :], op=add
dma_copy O[:, :], o[:, :]
)",
                                   "k1");
  TermStore ts;
  TermExecutor e0(ts, 0), e1(ts, 1);
  const Inputs in = random_inputs(p0, {}, 1);
  RunOptions o0, o1;
  o0.observer = &e0;
  o1.observer = &e1;
  ASSERT_FALSE(run_program(p0, {}, in, o0).error);
  ASSERT_FALSE(run_program(p1, {}, in, o1).error);
  EXPECT_EQ(e0.outputs().at("O"), e1.outputs().at("O"));
}

// Memory and time of the largest routine self-check (sd_attention, seqlen 256, d_head 64).
TEST(SelfCheckCost, SdAttention256) {
  const kernels::Variant* v = kernels::find_variant("sd_attention");
  const Program p = v->build(v->resolve({{"mixed_precision", "false"}}));
  const ParamValues params{{"seqlen", 256}, {"d_head", 64}};
  const Inputs in = random_inputs(p, params, 1);
  const auto t0 = std::chrono::steady_clock::now();
  auto t = trace(p, params, in);
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_FALSE(t->run.error);
  const Comparison c = compare(*t, in, t->run.outputs);
  const auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(c.mismatches, 0) << c.first;
  EXPECT_EQ(c.undefined, 0);
  // Tracing is deterministic: a second run builds the same store.
  auto again = trace(p, params, in);
  EXPECT_EQ(again->store.size(), t->store.size());
  EXPECT_EQ(again->exec.outputs(), t->exec.outputs());
  const auto ms = [](auto d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::printf("sd_attention 256/64: %zu terms, trace %lld ms, evaluate %lld ms\n", t->store.size(),
              static_cast<long long>(ms(t1 - t0)), static_cast<long long>(ms(t2 - t1)));
}

}  // namespace
}  // namespace ncv::equiv
