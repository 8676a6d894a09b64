// Property 6 (properties/README.md): illegal instructions are refused with the documented error,
// never a crash and never a silent result. Random ILLEGAL variants of legal one-instruction
// programs break one rule each: the tensor engine's K/M/N limits, PSUM tiles across a 2 KiB bank,
// misaligned or too many partitions, out-of-bounds slices, free sizes over the engines' limits,
// shape mismatches, and the engine/memory/dtype rules. Where the model documents the rule as static
// the property expects Builder::finish's BuildError; otherwise the dynamic check's CheckKind
// (model/interp/dynamic_error.h), from the fast path, the reference path and a trace-only run
// alike. Kernel params outside a registered kernel's domain must be InputErrors naming the param.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <functional>

#include "check/check.h"
#include "kernels/registry.h"
#include "properties/instruction_check.h"
#include "properties/instruction_gen.h"

namespace ncv::props::instr {
namespace {

void require(const std::optional<std::string>& problem) {
  if (problem) RC_FAIL(*problem);
}

// The run must stop at `instruction` with `kind`, identically on every path.
void check_refused(InstrCase& c, CheckKind kind, int64_t instruction,
                   const std::vector<std::string>& fragments) {
  c.finish();
  RC_LOG() << c.text() << "\n";
  const BothRuns runs = run_fast_and_reference(c);
  require(rejection_difference(runs.fast, kind, instruction, fragments));
  require(fast_reference_difference(runs.fast, runs.reference));
  // Trace-only runs (the timing model's) check the same rules without values.
  RunOptions o;
  o.hw = c.hw();
  o.compute_values = false;
  require(rejection_difference(run_program(c.program(), c.params(), {}, o), kind, instruction,
                               fragments));
}

void check_build_refused(InstrCase& c, std::optional<uint32_t> instruction,
                         const std::vector<std::string>& fragments) {
  RC_LOG() << c.text() << "\n";
  require(build_rejection_difference(c, instruction, fragments));
}

// --- A generic instruction under test ----------------------------------------------------------

// One operand of the instruction under test: a [rows, cols] view of an on-chip buffer. Read
// operands are loaded (so that no uninitialized read comes first), written ones are fresh.
struct OperandSpec {
  const char* role;  // the interpreter's name for it in messages
  Memory memory;
  DType dtype;
  int64_t rows, cols;
  bool read;
};

struct InstructionUnderTest {
  std::string name;
  std::vector<OperandSpec> operands;
  std::function<void(Builder&, const std::vector<Access>&)> emit;
  bool same_shape_operands = true;  // every operand has the same [rows, cols]
};

// Kinds of instruction under test.
enum Kind {
  kTensorCopy,
  kTensorTensor,
  kActivation,
  kTensorScalar,
  kReciprocal,
  kMemset,
  kIota,
  kMatmul
};
const std::vector<int> kAllKinds = {kTensorCopy, kTensorTensor, kActivation, kTensorScalar,
                                    kReciprocal, kMemset,       kIota,       kMatmul};
// The kinds whose operands all have one shape and that read at least one of them.
const std::vector<int> kSameShapeKinds = {kTensorCopy, kTensorTensor, kActivation, kTensorScalar,
                                          kReciprocal};

// A random legal instruction of one of `kinds`, with at most `max_rows` partitions per operand.
InstructionUnderTest pick_instruction(const std::vector<int>& kinds, int64_t max_rows) {
  const int64_t P = pick_size(1, max_rows), F = pick_size(1, 64);
  const Memory m = pick_bool(25) ? Memory::PSUM : Memory::SBUF;
  const DType t = pick_dtype({DType::fp32, DType::bf16, DType::fp16});
  auto same = [&](std::vector<const char*> reads) {
    std::vector<OperandSpec> ops = {{"destination", m, t, P, F, false}};
    for (const char* r : reads) ops.push_back({r, Memory::SBUF, t, P, F, true});
    return ops;
  };
  switch (pick_one(kinds)) {
    case kTensorCopy:
      return {"tensor_copy", same({"source"}),
              [](Builder& b, const std::vector<Access>& a) { b.tensor_copy(a[0], a[1]); }};
    case kTensorTensor:
      return {"tensor_tensor", same({"src0", "src1"}),
              [](Builder& b, const std::vector<Access>& a) {
                b.tensor_tensor(a[0], a[1], a[2], AluOp::add);
              }};
    case kActivation:
      return {"activation", same({"source"}), [](Builder& b, const std::vector<Access>& a) {
                b.activation(a[0], a[1], {.func = ActFunc::exp});
              }};
    case kTensorScalar:
      return {"tensor_scalar", same({"source"}), [](Builder& b, const std::vector<Access>& a) {
                b.tensor_scalar(a[0], a[1], AluOp::multiply, Imm{2.0f});
              }};
    case kReciprocal:
      return {"reciprocal", same({"source"}),
              [](Builder& b, const std::vector<Access>& a) { b.reciprocal(a[0], a[1]); }};
    case kMemset:
      return {"memset", same({}),
              [](Builder& b, const std::vector<Access>& a) { b.memset(a[0], 1.0f); }};
    case kIota: {
      std::vector<OperandSpec> ops = same({});
      ops[0].memory = Memory::SBUF;  // iota writes SBUF
      return {"iota", ops,
              [](Builder& b, const std::vector<Access>& a) { b.iota(a[0], Expr(0), 1, {1}); }};
    }
    default: {
      const int64_t K = pick_size(1, max_rows), M = pick_size(1, max_rows);
      const int64_t N = pick_size(1, 512);
      InstructionUnderTest i{
          "matmul",
          {{"matmul destination", Memory::PSUM, DType::fp32, M, N, false},
           {"stationary", Memory::SBUF, DType::bf16, K, M, true},
           {"moving", Memory::SBUF, DType::bf16, K, N, true}},
          [](Builder& b, const std::vector<Access>& a) { b.matmul(a[0], a[1], a[2]); }};
      i.same_shape_operands = false;
      return i;
    }
  }
}

// Where an operand's view sits in its buffer [buf_rows, buf_cols].
struct Layout {
  DimSlice partitions, cols;
  int64_t buf_rows = 0, buf_cols = 0;
};

Layout legal_layout(const OperandSpec& o) {
  Layout l;
  l.partitions = DimSlice{pick_partition_start(o.rows), o.rows, 1};
  l.buf_rows =
      std::min<int64_t>(128, l.partitions.start + o.rows + (pick_bool(70) ? 0 : pick_int(0, 3)));
  // PSUM views stay inside one bank (2 KiB) unless a property breaks that on purpose.
  const bool psum = o.memory == Memory::PSUM;
  const int64_t step = psum ? 1 : pick_one<int64_t>({1, 2});
  const int64_t start = psum ? 0 : pick_int(0, 2);
  l.cols = DimSlice{start, o.cols, step};
  l.buf_cols = start + (o.cols - 1) * step + 1 + (psum ? 0 : pick_int(0, 2));
  return l;
}

std::vector<Layout> legal_layouts(const InstructionUnderTest& ins) {
  std::vector<Layout> layouts;
  for (const OperandSpec& o : ins.operands) layouts.push_back(legal_layout(o));
  return layouts;
}

// Declares the operands' buffers (loading the read ones) and returns their accesses.
std::vector<Access> place(InstrCase& c, const std::vector<OperandSpec>& ops,
                          const std::vector<Layout>& layouts) {
  std::vector<Access> accesses;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OperandSpec& o = ops[i];
    const Layout& l = layouts[i];
    const std::vector<int64_t> shape = {l.buf_rows, l.buf_cols};
    const TensorRef buf =
        o.read ? c.loaded(o.memory, o.dtype, shape,
                          fill_values(o.dtype, l.buf_rows * l.buf_cols, ValueMix::ordinary, 1))
               : c.fresh(o.memory, o.dtype, shape);
    ViewSpec v;
    v.dims = {l.partitions, l.cols};
    accesses.push_back(c.at(buf, v));
  }
  return accesses;
}

size_t pick_operand(const InstructionUnderTest& ins) {
  return static_cast<size_t>(pick_int(0, static_cast<int64_t>(ins.operands.size()) - 1));
}

// The partition starts the rule forbids for `rows` partitions that still fit in 128.
std::vector<int64_t> misaligned_starts(int64_t rows) {
  std::vector<int64_t> starts;
  for (int64_t s = 1; s + rows <= 128; ++s) {
    if (!partition_start_legal(rows, s)) starts.push_back(s);
  }
  return starts;
}

// --- Partitions, bounds, sizes -------------------------------------------------------------------

RC_GTEST_PROP(InstrIllegal, MisalignedPartitionStartIsAPartitionRuleError, ()) {
  const InstructionUnderTest ins = pick_instruction(kAllKinds, 127);
  std::vector<Layout> layouts = legal_layouts(ins);
  const size_t bad = pick_operand(ins);
  const int64_t rows = ins.operands[bad].rows;
  const int64_t start = pick_one(misaligned_starts(rows));
  layouts[bad].partitions.start = start;
  layouts[bad].buf_rows = std::max(layouts[bad].buf_rows, start + rows);
  InstrCase c("misaligned_" + ins.name);
  const std::vector<Access> a = place(c, ins.operands, layouts);
  const uint32_t id = c.next_instruction();
  ins.emit(c.b(), a);
  check_refused(c, CheckKind::partition_rule, id,
                {std::string(ins.operands[bad].role) + " '",
                 "spans " + std::to_string(rows) + " partitions starting at partition " +
                     std::to_string(start)});
}

RC_GTEST_PROP(InstrIllegal, MorePartitionsThanTheCoreHasAreRefused, ()) {
  const int64_t rows = pick_int(129, 256);
  const int64_t cols = pick_size(1, 64);
  InstrCase c("too_many_partitions");
  if (pick_bool(50)) {
    // A constant partition dimension is a static rule on the tensor.
    const TensorRef t = c.fresh(Memory::SBUF, DType::bf16, {rows, cols});
    c.b().memset(t(), 0.0f);
    check_build_refused(c, std::nullopt,
                        {"partition dimension " + std::to_string(rows) + " exceeds 128"});
    return;
  }
  // A param-dependent one is checked when the buffers are set up, before any instruction runs.
  const Expr P = c.b().param("rows", 1, 256);
  c.set_param("rows", rows);
  const TensorRef st = c.b().sbuf("st", DType::bf16, {P, Expr(cols)});
  c.b().memset(st(), 1.0f);
  if (pick_bool(50)) {  // the stationary's partitions are matmul's K
    const TensorRef mv = c.b().sbuf("mv", DType::bf16, {P, Expr(64)});
    const TensorRef ps = c.b().psum("ps", DType::fp32, {Expr(cols), Expr(64)});
    c.b().memset(mv(), 1.0f);
    c.b().matmul(ps(), st(), mv());
  }
  check_refused(c, CheckKind::partition_rule, -1, {"has " + std::to_string(rows) + " partitions"});
}

RC_GTEST_PROP(InstrIllegal, OutOfBoundsSliceIsAnOutOfBoundsError, ()) {
  if (pick_bool(20)) {  // a DMA reading past the end of an HBM tensor
    const int64_t rows = pick_size(1, 128), cols = pick_size(1, 64);
    const int64_t dim = pick_int(0, 1);
    const std::vector<int64_t> shape = {rows, cols};
    InstrCase c("out_of_bounds_dma");
    const TensorRef in = c.hbm_input(DType::fp32, shape,
                                     fill_values(DType::fp32, rows * cols, ValueMix::ordinary, 1));
    const TensorRef dst = c.fresh(Memory::SBUF, DType::fp32, shape);
    ViewSpec v = ViewSpec::whole(shape);
    v.dims[static_cast<size_t>(dim)].start = pick_int(1, 4);
    const uint32_t id = c.next_instruction();
    c.b().dma_copy(dst(), c.at(in, v));
    check_refused(c, CheckKind::out_of_bounds, id,
                  {"source '", "dim " + std::to_string(dim) + " reads indices"});
    return;
  }
  const InstructionUnderTest ins = pick_instruction(kAllKinds, 128);
  std::vector<Layout> layouts = legal_layouts(ins);
  const size_t bad = pick_operand(ins);
  const int64_t dim = pick_int(0, 1);
  Layout& l = layouts[bad];
  DimSlice& slice = dim == 0 ? l.partitions : l.cols;
  int64_t& extent = dim == 0 ? l.buf_rows : l.buf_cols;
  const int64_t last = slice.start + (slice.size - 1) * slice.step;
  if (last >= 1 && pick_bool(50)) {
    extent = pick_int(1, last);  // the buffer ends inside the view
  } else {
    slice.start = extent - (slice.size - 1) * slice.step + pick_int(0, 3);  // shifted past the end
  }
  InstrCase c("out_of_bounds_" + ins.name);
  const std::vector<Access> a = place(c, ins.operands, layouts);
  const uint32_t id = c.next_instruction();
  ins.emit(c.b(), a);
  check_refused(c, CheckKind::out_of_bounds, id,
                {std::string(ins.operands[bad].role) + " '",
                 "dim " + std::to_string(dim) + " reads indices"});
}

RC_GTEST_PROP(InstrIllegal, FreeSizeOverTheEngineLimitIsAShapeRuleError, ()) {
  // ARCH2: at most 64K elements per partition from SBUF, 4K from PSUM.
  const bool psum = pick_bool(50);
  const Memory m = psum ? Memory::PSUM : Memory::SBUF;
  const DType t = psum ? DType::bf16 : pick_dtype({DType::uint8, DType::fp8_e4m3});
  const int64_t limit = psum ? 4096 : 65536;
  const int64_t rows = pick_size(1, 128);
  const int64_t cols = pick_int(limit + 1, psum ? 8192 : limit + 4096);
  const bool as_source = pick_bool(50);
  InstrCase c("free_size_over_limit");
  // Fresh even as a source: the free-size rule comes before the uninitialized-read check.
  const TensorRef big = c.fresh(m, t, {rows, cols});
  const uint32_t id = c.next_instruction();
  if (as_source) {
    const TensorRef small = c.fresh(Memory::SBUF, t, {rows, 1});
    c.b().tensor_copy(small(), big());
  } else {
    c.b().memset(big(), 0.0f);
  }
  check_refused(c, CheckKind::shape_rule, id,
                {std::string(as_source ? "source" : "destination") + " '",
                 "has " + std::to_string(cols) + " elements per partition; the limit for " +
                     std::string(memory_name(m)) + " operands is " + std::to_string(limit)});
}

RC_GTEST_PROP(InstrIllegal, MismatchedOperandShapesAreShapeRuleErrors, ()) {
  InstructionUnderTest ins = pick_instruction(kSameShapeKinds, 128);
  const size_t bad = pick_operand(ins);
  ins.operands[bad].cols += pick_int(1, 8);
  InstrCase c("mismatched_" + ins.name);
  const std::vector<Access> a = place(c, ins.operands, legal_layouts(ins));
  const uint32_t id = c.next_instruction();
  ins.emit(c.b(), a);
  check_refused(c, CheckKind::shape_rule, id, {"partitions x elements per partition must match"});
}

// --- Tensor engine limits and PSUM banks ---------------------------------------------------------

RC_GTEST_PROP(InstrIllegal, MatmulBeyondTheTensorEngineLimitsIsAShapeRuleError, ()) {
  // ISA-NEW nc_matmul: K <= 128 (partitions: see MorePartitionsThanTheCoreHasAreRefused),
  // M <= 128, N <= 512 (4096 on trn3), from the generation's HwConfig.
  const HwConfig& hw =
      *pick_one<const HwConfig*>({&hw_config_trn1(), &hw_config_trn2(), &hw_config_trn3()});
  const bool wide_m = pick_bool(50);
  const int64_t K = pick_size(1, 128);
  const int64_t M =
      wide_m ? pick_int(hw.matmul_max_m + 1, hw.matmul_max_m + 384) : pick_size(1, 128);
  const int64_t N =
      wide_m ? pick_size(1, 512) : pick_int(hw.matmul_max_n + 1, hw.matmul_max_n + 1536);
  InstrCase c("matmul_beyond_limits", &hw);
  const TensorRef st = c.loaded(Memory::SBUF, DType::bf16, {K, M},
                                fill_values(DType::bf16, K * M, ValueMix::small_ints, 1));
  const TensorRef mv = c.loaded(Memory::SBUF, DType::bf16, {K, N},
                                fill_values(DType::bf16, K * N, ValueMix::small_ints, 2));
  const TensorRef ps = c.fresh(Memory::PSUM, DType::fp32, {std::min<int64_t>(M, 128), 512});
  const uint32_t id = c.next_instruction();
  c.b().matmul(ps(), st(), mv());
  check_refused(c, CheckKind::shape_rule, id,
                {"matmul K=" + std::to_string(K) + ", M=" + std::to_string(M) +
                 ", N=" + std::to_string(N) + " exceeds " + hw.name + "'s limits"});
}

RC_GTEST_PROP(InstrIllegal, PsumTileAcrossABankIsAPsumBankError, ()) {
  // The destination [rows, n] starts `col` fp32 columns into a 3-bank PSUM buffer and runs across
  // the bank boundary at column `boundary` (a 2 KiB bank holds 512 fp32).
  const bool transpose = pick_bool(40);
  const int64_t rows = pick_size(1, 128);
  const int64_t n = transpose ? pick_size(2, 128) : pick_size(2, 512);
  const int64_t boundary = pick_one<int64_t>({512, 1024});
  const int64_t col = boundary - pick_int(1, n - 1);
  InstrCase c(transpose ? "transpose_across_banks" : "matmul_across_banks");
  const TensorRef ps = c.fresh(Memory::PSUM, DType::fp32, {rows, 1536});
  ViewSpec v = ViewSpec::whole({rows, 1536});
  v.dims[1] = DimSlice{col, n, 1};
  uint32_t id = 0;
  if (transpose) {  // src [n, rows] -> dst [rows, n]
    const TensorRef src = c.loaded(Memory::SBUF, DType::bf16, {n, rows},
                                   fill_values(DType::bf16, n * rows, ValueMix::ordinary, 1));
    id = c.next_instruction();
    c.b().transpose(c.at(ps, v), src(), Engine::Tensor);
  } else {
    const int64_t K = pick_size(1, 128);
    const TensorRef st = c.loaded(Memory::SBUF, DType::bf16, {K, rows},
                                  fill_values(DType::bf16, K * rows, ValueMix::ordinary, 1));
    const TensorRef mv = c.loaded(Memory::SBUF, DType::bf16, {K, n},
                                  fill_values(DType::bf16, K * n, ValueMix::ordinary, 2));
    id = c.next_instruction();
    c.b().matmul(c.at(ps, v), st(), mv());
  }
  check_refused(c, CheckKind::psum_bank, id, {"crossing a 2048-byte bank boundary"});
}

// --- Engine, memory and dtype rules --------------------------------------------------------------

RC_GTEST_PROP(InstrIllegal, GenerationRulesAreRefusedAtRunTime, ()) {
  switch (pick_int(0, 3)) {
    case 0: {  // ARCH3: tensor_copy on the scalar engine from NeuronCore-v3 (trn2) on
      const int64_t rows = pick_size(1, 128), cols = pick_size(1, 64);
      InstrCase c("scalar_tensor_copy_on_trn1", &hw_config_trn1());
      const TensorRef src = c.loaded(Memory::SBUF, DType::fp32, {rows, cols},
                                     fill_values(DType::fp32, rows * cols, ValueMix::ordinary, 1));
      const TensorRef dst = c.fresh(Memory::SBUF, DType::fp32, {rows, cols});
      const uint32_t id = c.next_instruction();
      c.b().tensor_copy(dst(), src(), Engine::Scalar);
      check_refused(c, CheckKind::engine_rule, id, {"tensor_copy on the scalar engine needs trn2"});
      return;
    }
    case 1: {  // ARCH4: bf16 PSUM destinations from trn3 on
      const HwConfig& hw = *pick_one<const HwConfig*>({&hw_config_trn1(), &hw_config_trn2()});
      const int64_t K = pick_size(1, 128), M = pick_size(1, 128), N = pick_size(1, 512);
      InstrCase c("bf16_psum_matmul", &hw);
      const TensorRef st = c.loaded(Memory::SBUF, DType::bf16, {K, M},
                                    fill_values(DType::bf16, K * M, ValueMix::ordinary, 1));
      const TensorRef mv = c.loaded(Memory::SBUF, DType::bf16, {K, N},
                                    fill_values(DType::bf16, K * N, ValueMix::ordinary, 2));
      const TensorRef ps = c.fresh(Memory::PSUM, DType::bf16, {M, N});
      const uint32_t id = c.next_instruction();
      c.b().matmul(ps(), st(), mv());
      check_refused(c, CheckKind::engine_rule, id, {"matmul into bf16 PSUM needs trn3"});
      return;
    }
    default: {  // transposes beyond 32x32 (vector engine) or 128x128 (tensor engine)
      const bool vector = pick_bool(50);
      const int64_t lim = vector ? 32 : 128;
      const bool wide_rows = vector && pick_bool(50);
      const int64_t P = wide_rows ? pick_int(lim + 1, 128) : pick_size(1, lim);
      const int64_t F = wide_rows ? pick_size(1, lim) : pick_int(lim + 1, vector ? 128 : 512);
      InstrCase c(vector ? "vector_transpose_too_big" : "tensor_transpose_too_big");
      const TensorRef src = c.loaded(Memory::SBUF, DType::bf16, {P, F},
                                     fill_values(DType::bf16, P * F, ValueMix::ordinary, 1));
      // A legal destination: the size limit is checked before the destination's shape.
      const TensorRef dst = c.fresh(vector ? Memory::SBUF : Memory::PSUM, DType::bf16,
                                    {std::min<int64_t>(F, 128), P});
      const uint32_t id = c.next_instruction();
      c.b().transpose(dst(), src(), vector ? Engine::Vector : Engine::Tensor);
      check_refused(c, CheckKind::shape_rule, id,
                    {"exceeds its " + std::to_string(lim) + "x" + std::to_string(lim) + " limit"});
      return;
    }
  }
}

// A loaded [rows, cols] operand, a fresh one, and an HBM input, for the static-rule variants.
struct StaticCase {
  InstrCase c{"static_rule"};
  int64_t rows = pick_size(1, 128), cols = pick_size(1, 64);
  TensorRef loaded(Memory m, DType t) {
    return c.loaded(m, t, {rows, cols}, fill_values(t, rows * cols, ValueMix::small_ints, 1));
  }
  TensorRef fresh(Memory m, DType t) { return c.fresh(m, t, {rows, cols}); }
};

RC_GTEST_PROP(InstrIllegal, StaticRulesAreBuildErrorsNamingTheInstruction, ()) {
  StaticCase s;
  Builder& b = s.c.b();
  const DType f = pick_dtype({DType::fp32, DType::bf16, DType::fp16});
  const DType i = pick_dtype(kIntDTypes);
  std::vector<std::string> fragments;
  uint32_t id = 0;
  switch (pick_int(0, 11)) {
    case 0: {  // ARCH2: GpSimd cannot access PSUM
      const bool psum_src = pick_bool(50);
      const TensorRef src = s.loaded(psum_src ? Memory::PSUM : Memory::SBUF, f);
      const TensorRef other = s.loaded(Memory::SBUF, f);
      const TensorRef dst = s.fresh(psum_src ? Memory::SBUF : Memory::PSUM, f);
      id = s.c.next_instruction();
      switch (pick_int(0, 3)) {
        case 0:
          b.tensor_copy(dst(), src(), Engine::GpSimd);
          break;
        case 1:
          b.reciprocal(dst(), src(), Engine::GpSimd);
          break;
        case 2:
          b.tensor_scalar(dst(), src(), AluOp::add, Imm{1.0f}, false, std::nullopt, Imm{0.0f},
                          false, Engine::GpSimd);
          break;
        default:
          b.tensor_tensor(dst(), src(), other(), AluOp::add, Engine::GpSimd);
      }
      fragments = {"the GpSimd engine cannot access PSUM"};
      break;
    }
    case 1: {  // bitwise operators need integer dtypes
      const TensorRef src = s.loaded(Memory::SBUF, f);
      const TensorRef dst = s.fresh(Memory::SBUF, pick_bool(50) ? f : i);
      const AluOp op = pick_one<AluOp>(
          {AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor, AluOp::shift_left});
      id = s.c.next_instruction();
      if (pick_bool(50)) {
        b.tensor_tensor(dst(), src(), src(), op);
      } else {
        b.tensor_scalar(dst(), src(), op, Imm{1.0f});
      }
      fragments = {"bitwise op " + std::string(alu_op_name(op)) + " needs integer dtypes"};
      break;
    }
    case 2: {  // ISA-NEW: an fp32 matmul operand pairs with fp32
      const DType other = pick_dtype({DType::bf16, DType::fp16, DType::fp8_e4m3});
      const bool fp32_stationary = pick_bool(50);
      const TensorRef st = s.loaded(Memory::SBUF, fp32_stationary ? DType::fp32 : other);
      const TensorRef mv = s.loaded(Memory::SBUF, fp32_stationary ? other : DType::fp32);
      const TensorRef ps = s.c.fresh(Memory::PSUM, DType::fp32, {s.cols, s.cols});
      id = s.c.next_instruction();
      b.matmul(ps(), st(), mv());
      fragments = {"an fp32 matmul input must pair with fp32"};
      break;
    }
    case 3: {  // compute engines read SBUF/PSUM, not HBM
      const TensorRef in = s.c.hbm_input(f, {s.rows, s.cols},
                                         fill_values(f, s.rows * s.cols, ValueMix::ordinary, 1));
      const TensorRef dst = s.fresh(Memory::SBUF, f);
      id = s.c.next_instruction();
      if (pick_bool(50)) {
        b.tensor_copy(dst(), in());
      } else {
        b.activation(dst(), in(), {.func = ActFunc::relu});
      }
      fragments = {"source must be in SBUF or PSUM"};
      break;
    }
    case 4: {  // ISA-NEW: DMA moves between HBM and SBUF only
      const TensorRef in = s.c.hbm_input(f, {s.rows, s.cols},
                                         fill_values(f, s.rows * s.cols, ValueMix::ordinary, 1));
      const TensorRef ps = s.fresh(Memory::PSUM, f);
      id = s.c.next_instruction();
      b.dma_copy(ps(), in(), static_cast<int>(pick_int(0, 15)));
      fragments = {"DMA moves between HBM and SBUF only, not PSUM"};
      break;
    }
    case 5: {  // ISA-NEW: tensor_tensor inputs cannot both be in PSUM
      const TensorRef x = s.loaded(Memory::PSUM, f);
      const TensorRef y = s.loaded(Memory::PSUM, f);
      const TensorRef dst = s.fresh(pick_bool(50) ? Memory::SBUF : Memory::PSUM, f);
      id = s.c.next_instruction();
      b.tensor_tensor(dst(), x(), y(), AluOp::add);
      fragments = {"tensor_tensor inputs cannot both be in PSUM"};
      break;
    }
    case 6: {  // kernel inputs are read-only
      const TensorRef in = s.c.hbm_input(f, {s.rows, s.cols},
                                         fill_values(f, s.rows * s.cols, ValueMix::ordinary, 1));
      const TensorRef src = s.loaded(Memory::SBUF, f);
      id = s.c.next_instruction();
      b.dma_copy(in(), src());
      fragments = {"writes kernel input '" + s.c.name_of(in) + "' (inputs are read-only)"};
      break;
    }
    case 7: {  // ISA-NEW: integer predicates
      const TensorRef dst = s.loaded(Memory::SBUF, f);
      const TensorRef pred = s.loaded(Memory::SBUF, pick_dtype(kFloatDTypes));
      id = s.c.next_instruction();
      b.tensor_copy_predicated(dst(), Imm{1.0f}, pred());
      fragments = {"predicate must be uint8/uint16/uint32/int32"};
      break;
    }
    case 8: {  // matmul reads SBUF and writes PSUM
      const bool dst_in_sbuf = pick_bool(50);
      const TensorRef st = s.loaded(dst_in_sbuf ? Memory::SBUF : Memory::PSUM, DType::bf16);
      const TensorRef mv = s.loaded(Memory::SBUF, DType::bf16);
      const TensorRef out =
          s.c.fresh(dst_in_sbuf ? Memory::SBUF : Memory::PSUM, DType::fp32, {s.cols, s.cols});
      id = s.c.next_instruction();
      b.matmul(out(), st(), mv());
      fragments = {dst_in_sbuf ? "matmul destination must be in psum, is in sbuf"
                               : "stationary must be in sbuf, is in psum"};
      break;
    }
    case 9: {  // ISA-NEW: reduction operators
      const AluOp op = pick_one<AluOp>({AluOp::divide, AluOp::pow, AluOp::abs_max, AluOp::is_gt});
      const TensorRef src = s.loaded(Memory::SBUF, f);
      const TensorRef dst = s.c.fresh(Memory::SBUF, f, {s.rows, 1});
      id = s.c.next_instruction();
      b.tensor_reduce(dst(), src(), op);
      fragments = {std::string(alu_op_name(op)) + " is not a legal reduction op"};
      break;
    }
    case 10: {  // transposes run on the tensor or vector engine
      const TensorRef src = s.c.loaded(Memory::SBUF, f, {s.rows, s.rows},
                                       fill_values(f, s.rows * s.rows, ValueMix::ordinary, 1));
      const TensorRef dst = s.c.fresh(Memory::SBUF, f, {s.rows, s.rows});
      id = s.c.next_instruction();
      b.transpose(dst(), src(), pick_bool(50) ? Engine::GpSimd : Engine::Scalar);
      fragments = {"transpose runs on the tensor or vector engine"};
      break;
    }
    default: {  // ISA-NEW: bitwise tensor_scalar ops run on the vector engine only
      const TensorRef src = s.loaded(Memory::SBUF, i);
      const TensorRef dst = s.fresh(Memory::SBUF, i);
      id = s.c.next_instruction();
      b.tensor_scalar(dst(), src(), AluOp::bitwise_and, Imm{1.0f}, false, std::nullopt, Imm{0.0f},
                      false, pick_bool(50) ? Engine::GpSimd : Engine::Scalar);
      fragments = {"bitwise ops run on the vector engine only"};
      break;
    }
  }
  check_build_refused(s.c, id, fragments);
}

// --- Kernel params -------------------------------------------------------------------------------

// The smallest value of a param's domain.
int64_t smallest(const Param& p) {
  const int64_t m = p.multiple_of;
  return p.lo >= 0 ? (p.lo + m - 1) / m * m : -((-p.lo) / m * m);
}

RC_GTEST_PROP(InstrKernelParams, OutsideTheDomainAreInputErrorsNamingTheParam, ()) {
  const auto& registry = kernels::registry();
  RC_ASSERT(!registry.empty());
  const auto index = static_cast<size_t>(pick_int(0, static_cast<int64_t>(registry.size()) - 1));
  const kernels::Variant& v = registry[index];
  RC_ASSERT(kernels::find_variant(v.name) == &v);
  const kernels::Options options = v.resolve({});
  const Program program = v.build(options);
  RC_ASSERT(!program.params.empty());

  ParamValues params;
  for (const Param& p : program.params) params[p.name] = smallest(p);
  const Param& p = program.params[static_cast<size_t>(
      pick_int(0, static_cast<int64_t>(program.params.size()) - 1))];
  std::string named = p.name;
  switch (pick_int(p.multiple_of > 1 ? 0 : 1, 4)) {
    case 0:  // inside the range, off the multiple_of grid
      params[p.name] = smallest(p) + pick_int(1, p.multiple_of - 1);
      if (params[p.name] > p.hi) params[p.name] = p.hi + 1;
      break;
    case 1:  // below the range
      params[p.name] = p.lo - p.multiple_of * pick_int(1, 1000);
      break;
    case 2:  // above the range
      params[p.name] = p.hi + p.multiple_of * pick_int(1, 1000);
      break;
    case 3:  // missing
      params.erase(p.name);
      break;
    default:  // not a param of the kernel
      named = "no_such_param_" + std::to_string(pick_int(0, 99));
      params[named] = 1;
  }
  RC_LOG() << v.name << " with";
  for (const auto& [name, value] : params) RC_LOG() << " " << name << "=" << value;
  RC_LOG() << "\n";

  auto refused = [&](const std::function<void()>& call, const char* what) {
    try {
      call();
    } catch (const InputError& e) {
      if (std::string(e.what()).find(named) == std::string::npos) {
        RC_FAIL(std::string(what) + ": the InputError does not name '" + named + "': " + e.what());
      }
      return;
    } catch (const std::exception& e) {
      RC_FAIL(std::string(what) + " threw something other than InputError: " + e.what());
    }
    RC_FAIL(std::string(what) + " accepted params outside the domain");
  };
  refused([&] { check_params(program, params); }, "check_params");
  refused([&] { run_program(program, params, {}); }, "run_program");
  kernels::CheckOptions opts;
  opts.cases = 1;
  refused([&] { kernels::check_kernel(v, program, options, params, opts); }, "check_kernel");
}

}  // namespace
}  // namespace ncv::props::instr
