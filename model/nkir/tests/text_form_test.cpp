// Tests of the .nkir text form (model/ir/printer.h, model/nkir/parse.h; grammar in
// model/nkir/NKIR.md).
//
// Round trips: programs built with ncv::Builder that cover every instruction kind, every
// instruction field, every access feature and every dtype print, parse back to an identical
// Program, and print identically again. Expressions round-trip to the identical hash-consed node.
// Errors name file:line:col and what was expected. Mutated and random inputs only ever produce a
// Program or a ParseError.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "model/ir/builder.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}

BufferOptions opts(int64_t bufs, std::optional<Placement> placement = std::nullopt) {
  BufferOptions o;
  o.bufs = bufs;
  o.placement = std::move(placement);
  return o;
}

// Prints, parses, compares, and checks that printing is stable. Returns the text.
std::string expect_round_trip(const Program& p) {
  std::string text = print_program(p);
  EXPECT_EQ(print_program(p), text) << "printing is not deterministic";
  Program q;
  try {
    q = parse_program(text, "rt.nkir");
  } catch (const ParseError& e) {
    ADD_FAILURE() << e.what() << "\n" << text;
    return text;
  }
  EXPECT_TRUE(q == p) << "round trip changed the program:\n"
                      << text << "\n---\n"
                      << print_program(q);
  EXPECT_EQ(print_program(q), text);
  return text;
}

// ---- programs ----

