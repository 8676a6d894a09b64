#include "model/ir/instruction.h"

#include <array>

namespace ncv {
inline namespace ir {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

template <typename E, size_t N>
std::optional<E> parse_name(std::string_view s, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

constexpr std::array<std::string_view, 25> kAluNames = {
    "add",     "subtract",    "multiply",   "divide",      "max",        "min",         "pow",
    "abs_max", "abs_min",     "is_equal",   "not_equal",   "is_gt",      "is_ge",       "is_lt",
    "is_le",   "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right", "abs",
    "square",  "relu",        "rsqrt",      "reciprocal"};
constexpr std::array<std::string_view, 14> kActNames = {
    "copy", "exp",    "log",  "relu",  "sigmoid",    "tanh", "gelu",
    "silu", "square", "sqrt", "rsqrt", "reciprocal", "sin",  "abs"};
constexpr std::array<std::string_view, 5> kReduceCmdNames = {"idle", "reset", "reduce",
                                                             "reset_reduce", "load_reduce"};
constexpr std::array<std::string_view, 6> kCmpNames = {"eq", "ne", "lt", "le", "gt", "ge"};

void push_operand(const Operand& o, std::vector<const Access*>& out) {
  if (auto* a = std::get_if<Access>(&o)) out.push_back(a);
}

}  // namespace

std::string_view alu_op_name(AluOp op) {
  return kAluNames.at(static_cast<size_t>(op));
}
std::string_view act_func_name(ActFunc f) {
  return kActNames.at(static_cast<size_t>(f));
}
std::string_view reduce_cmd_name(ReduceCmd c) {
  return kReduceCmdNames.at(static_cast<size_t>(c));
}
std::string_view cmp_op_name(CmpOp c) {
  return kCmpNames.at(static_cast<size_t>(c));
}
std::optional<AluOp> parse_alu_op(std::string_view s) {
  return parse_name<AluOp>(s, kAluNames);
}
std::optional<ActFunc> parse_act_func(std::string_view s) {
  return parse_name<ActFunc>(s, kActNames);
}
std::optional<ReduceCmd> parse_reduce_cmd(std::string_view s) {
  return parse_name<ReduceCmd>(s, kReduceCmdNames);
}
std::optional<CmpOp> parse_cmp_op(std::string_view s) {
  return parse_name<CmpOp>(s, kCmpNames);
}

bool is_bitwise(AluOp op) {
  return op >= AluOp::bitwise_and && op <= AluOp::shift_right;
}
bool is_unary(AluOp op) {
  return op >= AluOp::abs;
}
bool is_comparison(AluOp op) {
  return op >= AluOp::is_equal && op <= AluOp::is_le;
}

std::string_view op_name(const Instruction& ins) {
  // clang-format off
  static constexpr std::array<std::string_view, 32> kNames = {
      "dma_copy",      "matmul",
      "transpose",     "activation",
      "tensor_reduce", "tensor_scalar",
      "tensor_tensor", "tensor_scalar_reduce",
      "tensor_copy",   "tensor_copy_predicated",
      "affine_select", "iota",
      "memset",        "reciprocal",
      "max8",          "nc_find_index8",
      "nc_match_replace8", "rand",
      "dropout",
      "tensor_tensor_scan", "tensor_scalar_cumulative",
      "bn_stats", "bn_aggr",
      "local_gather", "nc_stream_shuffle", "gather_flattened",
      "tensor_partition_reduce", "select_reduce",
      "sequence_bounds", "range_select",
      "matmul_mx", "quantize_mx"};
  // clang-format on
  static_assert(kNames.size() == std::variant_size_v<Instruction>,
                "every instruction needs a name");
  return kNames.at(ins.index());
}

EngineChoice engine_of(const Instruction& ins) {
  return std::visit(
      Overloaded{
          [](const DmaCopy&) -> EngineChoice { return Engine::Dma; },
          [](const Matmul&) -> EngineChoice { return Engine::Tensor; },
          [](const Transpose& t) -> EngineChoice { return t.engine; },
          [](const Activation&) -> EngineChoice { return Engine::Scalar; },
          [](const TensorReduce&) -> EngineChoice { return Engine::Vector; },
          [](const TensorScalar& t) -> EngineChoice { return t.engine; },
          [](const TensorTensor& t) -> EngineChoice { return t.engine; },
          [](const TensorScalarReduce&) -> EngineChoice { return Engine::Vector; },
          [](const TensorCopy& t) -> EngineChoice { return t.engine; },
          [](const TensorCopyPredicated&) -> EngineChoice { return Engine::Vector; },
          [](const AffineSelect&) -> EngineChoice { return Engine::GpSimd; },
          [](const Iota&) -> EngineChoice { return Engine::GpSimd; },
          [](const Memset& m) -> EngineChoice { return m.engine; },
          [](const Reciprocal& r) -> EngineChoice { return r.engine; },
          // ISA-OLD: max8, nc_find_index8, nc_match_replace8 and dropout run on the Vector
          // engine; random draws too (ISA-NEW rng: Vector on NeuronCore-v2).
          [](const Max8&) -> EngineChoice { return Engine::Vector; },
          [](const FindIndex8&) -> EngineChoice { return Engine::Vector; },
          [](const MatchReplace8&) -> EngineChoice { return Engine::Vector; },
          [](const Rand&) -> EngineChoice { return Engine::Vector; },
          [](const Dropout&) -> EngineChoice { return Engine::Vector; },
          [](const TensorTensorScan&) -> EngineChoice { return Engine::Vector; },
          [](const TensorScalarCumulative&) -> EngineChoice { return Engine::Vector; },
          [](const BnStats&) -> EngineChoice { return Engine::Vector; },
          [](const BnAggr&) -> EngineChoice { return Engine::Vector; },
          // The pages: partition reduce and sequence bounds on GpSimd, the selects on Vector.
          [](const TensorPartitionReduce&) -> EngineChoice { return Engine::GpSimd; },
          [](const SelectReduce&) -> EngineChoice { return Engine::Vector; },
          [](const SequenceBounds&) -> EngineChoice { return Engine::GpSimd; },
          [](const RangeSelect&) -> EngineChoice { return Engine::Vector; },
          // The ISA docstrings: nc_matmul_mx on the Tensor engine, quantize_mx on Vector.
          [](const MatmulMx&) -> EngineChoice { return Engine::Tensor; },
          [](const QuantizeMx&) -> EngineChoice { return Engine::Vector; },
          [](const LocalGather&) -> EngineChoice { return Engine::GpSimd; },
          [](const StreamShuffle&) -> EngineChoice { return Engine::Vector; },
          [](const GatherFlattened&) -> EngineChoice { return Engine::GpSimd; }},
      ins);
}

std::vector<const Access*> written_accesses(const Instruction& ins) {
  std::vector<const Access*> out;
  std::visit(
      Overloaded{[&](const Activation& a) {
                   out.push_back(&a.dst);
                   if (a.reduce_res) out.push_back(&*a.reduce_res);
                 },
                 [&](const TensorScalarReduce& t) {
                   out.push_back(&t.dst);
                   out.push_back(&t.reduce_res);
                 },
                 [&](const MatchReplace8& m) {
                   out.push_back(&m.dst);
                   if (m.dst_idx) out.push_back(&*m.dst_idx);
                 },
                 [&](const LocalGather& g) { out.push_back(&g.dst); },
                 [&](const StreamShuffle& g) { out.push_back(&g.dst); },
                 [&](const GatherFlattened& g) { out.push_back(&g.dst); },
                 [&](const SelectReduce& i) {
                   out.push_back(&i.dst);
                   if (i.reduce_res) out.push_back(&*i.reduce_res);
                 },
                 [&](const RangeSelect& i) {
                   out.push_back(&i.dst);
                   if (i.reduce_res) out.push_back(&*i.reduce_res);
                 },
                 [&](const QuantizeMx& i) {
                   out.push_back(&i.dst);
                   out.push_back(&i.dst_scale);
                 },
                 [&](const auto& i) {
                   using T = std::decay_t<decltype(i)>;
                   if constexpr (std::is_same_v<T, DmaCopy> || std::is_same_v<T, Matmul> ||
                                 std::is_same_v<T, Transpose> || std::is_same_v<T, TensorReduce> ||
                                 std::is_same_v<T, TensorScalar> ||
                                 std::is_same_v<T, TensorTensor> || std::is_same_v<T, TensorCopy> ||
                                 std::is_same_v<T, TensorCopyPredicated> ||
                                 std::is_same_v<T, AffineSelect> || std::is_same_v<T, Iota> ||
                                 std::is_same_v<T, Memset> || std::is_same_v<T, Reciprocal> ||
                                 std::is_same_v<T, Max8> || std::is_same_v<T, FindIndex8> ||
                                 std::is_same_v<T, Rand> || std::is_same_v<T, Dropout> ||
                                 std::is_same_v<T, TensorTensorScan> ||
                                 std::is_same_v<T, TensorScalarCumulative> ||
                                 std::is_same_v<T, BnStats> || std::is_same_v<T, BnAggr> ||
                                 std::is_same_v<T, TensorPartitionReduce> ||
                                 std::is_same_v<T, SequenceBounds> || std::is_same_v<T, MatmulMx>) {
                     out.push_back(&i.dst);
                   } else {
                     static_assert(kDependentFalse<T>, "what does the new instruction write?");
                   }
                 }},
      ins);
  return out;
}

std::vector<const Access*> read_accesses(const Instruction& ins) {
  std::vector<const Access*> out;
  std::visit(Overloaded{[&](const DmaCopy& i) {
                          out.push_back(&i.src);
                          if (i.dst_rmw) out.push_back(&i.dst);  // read-modify-write
                        },
                        [&](const Matmul& i) {
                          out.push_back(&i.stationary);
                          out.push_back(&i.moving);
                          if (i.accumulate) out.push_back(&i.dst);
                        },
                        [&](const Transpose& i) { out.push_back(&i.src); },
                        [&](const Activation& i) {
                          out.push_back(&i.src);
                          push_operand(i.scale, out);
                          if (i.bias) push_operand(*i.bias, out);
                        },
                        [&](const TensorReduce& i) { out.push_back(&i.src); },
                        [&](const TensorScalar& i) {
                          out.push_back(&i.src);
                          push_operand(i.operand0, out);
                          if (i.op1) push_operand(i.operand1, out);
                        },
                        [&](const TensorTensor& i) {
                          out.push_back(&i.src0);
                          out.push_back(&i.src1);
                        },
                        [&](const TensorScalarReduce& i) {
                          out.push_back(&i.src);
                          push_operand(i.operand0, out);
                        },
                        [&](const TensorCopy& i) { out.push_back(&i.src); },
                        [&](const TensorCopyPredicated& i) {
                          push_operand(i.src, out);
                          out.push_back(&i.predicate);
                          out.push_back(&i.dst);  // unselected elements keep dst's old value
                        },
                        [&](const AffineSelect& i) { out.push_back(&i.on_true); },
                        [&](const Iota&) {},
                        [&](const Memset&) {},
                        [&](const Reciprocal& i) { out.push_back(&i.src); },
                        [&](const Max8& i) { out.push_back(&i.src); },
                        [&](const FindIndex8& i) {
                          out.push_back(&i.data);
                          out.push_back(&i.vals);
                        },
                        [&](const MatchReplace8& i) {
                          out.push_back(&i.data);
                          out.push_back(&i.vals);
                        },
                        [&](const Rand&) {},
                        [&](const Dropout& i) {
                          out.push_back(&i.data);
                          push_operand(i.prob, out);
                        },
                        [&](const TensorTensorScan& i) {
                          out.push_back(&i.src0);
                          out.push_back(&i.src1);
                          push_operand(i.initial, out);
                        },
                        [&](const TensorScalarCumulative& i) {
                          out.push_back(&i.src);
                          push_operand(i.imm0, out);
                          if (i.imm1) push_operand(*i.imm1, out);
                        },
                        [&](const BnStats& i) { out.push_back(&i.src); },
                        [&](const BnAggr& i) { out.push_back(&i.src); },
                        [&](const LocalGather& i) {
                          out.push_back(&i.src);
                          out.push_back(&i.index);
                        },
                        [&](const StreamShuffle& i) { out.push_back(&i.src); },
                        [&](const GatherFlattened& i) {
                          out.push_back(&i.data);
                          out.push_back(&i.indices);
                        },
                        [&](const TensorPartitionReduce& i) { out.push_back(&i.src); },
                        [&](const SelectReduce& i) {
                          out.push_back(&i.predicate);
                          out.push_back(&i.on_true);
                          push_operand(i.on_false, out);
                        },
                        [&](const SequenceBounds& i) { out.push_back(&i.src); },
                        [&](const RangeSelect& i) {
                          out.push_back(&i.on_true);
                          out.push_back(&i.bound0);
                          out.push_back(&i.bound1);
                        },
                        [&](const MatmulMx& i) {
                          out.push_back(&i.stationary);
                          out.push_back(&i.moving);
                          out.push_back(&i.stationary_scale);
                          out.push_back(&i.moving_scale);
                          if (i.accumulate) out.push_back(&i.dst);
                        },
                        [&](const QuantizeMx& i) { out.push_back(&i.src); }},
             ins);
  return out;
}

bool draws_random_values(const Instruction& ins) {
  return std::holds_alternative<Rand>(ins) || std::holds_alternative<Dropout>(ins);
}

}  // namespace ir
}  // namespace ncv
