// Property 5 (properties/README.md): every ISA instruction kind on random legal shapes, dtypes and
// access patterns, as a one-instruction program (inputs loaded by DMA, the instruction, its outputs
// stored), run on the interpreter's fast paths and on its per-element reference path. Each
// property holds
//   (a) the fast path to the reference path, bit for bit, and
//   (b) every output to values computed here from the documented semantics with independent
//       arithmetic (properties/instruction_expect.h): exact integer products, conversions rounded
//       on bits, fp32 operations rounded once, the NaN rules.
// Values include NaN payloads, +-Inf, -0, subnormals and overflow; views have legal partition
// windows, strided and offset free dims, permutations and broadcasts. Destinations are fresh,
// loaded beforehand, the source view itself or a view overlapping it; a loaded one is stored
// whole, so that a write outside the destination view fails too. A failure logs the program's
// text form; RapidCheck prints the reproduce string.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <numeric>
#include <utility>

#include "properties/instruction_check.h"
#include "properties/instruction_exact.h"
#include "properties/instruction_expect.h"
#include "properties/instruction_gen.h"

namespace ncv::props::instr {
namespace {

using Outputs = std::vector<std::pair<std::string, Expected>>;

void require(const std::optional<std::string>& problem) {
  if (problem) RC_FAIL(*problem);
}

// Finishes the case, runs it on both paths, and holds the fast path to the reference path and
// every output to its expectation. Returns the fast run for further checks. `strict`: the runs
// use RunOptions::strict_reads (run_case).
RunResult check_case(InstrCase& c, const Outputs& outputs, bool strict = false) {
  c.finish();
  RC_LOG() << c.text() << "\n";
  BothRuns runs = run_fast_and_reference(c, strict);
  require(fast_reference_difference(runs.fast, runs.reference));
  for (const auto& [name, want] : outputs) require(expected_difference(runs.fast, name, want));
  return std::move(runs.fast);
}

// A case whose instruction `at` has no documented result (expect::tensor_tensor_undefined): both
// paths stop there with undefined_result, the same error, no output.
void check_undefined(InstrCase& c, uint32_t at) {
  c.finish();
  RC_LOG() << c.text() << "\n";
  const BothRuns runs = run_fast_and_reference(c);
  require(rejection_difference(runs.fast, CheckKind::undefined_result, at, {"does not fit the"}));
  require(fast_reference_difference(runs.fast, runs.reference));
}

int64_t elements(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

bool has_broadcast(const ViewSpec& v) {
  for (const DimSlice& d : v.dims) {
    if (d.step == 0 && d.size > 1) return true;
  }
  return false;
}

Memory pick_memory(int psum_percent) {
  return pick_bool(psum_percent) ? Memory::PSUM : Memory::SBUF;
}

// Views of read operands may broadcast. Buffers stay small enough that a case never runs out of
// on-chip memory: PSUM ones within one 2 KiB bank, SBUF ones within 32 KiB per partition.
ViewOptions reads(Memory m, DType t) {
  ViewOptions o;
  o.broadcast = true;
  o.max_row_elems = (m == Memory::PSUM ? 2048 : 32768) / static_cast<int64_t>(dtype_size(t));
  return o;
}
ViewOptions writes(Memory m, DType t) {
  ViewOptions o = reads(m, t);
  o.broadcast = false;
  return o;
}

struct Placed {
  TensorRef buf;
  ViewSpec view;
};

Placed loaded_operand(InstrCase& c, Memory m, DType t, int64_t rows,
                      const std::vector<int64_t>& free, const ViewOptions& o, ValueMix mix) {
  const PlacedView pv = pick_view(rows, free, o);
  return {c.loaded(m, t, pv.shape, fill_values(t, elements(pv.shape), mix, pick_seed())), pv.view};
}

Placed fresh_operand(InstrCase& c, Memory m, DType t, int64_t rows,
                     const std::vector<int64_t>& free, const ViewOptions& o) {
  const PlacedView pv = pick_view(rows, free, o);
  return {c.fresh(m, t, pv.shape), pv.view};
}

// The destination of an instruction without a source to alias: a fresh buffer, or a loaded one
// (so that a write outside the view shows up when the whole buffer is stored).
Placed target(InstrCase& c, Memory m, DType t, int64_t rows, const std::vector<int64_t>& free) {
  if (pick_bool(30)) return loaded_operand(c, m, t, rows, free, writes(m, t), ValueMix::raw_bits);
  return fresh_operand(c, m, t, rows, free, writes(m, t));
}

// The destination of an instruction that reads `src`: besides target()'s choices, the source view
// itself (in place) or another view of the source's buffer that overlaps it; the model defines
// both (every input is read before any output is written).
Placed destination(InstrCase& c, const Placed& src, Memory src_mem, Memory m, DType t, int64_t rows,
                   const std::vector<int64_t>& free) {
  const bool alias = c.dtype(src.buf) == t && src_mem == m && c.is_loaded(src.buf);
  const int64_t choice = pick_int(0, 9);
  if (alias && choice < 2 && !has_broadcast(src.view) && src.view.free_shape() == free) {
    return src;
  }
  if (alias && choice < 4) {
    if (auto v = pick_view_within(c.shape_of(src.buf), rows, free)) return {src.buf, *v};
  }
  return target(c, m, t, rows, free);
}

// A loaded destination is stored whole, so that its elements outside the view are checked to keep
// their loaded values; a fresh one is stored as its view.
std::string store_destination(InstrCase& c, const Placed& dst) {
  return c.store(dst.buf, c.is_loaded(dst.buf) ? ViewSpec::whole(c.shape_of(dst.buf)) : dst.view);
}
// The expectation of what store_destination stored, given the expected elements of the view.
Expected widened(const InstrCase& c, const Placed& dst, const Expected& view) {
  if (!c.is_loaded(dst.buf)) return view;
  const std::vector<int64_t>& shape = c.shape_of(dst.buf);
  Expected e{view.dtype, {}};
  for (uint32_t b : c.initial(dst.buf, ViewSpec::whole(shape)).bits) e.bits.emplace_back(b);
  const std::vector<int64_t> at = dst.view.offsets(shape);
  for (size_t k = 0; k < at.size(); ++k) e.bits[static_cast<size_t>(at[k])] = view.bits[k];
  return e;
}
std::pair<std::string, Expected> stored(InstrCase& c, const Placed& dst, const Expected& view) {
  Expected e = widened(c, dst, view);
  return {store_destination(c, dst), std::move(e)};
}

// A tensor_scalar-like operand: an immediate or a [rows, 1] column of an SBUF buffer.
struct ScalarPick {
  Operand ir;
  expect::ScalarOperand model;
};
ScalarPick pick_scalar(InstrCase& c, int64_t rows, bool integer_domain) {
  if (pick_bool(50)) {
    const float v = integer_domain
                        ? static_cast<float>(pick_int(-3, 40))
                        : pick_immediate(pick_value_mix(
                              {ValueMix::ordinary, ValueMix::hard, ValueMix::small_ints}));
    return {Imm{v}, {v, {}}};
  }
  const DType t = pick_dtype(integer_domain ? kIntDTypes : kAllDTypesList);
  const ValueMix mix = integer_domain ? pick_value_mix({ValueMix::small_ints, ValueMix::raw_bits})
                                      : pick_value_mix({ValueMix::ordinary, ValueMix::hard});
  const Placed col = loaded_operand(c, Memory::SBUF, t, rows, {1}, ViewOptions{}, mix);
  return {c.at(col.buf, col.view), {std::nullopt, c.initial(col.buf, col.view)}};
}

const std::vector<AluOp> kFloatOps = {
    AluOp::add,       AluOp::subtract, AluOp::multiply, AluOp::divide,  AluOp::max,
    AluOp::min,       AluOp::pow,      AluOp::abs_max,  AluOp::abs_min, AluOp::is_equal,
    AluOp::not_equal, AluOp::is_gt,    AluOp::is_ge,    AluOp::is_lt,   AluOp::is_le};
const std::vector<AluOp> kBitwiseOps = {AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor,
                                        AluOp::shift_left, AluOp::shift_right};

AluOp pick_op(const std::vector<AluOp>& ops) {
  return pick_one(ops);
}

ValueMix pick_arithmetic_mix() {
  return pick_value_mix(
      {ValueMix::small_ints, ValueMix::ordinary, ValueMix::hard, ValueMix::raw_bits});
}

// --- Data movement -------------------------------------------------------------------------------

// A view of `total` HBM elements: either [rows, free...] with strides, or a reshape [a, total/a],
// sometimes transposed (load_transpose2d).
PlacedView pick_hbm_view(int64_t rows, const std::vector<int64_t>& free) {
  ViewOptions o;
  o.on_chip = false;
  o.broadcast = true;
  if (pick_bool(50)) return pick_view(rows, free, o);
  const int64_t total = rows * elements(free);
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= total; ++d) {
    if (total % d == 0) divisors.push_back(d);
  }
  const int64_t a = pick_one(divisors);
  if (!pick_bool(40)) return pick_view(a, {total / a}, o);
  o.broadcast = false;
  PlacedView pv = pick_view(total / a, {a}, o);  // tensor [~total/a, ~a], read transposed
  pv.view.perm = {1, 0};
  return pv;
}

RC_GTEST_PROP(InstrDmaCopy, MovesAndCastsEveryElementAsDocumented, ()) {
  const DType from = pick_dtype(kAllDTypesList), to = pick_dtype(kAllDTypesList);
  const ValueMix mix = pick_arithmetic_mix();
  const int64_t rows = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(256, 2);
  const int queue = static_cast<int>(pick_int(0, 15));
  InstrCase c("dma_case");
  Outputs outputs;
  switch (pick_int(0, 3)) {
    case 0: {  // HBM -> SBUF
      const PlacedView hv = pick_hbm_view(rows, free);
      const TensorRef in =
          c.hbm_input(from, hv.shape, fill_values(from, elements(hv.shape), mix, pick_seed()));
      const Placed dst = target(c, Memory::SBUF, to, rows, free);
      c.b().dma_copy(c.at(dst.buf, dst.view), c.at(in, hv.view), queue);
      // Elements pair up by their row-major index in the two views.
      outputs.push_back(stored(c, dst, expect::copy(c.initial(in, hv.view), to)));
      break;
    }
    case 1: {  // SBUF -> HBM, the whole output written, maybe transposed
      const Placed src =
          loaded_operand(c, Memory::SBUF, from, rows, free, reads(Memory::SBUF, from), mix);
      const int64_t total = rows * elements(free);
      const int64_t a = pick_bool(50) ? rows : 1;
      const std::vector<int64_t> shape = {a, total / a};
      const TensorRef out = c.hbm_output(to, shape);
      ViewSpec ov = ViewSpec::whole(shape);
      if (pick_bool(40)) {  // [total/a, a] view of the [a, total/a] tensor
        ov.perm = {1, 0};
      }
      c.b().dma_copy(c.at(out, ov), c.at(src.buf, src.view), queue);
      const Expected moved = expect::copy(c.initial(src.buf, src.view), to);
      Expected want{to, std::vector<std::optional<uint32_t>>(static_cast<size_t>(total))};
      const std::vector<int64_t> at = ov.offsets(shape);
      for (size_t k = 0; k < at.size(); ++k) want.bits[static_cast<size_t>(at[k])] = moved.bits[k];
      outputs.emplace_back(c.name_of(out), want);
      break;
    }
    case 2: {  // HBM -> HBM
      const PlacedView hv = pick_hbm_view(rows, free);
      const TensorRef in =
          c.hbm_input(from, hv.shape, fill_values(from, elements(hv.shape), mix, pick_seed()));
      const TensorRef out = c.hbm_output(to, {rows, elements(free)});
      c.b().dma_copy(c.at(out, ViewSpec::whole({rows, elements(free)})), c.at(in, hv.view), queue);
      outputs.emplace_back(c.name_of(out), expect::copy(c.initial(in, hv.view), to));
      break;
    }
    default: {  // within one tensor (HBM or SBUF): overlapping views
      const bool sbuf = pick_bool(50);
      const std::vector<int64_t> shape = {pick_size(1, sbuf ? 128 : 64), pick_size(1, 64)};
      const std::vector<uint32_t> bits = fill_values(from, elements(shape), mix, pick_seed());
      const ViewSpec whole = ViewSpec::whole(shape);
      TensorRef t;
      if (sbuf) {
        t = c.loaded(Memory::SBUF, from, shape, bits);
      } else {
        const TensorRef in = c.hbm_input(from, shape, bits);
        t = c.hbm_output(from, shape);
        c.b().dma_copy(c.at(t, whole), c.at(in, whole), queue);
      }
      const auto window = [&](int64_t r, int64_t n) {
        ViewSpec v = whole;
        v.dims[0] = DimSlice{pick_int(0, shape[0] - r), r, 1};
        v.dims[1] = DimSlice{pick_int(0, shape[1] - n), n, 1};
        return v;
      };
      const ViewSpec src = window(pick_int(1, shape[0]), pick_int(1, shape[1]));
      // The destination: any [r, total / r] window that fits, so overlapping reshaping copies
      // are drawn too (they once read what they had already written: InstrModelBug in
      // instruction_model_bugs_test.cpp).
      const int64_t total = src.rows() * src.free_elems();
      std::vector<int64_t> row_counts;
      for (int64_t r = 1; r <= shape[0]; ++r) {
        if (total % r == 0 && total / r <= shape[1]) row_counts.push_back(r);
      }
      const int64_t r =
          row_counts[static_cast<size_t>(pick_int(0, static_cast<int64_t>(row_counts.size()) - 1))];
      const ViewSpec dst = window(r, total / r);
      c.b().dma_copy(c.at(t, dst), c.at(t, src), static_cast<int>(pick_int(0, 15)));
      // Every element of the source is read before any is written.
      Expected want{from, {}};
      for (uint32_t b : bits) want.bits.emplace_back(b);
      const std::vector<int64_t> from_at = src.offsets(shape), to_at = dst.offsets(shape);
      for (size_t k = 0; k < to_at.size(); ++k) {
        want.bits[static_cast<size_t>(to_at[k])] = bits[static_cast<size_t>(from_at[k])];
      }
      outputs.emplace_back(sbuf ? c.store(t, whole) : c.name_of(t), want);
    }
  }
  check_case(c, outputs);
}

RC_GTEST_PROP(InstrTensorCopy, ConvertsBetweenAllDtypesWithRoundToNearestEven, ()) {
  const DType from = pick_dtype(kAllDTypesList), to = pick_dtype(kAllDTypesList);
  const Engine engine = pick_one<Engine>({Engine::Vector, Engine::GpSimd, Engine::Scalar});
  // tensor_copy on the scalar engine needs NeuronCore-v3 (trn2) or later.
  InstrCase c("tensor_copy_case", engine == Engine::Scalar
                                      ? (pick_bool(50) ? &hw_config_trn2() : &hw_config_trn3())
                                      : nullptr);
  const int psum = engine == Engine::GpSimd ? 0 : 25;
  const Memory sm = pick_memory(psum), dm = pick_memory(psum);
  const int64_t rows = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const Placed src =
      loaded_operand(c, sm, from, rows, free, reads(sm, from), pick_arithmetic_mix());
  const Placed dst = destination(c, src, sm, dm, to, rows, free);
  c.b().tensor_copy(c.at(dst.buf, dst.view), c.at(src.buf, src.view), engine);
  const Expected want = expect::copy(c.initial(src.buf, src.view), to);
  check_case(c, {stored(c, dst, want)});
}

// --- Tensor engine -------------------------------------------------------------------------------

std::vector<int64_t> split(int64_t n) {
  std::vector<int64_t> divisors;
  for (int64_t d = 2; d < n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  if (divisors.empty() || pick_bool(60)) return {n};
  const int64_t d = pick_one(divisors);
  return {d, n / d};
}

RC_GTEST_PROP(InstrMatmul, AccumulatesExactlyInTheDocumentedOrder, ()) {
  const std::vector<DType> low = {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn,
                                  DType::fp8_e5m2};
  const bool fp32_inputs = pick_bool(30);
  const DType st_t = fp32_inputs ? DType::fp32 : pick_dtype(low);
  const DType mv_t = fp32_inputs ? DType::fp32 : pick_dtype(low);
  const bool bf16_psum = pick_bool(10);  // trn3 accumulates into bf16 PSUM too
  const DType dst_t = bf16_psum ? DType::bf16 : DType::fp32;
  InstrCase c("matmul_case", bf16_psum ? &hw_config_trn3() : nullptr);
  const int64_t K = pick_size(1, 128), M = pick_size(1, 128), N = pick_size(1, 512);
  const ValueMix mix = pick_value_mix({ValueMix::small_ints, ValueMix::ordinary, ValueMix::hard});
  const Placed st = loaded_operand(c, Memory::SBUF, st_t, K, {M}, reads(Memory::SBUF, st_t), mix);
  const Placed mv =
      loaded_operand(c, Memory::SBUF, mv_t, K, split(N), reads(Memory::SBUF, mv_t), mix);
  const bool accumulate = pick_bool(40);
  const ViewOptions dst_o = writes(Memory::PSUM, dst_t);  // one bank
  const Placed dst = accumulate ? loaded_operand(c, Memory::PSUM, dst_t, M, {N}, dst_o, mix)
                                : target(c, Memory::PSUM, dst_t, M, {N});
  c.b().matmul(c.at(dst.buf, dst.view), c.at(st.buf, st.view), c.at(mv.buf, mv.view), accumulate);
  const Tile s = c.initial(st.buf, st.view), m = c.initial(mv.buf, mv.view);
  const std::optional<Tile> old =
      accumulate ? std::optional<Tile>(c.initial(dst.buf, dst.view)) : std::nullopt;
  const std::string out = store_destination(c, dst);
  const RunResult run =
      check_case(c, {{out, widened(c, dst, expect::matmul(s, m, dst_t, old ? &*old : nullptr))}});

  // Small integers: every partial sum is an integer below 2^24, so the result is the exact
  // integer product, computed here in int64.
  if (mix == ValueMix::small_ints && dst_t == DType::fp32) {
    auto integer = [](DType t, uint32_t bits) {
      return static_cast<int64_t>(exact::value(exact::to_f32(t, bits)));
    };
    Expected want{dst_t, {}};
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        int64_t sum = old ? integer(old->dtype, old->at(i, j)) : 0;
        for (int64_t k = 0; k < K; ++k)
          sum += integer(st_t, s.at(k, i)) * integer(mv_t, m.at(k, j));
        want.bits.push_back(exact::f32_bits(static_cast<float>(sum)));
      }
    }
    require(expected_difference(run, out, widened(c, dst, want)));
  }
}

RC_GTEST_PROP(InstrTranspose, TensorEngineIsAnIdentityMatmul, ()) {
  const DType src_t = pick_dtype(kFloatDTypes), dst_t = pick_dtype(kFloatDTypes);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(128, 2);
  const int64_t F = elements(free);
  InstrCase c("transpose_case");
  const Placed src =
      loaded_operand(c, Memory::SBUF, src_t, P, free, reads(Memory::SBUF, src_t),
                     pick_value_mix({ValueMix::hard, ValueMix::ordinary, ValueMix::raw_bits}));
  const Placed dst = target(c, Memory::PSUM, dst_t, F, {P});
  c.b().transpose(c.at(dst.buf, dst.view), c.at(src.buf, src.view), Engine::Tensor);
  const Expected want = expect::transpose_tensor(c.initial(src.buf, src.view), dst_t);
  check_case(c, {stored(c, dst, want)});
}

RC_GTEST_PROP(InstrTranspose, TensorEngineMovesBitsFromNeuronCoreV3, ()) {
  // Transpose mode (trn2, trn3): NaN and Inf stay where they are and -0 stays -0, unlike the
  // identity matmul above; raw bits include NaN payloads and infinities.
  const DType t = pick_dtype(kFloatDTypes);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(128, 2);
  const int64_t F = elements(free);
  const HwConfig* hw = *rc::gen::element(&hw_config_trn2(), &hw_config_trn3()).as("generation");
  InstrCase c("transpose_mode_case", hw);
  const Placed src = loaded_operand(c, Memory::SBUF, t, P, free, reads(Memory::SBUF, t),
                                    pick_value_mix({ValueMix::hard, ValueMix::raw_bits}));
  const Placed dst = target(c, Memory::PSUM, t, F, {P});
  c.b().transpose(c.at(dst.buf, dst.view), c.at(src.buf, src.view), Engine::Tensor);
  const Expected want = expect::transpose_vector(c.initial(src.buf, src.view));
  check_case(c, {stored(c, dst, want)});
}

RC_GTEST_PROP(InstrTranspose, VectorEngineMovesBitsIn32x32Blocks, ()) {
  const DType t = pick_dtype(kAllDTypesList);
  const int64_t P = pick_size(1, 32);
  const std::vector<int64_t> free = pick_free_shape(32, 2);
  const int64_t F = elements(free);
  const Memory sm = pick_memory(30), dm = pick_memory(30);
  InstrCase c("vector_transpose_case");
  const Placed src = loaded_operand(c, sm, t, P, free, reads(sm, t), ValueMix::raw_bits);
  const Placed dst = target(c, dm, t, F, {P});
  c.b().transpose(c.at(dst.buf, dst.view), c.at(src.buf, src.view), Engine::Vector);
  const Expected want = expect::transpose_vector(c.initial(src.buf, src.view));
  check_case(c, {stored(c, dst, want)});
}

// --- Scalar engine -------------------------------------------------------------------------------

RC_GTEST_PROP(InstrActivation, ScaleBiasFunctionAndAccumulatorAsDocumented, ()) {
  const std::vector<ActFunc> funcs = {
      ActFunc::copy,  ActFunc::exp,        ActFunc::log,  ActFunc::relu,   ActFunc::sigmoid,
      ActFunc::tanh,  ActFunc::gelu,       ActFunc::silu, ActFunc::square, ActFunc::sqrt,
      ActFunc::rsqrt, ActFunc::reciprocal, ActFunc::sin,  ActFunc::abs};
  InstrCase c("activation_case");
  expect::Registers regs = expect::fresh_registers();
  Outputs outputs;
  // Two instructions in a row show that the accumulator registers persist between them and
  // belong to physical partitions, not to view rows.
  const int64_t count = pick_int(1, 2);
  int64_t outside = 0;  // inputs outside their function's documented range
  for (int64_t i = 0; i < count; ++i) {
    const DType src_t = pick_bool(85) ? pick_dtype(kFloatDTypes) : pick_dtype(kIntDTypes);
    const DType dst_t = pick_dtype(kAllDTypesList);
    const Memory sm = pick_memory(25), dm = pick_memory(25);
    const int64_t P = pick_size(1, 128);
    const std::vector<int64_t> free = pick_free_shape(512, 3);
    const Placed src =
        loaded_operand(c, sm, src_t, P, free, reads(sm, src_t),
                       pick_value_mix({ValueMix::hard, ValueMix::ordinary, ValueMix::small_ints}));
    ActivationArgs args;
    args.func = pick_one(funcs);
    const ScalarPick scale = pick_scalar(c, P, false);
    args.scale = scale.ir;
    std::optional<ScalarPick> bias;
    if (pick_bool(60)) {
      bias = pick_scalar(c, P, false);
      args.bias = bias->ir;
    }
    args.reduce_cmd = pick_one<ReduceCmd>(
        {ReduceCmd::idle, ReduceCmd::reset, ReduceCmd::reduce, ReduceCmd::reset_reduce});
    std::optional<Placed> rr;
    DType rr_t = DType::fp32;
    if (pick_bool(50)) {
      rr_t = pick_dtype(kAllDTypesList);
      const Memory rm = pick_memory(25);
      rr = fresh_operand(c, rm, rr_t, P, {1}, writes(rm, rr_t));
      args.reduce_res = c.at(rr->buf, rr->view);
    }
    const Placed dst = destination(c, src, sm, dm, dst_t, P, free);
    const Tile x = c.initial(src.buf, src.view);
    c.b().activation(c.at(dst.buf, dst.view), c.at(src.buf, src.view), args);
    const int64_t partition = src.view.dims[0].start;  // buffers are placed at partition 0
    outputs.push_back(stored(c, dst,
                             expect::activation(x, dst_t, args.func, scale.model,
                                                bias ? std::optional(bias->model) : std::nullopt,
                                                args.reduce_cmd, partition, regs, &outside)));
    if (rr) {
      outputs.emplace_back(c.store(rr->buf, rr->view),
                           expect::registers_read_out(regs, partition, P, rr_t));
    }
  }
  // Strict runs write the default NaN for an input outside its function's documented range, the
  // expectations' value. The default run writes it too and reruns with other values
  // (model/interp/interpreter.h): with no such input it is the same run, without a note; with
  // some, every output stores them, so it stands with the note only when the destination's
  // conversion gives NaN and the rerun values the same bits, and otherwise is an undefined
  // result naming the function, with no outputs.
  const RunResult strict = check_case(c, outputs, /*strict=*/true);
  const RunResult lenient = run_case(c);
  RC_LOG() << "inputs outside the range: " << outside << "\n";
  if (outside == 0 || !lenient.error) {
    require(fast_reference_difference(lenient, strict));
    RC_ASSERT(lenient.undefined_activation.has_value() == (outside > 0));
  } else {
    RC_ASSERT(lenient.error->kind == CheckKind::undefined_result);
    RC_ASSERT(lenient.error->message.find("activation function") != std::string::npos);
    RC_ASSERT(lenient.error->message.find("outside its documented valid range") !=
              std::string::npos);
    RC_ASSERT(lenient.outputs.empty());
  }
}

// --- Vector / GpSimd engines ---------------------------------------------------------------------

RC_GTEST_PROP(InstrTensorReduce, ReducesSequentiallyFromTheIdentity, ()) {
  const bool bitwise = pick_bool(20);
  const DType src_t = pick_dtype(bitwise ? kIntDTypes : kAllDTypesList);
  const DType dst_t = pick_dtype(bitwise ? kIntDTypes : kAllDTypesList);
  const AluOp op =
      bitwise ? pick_op({AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor})
              : pick_op({AluOp::add, AluOp::subtract, AluOp::multiply, AluOp::max, AluOp::min});
  const bool negate = !bitwise && pick_bool(30);
  const Memory sm = pick_memory(25), dm = pick_memory(25);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const int axes = static_cast<int>(pick_int(1, static_cast<int64_t>(free.size())));
  const int64_t kept = elements({free.begin(), free.end() - axes});
  InstrCase c("tensor_reduce_case");
  const Placed src = loaded_operand(c, sm, src_t, P, free, reads(sm, src_t), pick_arithmetic_mix());
  const Placed dst = target(c, dm, dst_t, P, {kept});
  c.b().tensor_reduce(c.at(dst.buf, dst.view), c.at(src.buf, src.view), op, axes, negate);
  const Expected want =
      expect::tensor_reduce(c.initial(src.buf, src.view), dst_t, op, axes, negate);
  check_case(c, {stored(c, dst, want)});
}

RC_GTEST_PROP(InstrTensorScalar, TwoOperatorPipelineAsDocumented, ()) {
  const bool bitwise = pick_bool(20);
  const Engine engine =
      bitwise ? Engine::Vector : pick_one<Engine>({Engine::Vector, Engine::Scalar, Engine::GpSimd});
  const int psum = engine == Engine::GpSimd ? 0 : 25;
  const DType src_t = pick_dtype(bitwise ? kIntDTypes : kAllDTypesList);
  const DType dst_t = pick_dtype(bitwise ? kIntDTypes : kAllDTypesList);
  const std::vector<AluOp>& ops = bitwise ? kBitwiseOps : kFloatOps;
  const AluOp op0 = pick_op(ops);
  const std::optional<AluOp> op1 = pick_bool(50) ? std::optional(pick_op(ops)) : std::nullopt;
  const bool reverse0 = pick_bool(30), reverse1 = pick_bool(30);
  const Memory sm = pick_memory(psum), dm = pick_memory(psum);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  InstrCase c("tensor_scalar_case");
  const Placed src = loaded_operand(c, sm, src_t, P, free, reads(sm, src_t), pick_arithmetic_mix());
  const ScalarPick a0 = pick_scalar(c, P, bitwise);
  const ScalarPick a1 = op1 ? pick_scalar(c, P, bitwise) : ScalarPick{Imm{0.0f}, {0.0f, {}}};
  const Placed dst = destination(c, src, sm, dm, dst_t, P, free);
  const Tile x = c.initial(src.buf, src.view);
  c.b().tensor_scalar(c.at(dst.buf, dst.view), c.at(src.buf, src.view), op0, a0.ir, reverse0, op1,
                      a1.ir, reverse1, engine);
  const Expected want =
      expect::tensor_scalar(x, dst_t, op0, a0.model, reverse0, op1, a1.model, reverse1);
  check_case(c, {stored(c, dst, want)});
}

RC_GTEST_PROP(InstrTensorTensor, ElementwiseOperatorsAsDocumented, ()) {
  const bool bitwise = pick_bool(20);
  const Engine engine = pick_one<Engine>({Engine::Vector, Engine::GpSimd});
  const int psum = engine == Engine::GpSimd ? 0 : 25;
  const std::vector<DType>& dtypes = bitwise ? kIntDTypes : kAllDTypesList;
  const DType a_t = pick_dtype(dtypes), b_t = pick_dtype(dtypes), dst_t = pick_dtype(dtypes);
  const AluOp op = pick_op(bitwise ? kBitwiseOps : kFloatOps);
  const Memory am = pick_memory(psum), dm = pick_memory(psum);
  const Memory bm = am == Memory::PSUM ? Memory::SBUF : pick_memory(psum);  // not both in PSUM
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const ValueMix mix = pick_arithmetic_mix();
  InstrCase c("tensor_tensor_case");
  const Placed a = loaded_operand(c, am, a_t, P, free, reads(am, a_t), mix);
  const Placed b = loaded_operand(c, bm, b_t, P, free, reads(bm, b_t), mix);
  const bool alias_b = pick_bool(50);
  const Placed dst = destination(c, alias_b ? b : a, alias_b ? bm : am, dm, dst_t, P, free);
  const Tile x = c.initial(a.buf, a.view), y = c.initial(b.buf, b.view);
  const uint32_t at = c.next_instruction();
  c.b().tensor_tensor(c.at(dst.buf, dst.view), c.at(a.buf, a.view), c.at(b.buf, b.view), op,
                      engine);
  if (expect::tensor_tensor_undefined(x, y, dst_t, op, engine)) return check_undefined(c, at);
  check_case(c, {stored(c, dst, expect::tensor_tensor(x, y, dst_t, op, engine))});
}

// GpSimd computes tensor_tensor's arithmetic on int32/uint32 tiles in integers (ISA-NEW
// tensor_tensor: "native integer arithmetic ... exact results for all 32-bit integer values"),
// here on values far beyond fp32's 2^24, where an fp32 result would differ; wide_ints keep most
// sums and products within int32, raw bits and hard values mostly overflow, a result the
// documentation leaves undefined (check_undefined).
RC_GTEST_PROP(InstrTensorTensor, GpSimdInt32ArithmeticIsExact, ()) {
  const std::vector<DType> ints = {DType::int32, DType::uint32};
  const DType a_t = pick_dtype(ints), b_t = pick_dtype(ints), dst_t = pick_dtype(ints);
  const AluOp op = pick_op({AluOp::add, AluOp::subtract, AluOp::multiply, AluOp::max, AluOp::min,
                            AluOp::abs_max, AluOp::abs_min, AluOp::is_lt, AluOp::is_equal});
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const ValueMix mix = pick_one<ValueMix>(
      {ValueMix::raw_bits, ValueMix::hard, ValueMix::wide_ints, ValueMix::wide_ints});
  InstrCase c("tensor_tensor_int32_case");
  const Placed a = loaded_operand(c, Memory::SBUF, a_t, P, free, reads(Memory::SBUF, a_t), mix);
  const Placed b = loaded_operand(c, Memory::SBUF, b_t, P, free, reads(Memory::SBUF, b_t), mix);
  const Placed dst = destination(c, a, Memory::SBUF, Memory::SBUF, dst_t, P, free);
  const Tile x = c.initial(a.buf, a.view), y = c.initial(b.buf, b.view);
  const uint32_t at = c.next_instruction();
  c.b().tensor_tensor(c.at(dst.buf, dst.view), c.at(a.buf, a.view), c.at(b.buf, b.view), op,
                      Engine::GpSimd);
  if (expect::tensor_tensor_undefined(x, y, dst_t, op, Engine::GpSimd)) {
    return check_undefined(c, at);
  }
  check_case(c, {stored(c, dst, expect::tensor_tensor(x, y, dst_t, op, Engine::GpSimd))});
}

RC_GTEST_PROP(InstrTensorScalarReduce, ReducesTheFp32ResultsBeforeConversion, ()) {
  const DType src_t = pick_dtype(kAllDTypesList), dst_t = pick_dtype(kAllDTypesList);
  const DType rr_t = pick_dtype(kAllDTypesList);
  const AluOp op0 = pick_op(kFloatOps);
  const AluOp reduce_op = pick_op({AluOp::add, AluOp::multiply, AluOp::max, AluOp::min});
  const bool reverse0 = pick_bool(30);
  const Memory sm = pick_memory(25), dm = pick_memory(25), rm = pick_memory(25);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  InstrCase c("tensor_scalar_reduce_case");
  const Placed src = loaded_operand(c, sm, src_t, P, free, reads(sm, src_t), pick_arithmetic_mix());
  const ScalarPick a0 = pick_scalar(c, P, false);
  const Placed dst = destination(c, src, sm, dm, dst_t, P, free);
  const Placed rr = fresh_operand(c, rm, rr_t, P, {1}, writes(rm, rr_t));
  const Tile x = c.initial(src.buf, src.view);
  c.b().tensor_scalar_reduce(c.at(dst.buf, dst.view), c.at(src.buf, src.view), op0, a0.ir,
                             reduce_op, c.at(rr.buf, rr.view), reverse0);
  const expect::WithReduction want =
      expect::tensor_scalar_reduce(x, dst_t, op0, a0.model, reverse0, reduce_op, rr_t);
  check_case(c, {stored(c, dst, want.dst), {c.store(rr.buf, rr.view), want.reduce_res}});
}

RC_GTEST_PROP(InstrTensorCopyPredicated, CopiesWhereThePredicateSelects, ()) {
  const DType t = pick_dtype(kAllDTypesList);
  const DType pred_t = pick_dtype(kIntDTypes);
  const bool tile_src = pick_bool(70), reverse = pick_bool(30);
  const Memory dm = pick_memory(25), pm = pick_memory(25);
  const Memory sm = pm == Memory::PSUM ? Memory::SBUF : pick_memory(25);  // not both in PSUM
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const ValueMix mix = pick_arithmetic_mix();
  InstrCase c("copy_predicated_case");
  const Placed dst = loaded_operand(c, dm, t, P, free, writes(dm, t), mix);
  const Placed pred = loaded_operand(c, pm, pred_t, P, free, reads(pm, pred_t),
                                     pick_value_mix({ValueMix::predicates, ValueMix::raw_bits}));
  std::variant<float, Tile> src_model = 0.0f;
  Operand src_ir = Imm{0.0f};
  if (tile_src) {
    const Placed src = loaded_operand(c, sm, t, P, free, reads(sm, t), mix);
    src_ir = c.at(src.buf, src.view);
    src_model = c.initial(src.buf, src.view);
  } else {
    const float v = pick_immediate(ValueMix::hard);
    src_ir = Imm{v};
    src_model = v;
  }
  const Tile old = c.initial(dst.buf, dst.view), p = c.initial(pred.buf, pred.view);
  c.b().tensor_copy_predicated(c.at(dst.buf, dst.view), src_ir, c.at(pred.buf, pred.view), reverse);
  check_case(c, {stored(c, dst, expect::copy_predicated(old, src_model, p, reverse))});
}

RC_GTEST_PROP(InstrAffineSelect, SelectsByTheAffinePattern, ()) {
  const DType t = pick_dtype(kAllDTypesList), true_t = pick_dtype(kAllDTypesList);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const int64_t offset = pick_int(-300, 300), cm = pick_int(-8, 8);
  std::vector<int64_t> steps;
  for (size_t k = 0; k < free.size(); ++k) steps.push_back(pick_int(-8, 8));
  const CmpOp cmp =
      pick_one<CmpOp>({CmpOp::eq, CmpOp::ne, CmpOp::lt, CmpOp::le, CmpOp::gt, CmpOp::ge});
  const float on_false = pick_immediate(pick_value_mix({ValueMix::hard, ValueMix::ordinary}));
  InstrCase c("affine_select_case");
  const Placed on_true = loaded_operand(c, Memory::SBUF, true_t, P, free,
                                        reads(Memory::SBUF, true_t), pick_arithmetic_mix());
  const Placed dst = target(c, Memory::SBUF, t, P, free);
  c.b().affine_select(c.at(dst.buf, dst.view), c.at(on_true.buf, on_true.view), Expr(offset), cm,
                      steps, cmp, on_false);
  const Expected want =
      expect::affine_select(c.initial(on_true.buf, on_true.view), t, dst.view.free_shape(), offset,
                            cm, steps, cmp, on_false);
  check_case(c, {stored(c, dst, want)});
}

RC_GTEST_PROP(InstrIota, WritesTheAffinePatternConvertedFromInt32, ()) {
  const DType t = pick_dtype(kAllDTypesList);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  // Small patterns, or large ones that reach int32's edges (saturation into narrow integer types,
  // rounding to fp32 above 2^24).
  const bool large = pick_bool(30);
  const int64_t cm = large ? pick_int(-(1 << 20), 1 << 20) : pick_int(-8, 8);
  std::vector<int64_t> steps;
  int64_t reach = std::abs(cm) * (P - 1);
  for (int64_t f : free) {
    steps.push_back(large ? pick_int(-(1 << 16), 1 << 16) : pick_int(-8, 8));
    reach += std::abs(steps.back()) * (f - 1);
  }
  const int64_t room = INT32_MAX - reach;  // |value| must stay within int32
  const int64_t offset = large ? pick_int(-room, room) : pick_int(-300, 300);
  InstrCase c("iota_case");
  const Placed dst = target(c, Memory::SBUF, t, P, free);
  c.b().iota(c.at(dst.buf, dst.view), Expr(offset), cm, steps);
  check_case(c, {stored(c, dst, expect::iota(t, P, free, offset, cm, steps))});
}

RC_GTEST_PROP(InstrMemset, StoresTheImmediateConvertedToTheDtype, ()) {
  const DType t = pick_dtype(kAllDTypesList);
  const Engine engine = pick_one<Engine>({Engine::Vector, Engine::GpSimd});
  const Memory m = pick_memory(engine == Engine::GpSimd ? 0 : 30);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  const float value =
      pick_immediate(pick_value_mix({ValueMix::hard, ValueMix::ordinary, ValueMix::raw_bits}));
  InstrCase c("memset_case");
  const Placed dst = target(c, m, t, P, free);
  c.b().memset(c.at(dst.buf, dst.view), value, engine);
  check_case(c, {stored(c, dst, expect::memset(t, P * elements(free), value))});
}

RC_GTEST_PROP(InstrReciprocal, DividesOneByEachElementInFp32, ()) {
  const DType src_t = pick_dtype(kAllDTypesList), dst_t = pick_dtype(kAllDTypesList);
  const Engine engine = pick_one<Engine>({Engine::Vector, Engine::GpSimd});
  const int psum = engine == Engine::GpSimd ? 0 : 25;
  const Memory sm = pick_memory(psum), dm = pick_memory(psum);
  const int64_t P = pick_size(1, 128);
  const std::vector<int64_t> free = pick_free_shape(512, 3);
  InstrCase c("reciprocal_case");
  const Placed src = loaded_operand(c, sm, src_t, P, free, reads(sm, src_t), pick_arithmetic_mix());
  const Placed dst = destination(c, src, sm, dm, dst_t, P, free);
  const Tile x = c.initial(src.buf, src.view);
  c.b().reciprocal(c.at(dst.buf, dst.view), c.at(src.buf, src.view), engine);
  check_case(c, {stored(c, dst, expect::reciprocal(x, dst_t))});
}

}  // namespace
}  // namespace ncv::props::instr