// Every instruction kind with every field set away from its default, and every access feature.
Program all_features_program() {
  Builder b("all_features");
  Expr S = b.param("S", 128, 4096, 128);
  Expr H = b.param("H", 1, 8);
  Expr KV = b.param("KV", 1, 8);
  Expr D = b.param("D", 32, 128, 32);
  b.require(RelationKind::Divides, KV, H);
  b.require(RelationKind::LE, D, Expr(128));
  b.require(RelationKind::LT, KV, H + 1);
  b.require(RelationKind::EQ, Expr::mod(S, 128), Expr(0));
  b.require(RelationKind::NE, D, Expr(96));
  b.grid(2);

  auto x = b.input("x", DType::bf16, {S, 128});
  auto tbl = b.input("tbl", DType::int32, {128, 1}, ValueRange{0, 63});
  auto cache = b.input("cache", DType::bf16, {S * H, 128});
  auto out = b.output("out", DType::fp32, {S * 2, 128});
  auto tmp = b.scratch("tmp", DType::bf16, {Expr::max(S, D * 4), 128});

  // One input per remaining dtype, loaded into an SBUF tile of the same dtype.
  const DType kOthers[] = {DType::fp32,     DType::fp16,  DType::fp8_e4m3, DType::fp8_e4m3fn,
                           DType::fp8_e5m2, DType::uint8, DType::uint16,   DType::uint32};
  int n = 0;
  for (DType dt : kOthers) {
    std::string name(dtype_name(dt));
    auto in = b.input("in_" + name, dt, {128, 64});
    auto sb = b.sbuf("sb_" + name, dt, {128, 64});
    b.dma_copy(sb(), in(), n++ % 16);
  }

  auto ids = b.sbuf("ids", DType::int32, {128, 1});
  b.dma_copy(ids(), tbl(), 15);
  auto col = b.sbuf("col", DType::fp32, {128, 1});
  b.memset(col(), -0.0f);
  auto pred = b.sbuf("pred", DType::uint8, {128, 128});
  b.memset(pred(), from_bits(0x7fa00001), Engine::GpSimd);  // signalling NaN payload

  b.affine_range("i", Expr(0), Expr::floordiv(S, 128), 1, [&](Expr i) {
    auto xt = b.sbuf("xt", DType::bf16, {128, 128}, opts(2));
    auto xT =
        b.sbuf("xT", DType::bf16, {128, 128}, opts(1, Placement{Expr(0), Expr::mod(i, 2) * 32768}));
    auto acc = b.psum("acc", DType::fp32, {128, 512},
                      opts(2, Placement{Expr(0), Expr(2048) * Expr::mod(i, 4)}));
    b.dma_copy(xt(), x({ds(i * 128, 128), all()}), 3);
    b.dma_copy(xT(), transposed(x({ds(i * 128, 128), all()})));
    b.sequential_range("j", Expr(1), H + 1, 1, [&](Expr j) {
      b.affine_range("k", Expr(0), Expr(4), 2, [&](Expr k) {
        auto s = b.sbuf("s", DType::fp32, {128, 128});
        auto t = b.sbuf("t", DType::fp32, {128, 32});
        auto r = b.sbuf("r", DType::fp32, {128, 1});
        auto v32 = b.sbuf("v32", DType::bf16, {32, 32});
        auto ii = b.sbuf("ii", DType::int32, {128, 4, 16});
        auto g = b.sbuf("g", DType::bf16, {128, 128});
        // matmul (all fields), transpose on both engines
        b.matmul(acc({all(), ds(k * 128, 128)}), xT(), xt(), true);
        b.transpose(acc({all(), ds(0, 128)}), xt(), Engine::Tensor);
        b.transpose(v32(), xt({ds(j * 32 - 32, 32), ds(k * 32, 32)}), Engine::Vector);
        // activation: access scale, immediate bias -0, reduce into a column
        b.activation(s(), acc({all(), ds(0, 128)}),
                     ActivationArgs{.func = ActFunc::exp,
                                    .scale = col(),
                                    .bias = Operand{Imm{-0.0f}},
                                    .reduce_cmd = ReduceCmd::reset_reduce,
                                    .reduce_res = r()});
        b.activation(s(), s(),
                     ActivationArgs{.func = ActFunc::rsqrt,
                                    .scale = Imm{from_bits(0x7fc00001)},
                                    .bias = Operand{col()},
                                    .reduce_cmd = ReduceCmd::reduce,
                                    .reduce_res = std::nullopt});
        b.tensor_reduce(r(), s(), AluOp::max, 1, true);
        b.tensor_reduce(r(), s({all(), ds(k, 64, 2)}), AluOp::add);
        b.tensor_scalar(s(), s(), AluOp::multiply, col(), true, AluOp::add, Imm{-0.0f}, true,
                        Engine::Scalar);
        b.tensor_scalar(t(), s({all(), ds(0, 32)}), AluOp::subtract, Imm{1e-5f});
        b.tensor_scalar(t(), t(), AluOp::rsqrt, Imm{0.0f}, false, AluOp::multiply, col(), false,
                        Engine::GpSimd);
        b.tensor_scalar_reduce(t(), t(), AluOp::abs, Imm{0.0f}, AluOp::max, r());
        b.tensor_tensor(s(), s(), acc({all(), ds(128, 128)}), AluOp::subtract);
        b.tensor_tensor(t(), t(), broadcast(r(), 1, Expr(32)), AluOp::pow, Engine::GpSimd);
        b.tensor_scalar_reduce(s(), s(), AluOp::divide, Imm{3.0f}, AluOp::max, r(), true);
        b.tensor_scalar_reduce(t(), t(), AluOp::multiply, col(), AluOp::add, r());
        b.tensor_copy(t(), broadcast(col(), 1, Expr(32)), Engine::GpSimd);
        b.tensor_copy(s(), s(), Engine::Scalar);
        b.tensor_copy_predicated(s(), s(), pred(), true);
        b.tensor_copy_predicated(s(), Imm{std::numeric_limits<float>::quiet_NaN()}, pred());
        b.affine_select(s(), s(), i * 128 - j + Builder::program_id() * 7, -1, {1}, CmpOp::gt,
                        -std::numeric_limits<float>::infinity());
        b.iota(ii(), j * 64 + k, 64, {16, 1});
        b.memset(acc({all(), ds(256, 256)}), std::numeric_limits<float>::infinity());
        b.memset(t(), -std::numeric_limits<float>::quiet_NaN(), Engine::Vector);
        b.reciprocal(t(), t(), Engine::GpSimd);
        b.reciprocal(s(), s());
        // scans: immediate and column initial values / immediates, reversed operands, load_reduce
        b.emit(TensorTensorScan{s(), s(), acc({all(), ds(0, 128)}), Imm{-0.0f}, AluOp::multiply,
                                AluOp::add, true, false});
        b.emit(TensorTensorScan{t(), t(), t(), col(), AluOp::subtract, AluOp::max, false, true});
        b.emit(TensorScalarCumulative{s(), s(), AluOp::add, col(), AluOp::multiply,
                                      ReduceCmd::load_reduce, Operand{Imm{2.5f}}});
        b.emit(TensorScalarCumulative{t(), t(), AluOp::subtract, Imm{1.0f}, AluOp::min,
                                      ReduceCmd::reduce, std::nullopt});
        b.emit(BnStats{t(), s()});
        b.emit(BnAggr{r(), t()});
        // partition reduce, select_reduce (immediate and column on_false, reduce_res, reversed),
        // sequence bounds, range_select (a loop-variable start, reduce_res)
        auto sel_pred = b.sbuf("sel_pred", DType::uint16, {128, 32});
        b.emit(TensorPartitionReduce{t({ds(0, 1), all()}), s({all(), ds(0, 32)}), AluOp::max});
        b.emit(TensorPartitionReduce{ii({ds(0, 1), all(), all()}), ii(), AluOp::bitwise_or});
        b.emit(SelectReduce{t(), sel_pred(), t(), Imm{-0.0f}});
        b.emit(SelectReduce{t(), sel_pred(), t(), col(), ReduceCmd::reset_reduce, r(), true});
        b.emit(SequenceBounds{ii({ds(1, 1), ds(0, 2), all()}), ii({ds(0, 1), ds(0, 1), all()})});
        b.emit(RangeSelect{s(), s(), col(), col(), CmpOp::gt, CmpOp::le, k * 4 + 1});
        b.emit(RangeSelect{t(), t(), col(), col(), CmpOp::eq, CmpOp::ge, Expr(-3),
                           Imm{-3.40282347e+38f}, ReduceCmd::reduce, r()});
        // MX: quantize_mx, and nc_matmul_mx of two packed dtypes with uint8 scales, accumulating
        auto mx_a = b.sbuf("mx_a", DType::fp8_e4m3fn_x4, {128, 16});
        auto mx_b = b.sbuf("mx_b", DType::fp4_e2m1fn_x4, {128, 32});
        auto mx_sa = b.sbuf("mx_sa", DType::uint8, {128, 16});
        auto mx_sb = b.sbuf("mx_sb", DType::uint8, {128, 32});
        auto mx_src = b.sbuf("mx_src", DType::bf16, {128, 64});
        auto mx_ps = b.psum("mx_ps", DType::fp32, {16, 32});
        b.emit(QuantizeMx{mx_a(), mx_src(), mx_sa()});
        b.emit(MatmulMx{mx_ps(), mx_a(), mx_b(), mx_sa(), mx_sb(), true});
        // the top-8 family (dst_idx given and not), random draws (prob immediate and column)
        auto top = b.sbuf("top", DType::fp32, {128, 8});
        auto idx = b.sbuf("idx", DType::uint32, {128, 8});
        b.emit(Max8{top(), s()});
        b.emit(FindIndex8{idx(), s(), top()});
        b.emit(FindIndex8{idx(), s(), top(), true});  // NKI 0.6: successive=true
        b.emit(MatchReplace8{s(), s(), top(), Imm{-0.0f}, idx()});
        b.emit(MatchReplace8{t(), t(), top(), Imm{1.5f}, std::nullopt});
        b.emit(MatchReplace8{t(), t(), top(), Imm{1.5f}, idx(), true});  // reverse=true
        b.emit(Rand{t()});
        b.emit(Dropout{s(), s(), col()});
        b.emit(Dropout{t(), t(), Imm{0.25f}});
        // the gathers (num_valid_indices given and not) and the stream shuffle (a 255 entry)
        auto gix = b.sbuf("gix", DType::uint16, {128, 4});
        auto gfx = b.sbuf("gfx", DType::uint32, {128, 8});
        auto gout = b.sbuf("gout", DType::fp32, {128, 64});
        b.emit(LocalGather{gout(), s(), gix(), 4, 16});
        b.emit(LocalGather{gout(), s(), gix(), 1, 0});
        std::vector<int64_t> mask(32, 255);
        mask[0] = 31;
        b.emit(StreamShuffle{t(), t(), mask});
        b.emit(GatherFlattened{top(), s(), gfx()});
        // core, indirect, strided HBM rows, program_id in an access
        b.dma_copy(g(), on_core(xt(), Expr::mod(Builder::program_id() + 1, 2)), 7);
        b.dma_copy(g(), indirect(cache({ds(j * 128, 128), all()}), 0, ids(), 0, 63), 2);
        b.dma_copy(out({ds(Builder::program_id() * S + i * 128, 128), all()}), s());
        b.dma_copy(tmp({ds(i * 128, 64, 2), all()}), g({ds(0, 64), all()}));
      });
    });
  });
  return b.finish();
}

// The golden program: small and readable.
Program tiled_matmul_program() {
  Builder b("tiled_matmul");
  Expr M = b.param("M", 128, 1024, 128);
  Expr K = b.param("K", 128, 128);
  Expr N = b.param("N", 512, 2048, 512);
  b.require(RelationKind::LE, K, N);
  auto a = b.input("a", DType::bf16, {K, M});
  auto w = b.input("w", DType::bf16, {K, N});
  auto c = b.output("c", DType::fp32, {M, N});
  b.affine_range("m", Expr::floordiv(M, 128), [&](Expr m) {
    auto a_sb = b.sbuf("a_sb", DType::bf16, {128, 128}, opts(2));
    b.dma_copy(a_sb(), a({all(), ds(m * 128, 128)}), 1);
    b.affine_range("n", Expr::floordiv(N, 512), [&](Expr n) {
      auto w_sb = b.sbuf("w_sb", DType::bf16, {128, 512});
      auto ps = b.psum("ps", DType::fp32, {128, 512},
                       opts(1, Placement{Expr(0), Expr::mod(n, 8) * 2048}));
      auto c_sb = b.sbuf("c_sb", DType::fp32, {128, 512});
      b.dma_copy(w_sb(), w({all(), ds(n * 512, 512)}));
      b.matmul(ps(), a_sb(), w_sb());
      b.tensor_copy(c_sb(), ps());
      b.dma_copy(c({ds(m * 128, 128), ds(n * 512, 512)}), c_sb());
    });
  });
  return b.finish();
}

constexpr const char* kTiledMatmulGolden = R"(kernel tiled_matmul
param M in [128, 1024] multiple_of 128
param K in [128, 128]
param N in [512, 2048] multiple_of 512
require K <= N
input a : hbm bf16 [K, M]
input w : hbm bf16 [K, N]
output c : hbm fp32 [M, N]

for m in affine_range(M // 128) {
  buffer a_sb : sbuf bf16 [128, 128] bufs 2
  dma_copy a_sb[:, :], a[:, m * 128:+128], queue=1
  for n in affine_range(N // 512) {
    buffer w_sb : sbuf bf16 [128, 512]
    buffer ps : psum fp32 [128, 512] at (0, n % 8 * 2048)
    buffer c_sb : sbuf fp32 [128, 512]
    dma_copy w_sb[:, :], w[:, n * 512:+512]
    matmul ps[:, :], stationary=a_sb[:, :], moving=w_sb[:, :]
    tensor_copy c_sb[:, :], ps[:, :]
    dma_copy c[m * 128:+128, n * 512:+512], c_sb[:, :]
  }
}
)";

// Names that are keywords or attribute names elsewhere in the grammar, but not reserved.
Program awkward_names_program() {
  Builder b("matmul");
  Expr e = b.param("engine", 1, 4);
  Expr t = b.param("true", 0, 3);
  auto matmul = b.input("matmul", DType::fp32, {128, e * 4});
  auto queue = b.output("queue", DType::fp32, {128, 4});
  auto stationary = b.sbuf("stationary", DType::fp32, {128, 4});
  auto perm = b.sbuf("perm", DType::fp32, {128, 4});
  b.sequential_range("dst", e, [&](Expr dst) {
    b.dma_copy(stationary(), matmul({all(), ds(dst * 4 + t, 4)}), 0);
    b.tensor_copy(perm(), stationary());
    b.dma_copy(queue(), perm());
  });
  return b.finish();
}

// A program without loops, params or grid.
Program minimal_program() {
  Builder b("minimal");
  auto src = b.input("src", DType::fp16, {1});
  auto dst = b.output("dst", DType::fp16, {1});
  b.dma_copy(dst(), src());
  return b.finish();
}

// Floats: one memset per bit pattern.
Program float_program(const std::vector<uint32_t>& patterns) {
  Builder b("floats");
  auto o = b.output("o", DType::fp32, {128, 1});
  auto sb = b.sbuf("sb", DType::fp32, {128, 1});
  for (uint32_t bits : patterns) b.memset(sb(), from_bits(bits));
  b.dma_copy(o(), sb());
  return b.finish();
}

TEST(TextFormTest, AllFeaturesRoundTrip) {
  Program p = all_features_program();
  std::string text = expect_round_trip(p);
  // Spot-check that the features really are in the text.
  for (const char* s : {"grid 2",
                        "require KV divides H",
                        "require KV < H + 1",
                        "range [0, 63]",
                        ".perm(1, 0)",
                        ".core((program_id + 1) % 2)",
                        ".indirect(0, ids[:, :], 0, 63)",
                        ":+32:0",
                        ":+64:2",
                        "for j in sequential_range(1, H + 1)",
                        "for k in affine_range(0, 4, 2)",
                        "bufs 2",
                        "at (0, i % 2 * 32768)",
                        "scale=nan(0x7fc00001)",
                        "bias=-0",
                        "value=-nan",
                        "on_false=-inf",
                        "value=nan(0x7fa00001)",
                        "reduce_cmd=reset_reduce",
                        "accumulate=true",
                        "engine=gpsimd",
                        "reverse_predicate=true",
                        "op0=rsqrt",
                        "op0=abs",
                        "steps=[16, 1]",
                        "queue=15",
                        "input in_fp8_e4m3fn : hbm fp8_e4m3fn [128, 64]"}) {
    EXPECT_NE(text.find(s), std::string::npos) << "missing `" << s << "` in\n" << text;
  }
}

TEST(TextFormTest, GoldenText) {
  Program p = tiled_matmul_program();
  EXPECT_EQ(print_program(p), kTiledMatmulGolden);
  expect_round_trip(p);
  EXPECT_TRUE(parse_program(kTiledMatmulGolden) == p);
}

TEST(TextFormTest, AwkwardNamesAndMinimalRoundTrip) {
  expect_round_trip(awkward_names_program());
  std::string text = expect_round_trip(minimal_program());
  EXPECT_EQ(text,
            "kernel minimal\ninput src : hbm fp16 [1]\noutput dst : hbm fp16 [1]\n\n"
            "dma_copy dst[:], src[:]\n");
}

TEST(TextFormTest, EveryInstructionKindIsCovered) {
  Program p = all_features_program();
  std::vector<bool> seen(std::variant_size_v<Instruction>, false);
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) seen[i->ins.index()] = true;
  });
  for (size_t k = 0; k < seen.size(); ++k) EXPECT_TRUE(seen[k]) << "instruction kind " << k;
}

TEST(TextFormTest, AlternativeSpellingsParseToTheSameProgram) {
  Program p = tiled_matmul_program();
  // Comments, blank lines, continuation lines inside brackets, keyword forms of positional
  // arguments, explicit defaults, and explicit loop bounds.
  std::string text = R"(# a comment
kernel tiled_matmul   # trailing comment
param M in [128, 1024] multiple_of 128
param K in [128, 128] multiple_of 1
param N in [512, 2048] multiple_of 512

require K <= N
grid 1
input a : hbm bf16 [K, M]
input w : hbm bf16 [K, N]
output c : hbm fp32 [M, N]
for m in affine_range(0, M // 128, 1) {
  buffer a_sb : sbuf bf16 [128, 128] bufs 2
  dma_copy dst=a_sb[0:+128, 0:+128], src=a[0:+K, m * 128:+128:1], queue=1
  for n in affine_range(0, N // 512) {
    buffer w_sb : sbuf bf16 [128, 512]
    buffer ps : psum fp32 [128, 512] bufs 1 at (0, (n % 8) * 2048)
    buffer c_sb : sbuf fp32 [128, 512]
    dma_copy w_sb[:, :], w[
        :, n * 512:+512], queue=0
    matmul ps[:, :], moving=w_sb[:, :], stationary=a_sb[:, :], accumulate=false
    tensor_copy c_sb[:, :], ps[:, :]
    dma_copy c[m * 128:+128, n * 512:+512], c_sb[
        :, :]
  }
})";
  Program q = parse_program(text);
  EXPECT_TRUE(q == p) << print_program(q);
}

// An instruction without engine= is unpinned (the compiler chooses, model/compiler); with one it
// is pinned, also to the engine the compiler would choose. Both survive print -> parse.
TEST(TextFormTest, UnpinnedAndPinnedEnginesRoundTrip) {
  const std::string text = R"(kernel engines
buffer a : sbuf fp32 [128, 64]
buffer b : sbuf bf16 [128, 64]
memset a[:, :], value=1
tensor_copy b[:, :], a[:, :]
tensor_copy b[:, :], a[:, :], engine=vector
tensor_copy b[:, :], a[:, :], engine=scalar
)";
  const Program p = parse_program(text);
  std::vector<EngineChoice> engines;
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) engines.push_back(engine_of(i->ins));
  });
  ASSERT_EQ(engines.size(), 4u);
  EXPECT_FALSE(engines[0].has_value());
  EXPECT_FALSE(engines[1].has_value());
  EXPECT_EQ(engines[2], Engine::Vector);
  EXPECT_EQ(engines[3], Engine::Scalar);
  const std::string printed = print_program(p);
  EXPECT_EQ(printed.find("tensor_copy b[:, :], a[:, :]\n") != std::string::npos, true) << printed;
  EXPECT_NE(printed.find("engine=vector"), std::string::npos) << printed;
  EXPECT_TRUE(parse_program(printed) == p) << printed;
}

TEST(TextFormTest, FloatImmediatesRoundTripBitExactly) {
  std::vector<uint32_t> special = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff,
                                   0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
                                   0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc00001, 0x7f800001,
                                   0xff800001, 0x7fffffff, 0xffffffff, 0x3f800000, 0x3dcccccd,
                                   0x33d6bf95, 0x4b800000, 0x4b800001, 0x3eaaaaab, 0x7fa00000};
  expect_round_trip(float_program(special));
  std::mt19937 rng(12345);
  for (int round = 0; round < 10; ++round) {
    std::vector<uint32_t> bits;
    for (int k = 0; k < 500; ++k) {
      uint32_t v = rng();
      if (k % 5 == 1) v = (v & 0x807fffffu) | 0x7f800000u;  // NaN / Inf patterns
      if (k % 5 == 2) v &= 0x807fffffu;                     // subnormals and zeros
      bits.push_back(v);
    }
    expect_round_trip(float_program(bits));
  }
}

// ---- expressions ----

Expr random_expr(std::mt19937_64& rng, int depth) {
  static const char* kVars[] = {"a", "b", "c", "M", "program_id"};
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 9);
  switch (pick(rng)) {
    case 0: {
      static const int64_t kConsts[] = {0,
                                        1,
                                        -1,
                                        2,
                                        3,
                                        -3,
                                        7,
                                        128,
                                        -128,
                                        4096,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
      return Expr(kConsts[rng() % std::size(kConsts)]);
    }
    case 1:
      return Expr::var(kVars[rng() % std::size(kVars)]);
    case 2:
    case 3:
      return random_expr(rng, depth - 1) + random_expr(rng, depth - 1);
    case 4:
      return random_expr(rng, depth - 1) - random_expr(rng, depth - 1);
    case 5:
      return random_expr(rng, depth - 1) * random_expr(rng, depth - 1);
    case 6:
      return Expr::floordiv(random_expr(rng, depth - 1), 1 + static_cast<int64_t>(rng() % 9));
    case 7: {
      Expr a = random_expr(rng, depth - 1);
      int64_t d = 1 + static_cast<int64_t>(rng() % 9);
      if (!a.is_const()) return Expr::mod(a, d);
      int64_t r = a.const_value() % d;  // Expr::mod's folding overflows near INT64_MIN
      return Expr(r < 0 ? r + d : r);
    }
    case 8:
      return Expr::min(random_expr(rng, depth - 1), random_expr(rng, depth - 1));
    default:
      return -random_expr(rng, depth - 1);
  }
}

// Two constants left unfolded because their sum or product overflows (Expr's operators): the
// parser refuses such text, so those expressions do not round-trip.
bool has_overflowing_constants(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Const:
    case ExprKind::Var:
      return false;
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      return has_overflowing_constants(e.lhs());
    default:
      return (e.lhs().is_const() && e.rhs().is_const()) || has_overflowing_constants(e.lhs()) ||
             has_overflowing_constants(e.rhs());
  }
}

TEST(TextFormTest, ExprRoundTripsToTheIdenticalNode) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int k = 0; k < 20000; ++k) {
    Expr e;
    try {
      e = random_expr(rng, 1 + static_cast<int>(k % 6));
      if (k % 3 == 0) e = Expr::max(e, random_expr(rng, 3));
    } catch (const EvalError&) {
      continue;  // a constant overflowed while building; not a printable expression
    }
    if (has_overflowing_constants(e)) continue;
    std::string s = e.str();
    Expr back = parse_expr(s);
    ASSERT_TRUE(back.same(e)) << s << " parsed as " << back.str();
    ++checked;
  }
  EXPECT_GT(checked, 15000);
  EXPECT_TRUE(parse_expr("-9223372036854775808").same(Expr(std::numeric_limits<int64_t>::min())));
  EXPECT_TRUE(parse_expr("a - b").same(Expr::var("a") - Expr::var("b")));
  EXPECT_TRUE(
      parse_expr(" (a+3) // 4 % 2 ").same(Expr::mod(Expr::floordiv(Expr::var("a") + 3, 4), 2)));
  EXPECT_TRUE(parse_expr("--a").same(Expr::var("a")));
  EXPECT_TRUE(parse_expr("min(max(a, 1), -b)")
                  .same(Expr::min(Expr::max(Expr::var("a"), 1), -Expr::var("b"))));
}

TEST(TextFormTest, ExprErrors) {
  auto expect_expr_error = [](const char* text, int col, const char* detail) {
    try {
      parse_expr(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line, 1) << e.what();
      EXPECT_EQ(e.column, col) << e.what();
      EXPECT_NE(e.detail.find(detail), std::string::npos) << e.what();
    }
  };
  expect_expr_error("a +", 4, "expected expression, got end of file");
  expect_expr_error("a // b", 6, "expected a positive integer constant divisor, got 'b'");
  expect_expr_error("a % 0", 5, "expected a positive integer constant divisor, got '0'");
  expect_expr_error("9223372036854775808", 1, "expected integer in int64 range");
  expect_expr_error("9223372036854775807 + 1", 21, "fit in int64");
  expect_expr_error("min(a b)", 7, "expected ',', got 'b'");
  expect_expr_error("a b", 3, "expected end of expression, got 'b'");
  expect_expr_error("1.5", 1, "expected integer in int64 range, got '1.5'");
  EXPECT_TRUE(parse_expr("-9223372036854775808 % 5").same(Expr(2)));
  EXPECT_TRUE(parse_expr("-9223372036854775808 // 5").same(Expr(-1844674407370955162)));
}

// ---- errors ----

void expect_error(const std::string& text, int line, int column, const std::string& detail) {
  try {
    parse_program(text, "k.nkir");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file, "k.nkir");
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.column, column) << e.what();
    EXPECT_NE(e.detail.find(detail), std::string::npos) << e.what();
    std::string prefix =
        "k.nkir:" + std::to_string(line) + ":" + std::to_string(column) + ": expected ";
    EXPECT_EQ(e.message.rfind(prefix, 0), 0u) << e.what();
  }
}

constexpr const char* kHeader =
    "kernel k\n"
    "param N in [128, 1024] multiple_of 128\n"
    "input a : hbm fp32 [N, 64]\n"
    "output o : hbm fp32 [N, 64]\n";  // lines 1-4

TEST(TextFormTest, SyntaxErrorsHaveExactPositions) {
  std::string h = kHeader;
  expect_error("param N in [1, 2]\n", 1, 1, "expected 'kernel', got 'param'");
  expect_error("kernel k\nparam N in [1, 4 5]\n", 2, 18, "expected ']', got '5'");
  // Newlines inside brackets continue the statement, so an unclosed one is reported where the
  // statement cannot go on.
  expect_error("kernel k\nparam N in [1, 4\ninput a : hbm fp32 [N]\n", 3, 1,
               "expected ']', got 'input'");
  expect_error(h + "buffer t : sbuf fp32 [128, 64]\ndma_copy t[0:+128, 0:+64, 0], a[:, :]\n", 6, 25,
               "expected ']' (tensor 't' has rank 2), got ','");
  expect_error(h + "dma_copy o[:, :], a[:]\n", 5, 22,
               "expected ',' (tensor 'a' has rank 2), got ']'");
  expect_error(h + "dma_copy o[:, :], b[:, :]\n", 5, 19, "expected a declared tensor, got 'b'");
  expect_error(h + "dma_copy o[M:+1, :], a[:, :]\n", 5, 12,
               "expected a declared param or loop variable, got 'M'");
  expect_error(h + "dma_cpy o[:, :], a[:, :]\n", 5, 1, "expected statement (param, require");
  expect_error(h + "buffer t : sbuf fp64 [128, 64]\n", 5, 17, "expected dtype (fp32, bf16");
  expect_error(
      h + "dma_copy o[:, :], a[:, :], qeue=1\n", 5, 28,
      "expected an attribute of dma_copy (dst, src, queue, oob_skip, dst_rmw), got 'qeue'");
  expect_error(h + "dma_copy o[:, :], a[:, :], queue=1, queue=2\n", 5, 37,
               "expected each attribute at most once, got 'queue'");
  expect_error(h + "buffer s : sbuf fp32 [128, 64]\nbuffer p : psum fp32 [128, 64]\n"
                   "matmul p[:, :], stationary=s[:, :]\n",
               7, 35, "expected argument 'moving' of matmul, got end of line");
  expect_error(h + "dma_copy o[:, :], a[:, :], queue=99999999999999999999\n", 5, 34,
               "expected integer in int64 range, got '99999999999999999999'");
  expect_error(h + "dma_copy o[:, :], a[:, :], queue=4294967296\n", 5, 34,
               "expected integer in int32 range");
  expect_error(h + "buffer t : sbuf fp32 [128, 64]\nmemset t[:, :], value=nan(0x7f800000)\n", 6, 27,
               "expected NaN bit pattern");
  expect_error(h + "buffer t : sbuf fp32 [128, 64]\nmemset t[:, :], engine=fast\n", 6, 24,
               "expected engine (tensor, vector, scalar, gpsimd, dma), got 'fast'");
  expect_error(h + "dma_copy o[:, :], queue=1, a[:, :]\n", 5, 28,
               "expected name=value (positional arguments come first)");
  expect_error(h + "for i in affine_range(N // 128) {\n  dma_copy o[:, :], a[:, :]\n", 7, 1,
               "expected '}', got end of file");
  expect_error(h + "}\n", 5, 1, "expected statement");
  expect_error(h + "for i in affine_range(N // 128) {\n  param Q in [1, 2]\n}\n", 6, 3,
               "expected buffer, for, '}' or an instruction inside a loop, got 'param'");
  expect_error(h + "for N in affine_range(4) {\n}\n", 5, 5, "expected a loop variable name");
  expect_error(h + "dma_copy o[:, :], a[:, :] $\n", 5, 27,
               "expected ',', '@line' or end of line, got '$'");
  expect_error(h + "dma_copy o[:, :], a[:, :]\x01\n", 5, 26, "got '\\x01'");
  expect_error(h + "for i in affine_range(0, 4, 0) {\n}\n", 5, 29,
               "expected positive integer step, got '0'");
  expect_error("kernel k\nparam N in [8, 4]\n", 2, 16, "expected upper bound >= lower bound");
  expect_error(h + "input a : hbm fp32 [N]\n", 5, 7, "expected a tensor name not already in use");
  expect_error(h + "grid 2\ngrid 3\n", 6, 1, "expected at most one grid statement, got 'grid'");
  expect_error("kernel k\nrequire N <= 4\n", 2, 9, "expected a declared param or loop variable");
  expect_error("kernel k\nparam N in [1, 4]\nrequire N >= 4\n", 3, 11, "expected relation");
  expect_error(h + "buffer t : sbuf fp32 [128, 64] bufs 2 bufs 3\n", 5, 39,
               "expected each clause at most once, got 'bufs'");
  expect_error(h + "dma_copy o[:, :], a[:, :].perm(1, 0).perm(1, 0)\n", 5, 38,
               "expected each of perm, core and indirect at most once");
}

// The `options` line records the build options a program was made with (`ncverify dump`,
// `ncverify import`): it round-trips with identifiers, integers and decimals as values, and a
// file without it (an old file) parses with none.
TEST(TextFormTest, BuildOptionsLineRoundTrips) {
  Program p = tiled_matmul_program();
  p.build_options = {{"dtype", "bf16"},
                     {"use_causal_mask", "true"},
                     {"scale", "0.125"},
                     {"shift", "-3"},
                     {"eps", "1e-05"}};
  const std::string text = expect_round_trip(p);
  EXPECT_EQ(text.rfind("kernel tiled_matmul\n"
                       "options dtype=bf16 eps=1e-05 scale=0.125 shift=-3 use_causal_mask=true\n"
                       "param M in",
                       0),
            0u)
      << text;
  EXPECT_TRUE(parse_program(kTiledMatmulGolden).build_options.empty());
  EXPECT_FALSE(parse_program(kTiledMatmulGolden) == p);  // the options are part of the program
  // Comments and blank lines before it, spaces around '=', any order: the same program.
  std::string spaced = kTiledMatmulGolden;
  spaced.insert(spaced.find('\n') + 1,
                "\n# how it was built\noptions use_causal_mask = true shift=-3 eps=1e-05 "
                "dtype=bf16 scale=0.125  # trailing comment\n");
  EXPECT_TRUE(parse_program(spaced) == p) << print_program(parse_program(spaced));
}

// Values that are not one identifier or decimal (the registry's `lnc=2-sprior`,
// `scale=1/sqrt(128)`, an empty value, quotes, backslashes, control and non-ASCII bytes) print
// quoted and read back byte for byte; identifiers and decimals stay bare.
TEST(TextFormTest, BuildOptionValuesOfAnyCharactersRoundTrip) {
  Program p = tiled_matmul_program();
  p.build_options = {{"lnc", "2-sprior"},   {"scale", "1/sqrt(128)"},
                     {"empty", ""},         {"quote", "a \"b\" \\c"},
                     {"ctl", "x\ty\x01"},   {"utf8", "\xc3\xa9"},
                     {"dtype", "fp8_e4m3"}, {"eps", "1e-05"},
                     {"neg", "-0.5"},       {"dash", "-"},
                     {"lead", "2e"},        {"hash", "#x"}};
  const std::string text = expect_round_trip(p);
  EXPECT_NE(text.find("options ctl=\"x\\x09y\\x01\" dash=\"-\" dtype=fp8_e4m3 empty=\"\" "
                      "eps=1e-05 hash=\"#x\" lead=\"2e\" lnc=\"2-sprior\" neg=-0.5 "
                      "quote=\"a \\\"b\\\" \\\\c\" scale=\"1/sqrt(128)\" utf8=\"\xc3\xa9\"\n"),
            std::string::npos)
      << text;
}

TEST(TextFormTest, BuildOptionsLineErrors) {
  expect_error("kernel k\noptions\n", 2, 8, "expected option NAME=VALUE, got end of line");
  expect_error("kernel k\noptions dtype\n", 2, 14,
               "expected '=' after option dtype, got end of line");
  expect_error("kernel k\noptions dtype=bf16 dtype=fp32\n", 2, 20,
               "expected an option not already given, got 'dtype'");
  for (const char* bad : {"0x10", "12ab", "1.5e", "-b"}) {
    SCOPED_TRACE(bad);
    expect_error(std::string("kernel k\noptions scale=") + bad + "\n", 2, bad[0] == '-' ? 16 : 15,
                 "expected option value (an identifier, a decimal number or a double-quoted "
                 "string)");
  }
  expect_error("kernel k\noptions a=b, c=d\n", 2, 12,
               "expected option NAME=VALUE or end of line, got ','");
  // A value that needs quotes written bare: the error says to quote it.
  expect_error("kernel k\noptions lnc=2-sprior\n", 2, 14,
               "got '-' (a value that is not one identifier or decimal number is written in "
               "double quotes: lnc=\"...\")");
  expect_error("kernel k\noptions scale=1/sqrt(128)\n", 2, 16, "got '/' (a value that is not");
  expect_error("kernel k\noptions lnc=\"2-sprior\"x\n", 2, 23, "got 'x' (a value that is not");
  expect_error("kernel k\noptions lnc=\"2-sprior\n", 2, 13,
               "expected option value (an identifier, a decimal number or a double-quoted "
               "string)");
  expect_error("kernel k\noptions lnc=\"a\\qb\"\n", 2, 15,
               "expected an escape (\\\\, \\\" or \\xHH) in the option value, got '\\q'");
  expect_error("kernel k\noptions lnc=-\"x\"\n", 2, 14, "expected option value");
  expect_error(std::string(kHeader) + "options a=b\n", 5, 1,
               "expected the options line directly after the kernel line, not later, got "
               "'options'");
}

// Decimal immediates are read correctly rounded to fp32; a value that rounds to infinity, or a
// nonzero value that rounds to zero, is refused; subnormals are kept. (The parser reads them
// with strtof, which flags subnormal results with ERANGE too.)
TEST(TextFormTest, DecimalImmediatesRoundToFp32AndOutOfRangeIsRefused) {
  const auto memset_bits = [](const std::string& value) {
    const Program p =
        parse_program(std::string(kHeader) +
                      "buffer t : sbuf fp32 [128, 64]\nmemset t[:, :], value=" + value + "\n");
    for (const Stmt& s : p.body) {
      if (const auto* i = std::get_if<InstrStmt>(&s.node)) {
        return std::bit_cast<uint32_t>(std::get<Memset>(i->ins).value.value);
      }
    }
    ADD_FAILURE() << "no memset";
    return uint32_t{0};
  };
  EXPECT_EQ(memset_bits("3.4028235e38"), 0x7f7fffffu);  // FLT_MAX
  EXPECT_EQ(memset_bits("8e-46"), 0x00000001u);         // rounds up to the least subnormal
  EXPECT_EQ(memset_bits("1e-38"), 0x006ce3eeu);         // subnormal
  EXPECT_EQ(memset_bits("0.1"), 0x3dcccccdu);
  EXPECT_EQ(memset_bits("0e999"), 0x00000000u);  // zero is in range at any exponent
  EXPECT_EQ(memset_bits("1e-38") ^ memset_bits("-1e-38"), 0x80000000u);
  for (const char* out : {"3.4028236e38", "1e39", "7e-46", "1e-50"}) {
    EXPECT_THROW(memset_bits(out), ParseError) << out;
  }
  for (const char* bad : {"1e", "0x10", "12ab"}) {
    EXPECT_THROW(memset_bits(bad), ParseError) << bad;
  }
}

TEST(TextFormTest, NestingIsLimited) {
  std::string h = kHeader;
  std::string deep(300, '(');
  expect_error(h + "dma_copy o[" + deep + "0", 5, 12 + 127,
               "expected nesting depth at most 128, got '('");
  std::string minus(300, '-');
  expect_error(h + "dma_copy o[" + minus + "N", 5, 12 + 127, "expected nesting depth at most 128");
  std::string loops;
  for (int k = 0; k < 200; ++k) loops += "for i" + std::to_string(k) + " in affine_range(2) {\n";
  expect_error(h + loops, 5 + 128, 1, "expected nesting depth at most 128");
  // A long flat chain is not nested, but its tree depth is bounded too.
  std::string chain = "N";
  for (int k = 0; k < 1200; ++k) chain += " + N";
  // The 1000th '+' makes the tree 1001 deep; it is at column 6 + 4 * 1000 - 2.
  expect_error(h + "grid " + chain + "\n", 5, 4004, "expected expression tree depth");
  std::string ok = "N";
  for (int k = 0; k < 500; ++k) ok += " + N";
  EXPECT_NO_THROW(parse_program(h + "grid " + ok + "\n"));
}

TEST(TextFormTest, ValidationErrorsPointAtTheStatement) {
  std::string h = kHeader;
  // An instruction rule (DMA into PSUM).
  expect_error(h + "buffer p : psum fp32 [128, 64]\n\ndma_copy p[:, :], a[0:+128, :]\n", 7, 1,
               "expected a valid program, got kernel 'k': instruction #0");
  // A tensor rule, for a buffer declared in a loop after other tensors.
  expect_error(h + "for i in affine_range(2) {\n  buffer ok : sbuf fp32 [128, 64]\n"
                   "  buffer big : sbuf fp32 [256, 64]\n}\n",
               7, 3, "partition dimension 256 exceeds 128");
  // A tensor rule on an HBM tensor.
  expect_error(h + "output o2 : hbm fp32 [0]\n", 5, 1, "a dimension is not positive");
  // A rule without a statement: reported at the kernel statement.
  expect_error("\n\nkernel k\nparam N in [1, 4]\ngrid 0\ninput a : hbm fp32 [N]\n", 3, 1,
               "grid must be at least 1");
  // Writes to an input, inside nested loops.
  expect_error(h + "buffer t : sbuf fp32 [128, 64]\nfor i in affine_range(2) {\n"
                   "  for j in sequential_range(2) {\n    memset t[:, :], value=0\n"
                   "    dma_copy a[0:+128, :], t[:, :]\n  }\n}\n",
               9, 5, "inputs are read-only");
}

// ---- robustness ----

// 1: parsed (and round-tripped), 0: ParseError, -1: anything else (`why` says what).
int parse_ok_or_parse_error(const std::string& text, std::string& why) {
  try {
    Program p = parse_program(text, "fuzz.nkir");
    // Whatever parses must round-trip too.
    std::string printed = print_program(p);
    Program q = parse_program(printed, "fuzz2.nkir");
    if (!(q == p)) {
      why = "round trip of a parsed mutation changed it:\n" + text;
      return -1;
    }
    return 1;
  } catch (const ParseError& e) {
    if (e.line < 1 || e.column < 1) {
      why = std::string("bad position: ") + e.what();
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    why = std::string("non-ParseError exception: ") + e.what() + "\n" + text;
    return -1;
  }
}

TEST(TextFormTest, MutatedInputsNeverCrash) {
  std::vector<std::string> seeds = {
      print_program(all_features_program()), print_program(tiled_matmul_program()),
      print_program(awkward_names_program()), print_program(minimal_program())};
  const std::vector<std::string> kTokens = {"[",          "]",
                                            "(",          ")",
                                            "{",          "}",
                                            ",",          ":",
                                            ":+",         "+",
                                            "-",          "*",
                                            "//",         "%",
                                            "=",          "==",
                                            "<=",         "\n",
                                            "#",          ".",
                                            "nan",        "inf",
                                            "0",          "-0",
                                            "1e99",       "1e-50",
                                            "0x7f",       "9999999999999999999",
                                            "for",        "buffer",
                                            "min(",       "perm",
                                            ".core(",     ".indirect(",
                                            "program_id", "true",
                                            "\xff",       std::string(1, '\0'),
                                            " "};
  std::mt19937_64 rng(2024);
  int parsed = 0, errors = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 7) {
        case 0:
          s.resize(at);
          break;  // truncate
        case 1:
          s[at] = static_cast<char>(rng() & 0xff);
          break;  // byte flip
        case 2:
          s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
          break;   // bit flip
        case 3: {  // delete a line
          size_t b = s.rfind('\n', at);
          b = b == std::string::npos ? 0 : b;
          size_t en = s.find('\n', at);
          s.erase(b, en == std::string::npos ? std::string::npos : en - b);
          break;
        }
        case 4: {  // duplicate a line
          size_t b = s.rfind('\n', at);
          b = b == std::string::npos ? 0 : b + 1;
          size_t en = s.find('\n', at);
          std::string line = s.substr(b, en == std::string::npos ? std::string::npos : en - b + 1);
          s.insert(b, line);
          break;
        }
        case 5:
          s.insert(at, kTokens[rng() % kTokens.size()]);
          break;  // insert a token
        default:
          s.erase(at, 1 + rng() % 8);
          break;  // delete bytes
      }
    }
    std::string why;
    int r = parse_ok_or_parse_error(s, why);
    ASSERT_GE(r, 0) << why;
    (r == 1 ? parsed : errors)++;
  }
  // Random bytes and random token soups.
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s;
    size_t len = rng() % 200;
    if (iter % 2) {
      for (size_t k = 0; k < len; ++k) s += static_cast<char>(rng() & 0xff);
    } else {
      s = "kernel k\n";
      for (size_t k = 0; k < len / 4; ++k) s += kTokens[rng() % kTokens.size()] + " ";
    }
    std::string why;
    ASSERT_GE(parse_ok_or_parse_error(s, why), 0) << why;
  }
  // Some mutations (in comments-free text, e.g. a duplicated blank line or a flipped digit) still
  // parse; most do not.
  EXPECT_GT(parsed, 10);
  EXPECT_GT(errors, 1000);
}

}  // namespace
}  // namespace ncv

namespace ncv {
namespace {

// An input's or output's interface shape (Tensor::interface_shape: the kernel's own shape of a
// tensor the program declares with refined dims) prints as an `interface [...]` clause, parses
// back to the identical Program, and is refused where it cannot be.
TEST(TextFormTest, InterfaceShapesRoundTrip) {
  const std::string text =
      "kernel k\n"
      "param p in [1, 128]\n"
      "param f in [64, 64]\n"
      "input a : hbm fp32 [p, 4, 16] interface [p, f]\n"
      "input ids : hbm int32 [2, 8] interface [16] range [0, 3]\n"
      "output o : hbm fp32 [p, 4, 16] interface [p * 64]\n"
      "\n"
      "dma_copy o[:, :, :], a[:, :, :]\n";
  const Program p = parse_program(text);
  ASSERT_EQ(p.tensors.size(), 3u);
  EXPECT_TRUE(p.tensor(0).interface_shape.size() == 2 &&
              p.tensor(0).interface_shape[1].same(Expr::var("f")));
  EXPECT_TRUE(p.tensor(1).value_range.has_value());
  const std::string printed = expect_round_trip(p);
  for (const char* s : {"input a : hbm fp32 [p, 4, 16] interface [p, f]\n",
                        "input ids : hbm int32 [2, 8] interface [16] range [0, 3]\n",
                        "output o : hbm fp32 [p, 4, 16] interface [p * 64]\n"}) {
    EXPECT_NE(printed.find(s), std::string::npos) << "missing `" << s << "` in\n" << printed;
  }
  // The clause after `range` parses too, and prints in the order above.
  EXPECT_TRUE(parse_program("kernel k\ninput ids : hbm int32 [2, 8] range [0, 3] interface [16]\n")
                  .tensor(0)
                  .interface_shape.size() == 1);

  const std::string h = "kernel k\nparam p in [1, 128]\n";
  expect_error(h + "scratch s : hbm fp32 [4, 4] interface [16]\n", 3, 29,
               "expected end of line, got 'interface'");
  expect_error(h + "input a : hbm fp32 [4, 4] interface [16] interface [16]\n", 3, 42,
               "expected each clause at most once, got 'interface'");
  expect_error(h + "input a : hbm fp32 [4, 4] interface [q]\n", 3, 38, "expected a declared param");
  expect_error(h + "output o : hbm fp32 [4, 16] interface [8, 9]\n", 3, 1,
               "interface shape has 72 elements, the declared shape 64");
  expect_error(h + "output o : hbm fp32 [4, 16] interface [8, 0]\n", 3, 1,
               "a dimension of the interface shape is not positive");
}

}  // namespace
}  // namespace ncv
