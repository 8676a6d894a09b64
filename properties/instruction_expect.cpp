#include "properties/instruction_expect.h"

#include <bit>
#include <cmath>
#include <stdexcept>

#include "properties/instruction_exact.h"

namespace ncv::props::instr::expect {

namespace {

using exact::f32_bits;
using Maybe = std::optional<uint32_t>;

constexpr uint32_t kPosZero = 0x00000000u;
constexpr uint32_t kNegZero = 0x80000000u;
constexpr uint32_t kOne = 0x3f800000u;
constexpr uint32_t kMinusOne = 0xbf800000u;
constexpr uint32_t kPosInf = 0x7f800000u;
constexpr uint32_t kNegInf = 0xff800000u;

uint32_t quiet(uint32_t nan) {
  return nan | 0x00400000u;
}

Expected sized(DType t, size_t n) {
  Expected e;
  e.dtype = t;
  e.bits.resize(n);
  return e;
}

Maybe encode(DType t, Maybe f32) {
  return f32 ? Maybe(exact::from_f32(t, *f32)) : std::nullopt;
}

// One fp32 ALU step; pow is left to the host's powf except for its NaN rule.
Maybe alu_f32(AluOp op, Maybe a, Maybe b) {
  if (!a || !b) return std::nullopt;
  if (exact::alu_is_exact(op)) return exact::alu(op, *a, *b);
  if (op == AluOp::pow && (exact::is_nan(*a) || exact::is_nan(*b))) {
    return exact::is_nan(*a) ? quiet(*a) : quiet(*b);
  }
  return std::nullopt;
}

// Documented valid input range of an activation function (ISA-NEW activation function table;
// model/semantics/internal.h act_range): outside it the documentation gives no result, and the
// expectations the default NaN, which strict runs write there.
bool in_range(ActFunc f, double x) {
  switch (f) {
    case ActFunc::log:
      return x >= 0x1p-64 && x <= 0x1p64;
    case ActFunc::sqrt:
      return x >= 0x1p-116 && x <= 0x1p118;
    case ActFunc::rsqrt:
      return x >= 0x1p-87 && x <= 0x1p97;
    case ActFunc::reciprocal:
      return std::fabs(x) >= 0x1p-42 && std::fabs(x) <= 0x1p42;
    case ActFunc::sin:
      return std::fabs(x) <= 0x1.921fb6p+1;  // fl(pi) as fp32
    default:
      return true;
  }
}

bool compare(CmpOp c, int64_t v) {
  switch (c) {
    case CmpOp::eq:
      return v == 0;
    case CmpOp::ne:
      return v != 0;
    case CmpOp::lt:
      return v < 0;
    case CmpOp::le:
      return v <= 0;
    case CmpOp::gt:
      return v > 0;
    case CmpOp::ge:
      return v >= 0;
  }
  return false;
}

// offset + r * channel_multiplier + sum_k steps[k] * i_k for flat free index f of `free`.
int64_t affine_value(const std::vector<int64_t>& free, int64_t offset, int64_t cm,
                     const std::vector<int64_t>& steps, int64_t r, int64_t f) {
  int64_t v = offset + r * cm;
  for (size_t d = free.size(); d-- > 0;) {
    v += steps[d] * (f % free[d]);
    f /= free[d];
  }
  return v;
}

Maybe reduce_identity(AluOp op) {
  switch (op) {
    case AluOp::multiply:
      return kOne;
    case AluOp::max:
      return kNegInf;
    case AluOp::min:
      return kPosInf;
    default:
      return kPosZero;
  }
}

}  // namespace

uint32_t ScalarOperand::f32(int64_t row) const {
  if (imm) return f32_bits(*imm);
  return exact::to_f32(column.dtype, column.at(row, 0));
}

int64_t ScalarOperand::integer(int64_t row) const {
  if (imm) return exact::int_of_f32(f32_bits(*imm));
  return exact::int_value(column.dtype, column.at(row, 0));
}

Registers fresh_registers() {
  return Registers(128, kPosZero);
}

std::optional<uint32_t> activation_function(ActFunc func, uint32_t x) {
  if (exact::is_nan(x)) return quiet(x);  // a NaN input comes out as itself, quieted
  const double v = exact::value(x);
  if (!in_range(func, v)) return exact::kDefaultNaN;
  switch (func) {
    case ActFunc::copy:
      return x;
    case ActFunc::relu:
      return v > 0 ? x : kPosZero;
    case ActFunc::abs:
      return x & 0x7fffffffu;
    case ActFunc::square:
      return exact::mul(x, x);
    case ActFunc::sqrt:
      return exact::sqrt(x);
    case ActFunc::rsqrt:
      return exact::div(kOne, exact::sqrt(x));
    case ActFunc::reciprocal:
      return exact::div(kOne, x);
    case ActFunc::gelu:
    case ActFunc::silu:
      // The limit of the formula (model/README.md "Edge choices").
      if (x == kNegInf) return kNegZero;
      return std::nullopt;
    default:
      return std::nullopt;  // exp, log, sigmoid, tanh, sin: host library functions
  }
}

Expected copy(const Tile& src, DType dst) {
  Expected e = sized(dst, src.bits.size());
  for (size_t i = 0; i < src.bits.size(); ++i)
    e.bits[i] = exact::convert(src.dtype, dst, src.bits[i]);
  return e;
}

Expected matmul(const Tile& stationary, const Tile& moving, DType dst,
                const Tile* accumulate_onto) {
  const int64_t K = stationary.rows, M = stationary.cols(), N = moving.cols();
  if (moving.rows != K) throw std::logic_error("expect::matmul: K mismatch");
  std::vector<uint32_t> st(stationary.bits.size()), mv(moving.bits.size());
  for (size_t i = 0; i < st.size(); ++i)
    st[i] = exact::to_f32(stationary.dtype, stationary.bits[i]);
  for (size_t i = 0; i < mv.size(); ++i) mv[i] = exact::to_f32(moving.dtype, moving.bits[i]);
  Expected e = sized(dst, static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      // The PE array's fp32 accumulation: k in order from +0, one rounding per step.
      uint32_t acc = kPosZero;
      for (int64_t k = 0; k < K; ++k) {
        acc =
            exact::fma(st[static_cast<size_t>(k * M + m)], mv[static_cast<size_t>(k * N + n)], acc);
      }
      if (exact::is_nan(acc)) acc = exact::kDefaultNaN;  // a NaN accumulator is stored canonical
      if (accumulate_onto) {
        acc = exact::add(exact::to_f32(accumulate_onto->dtype, accumulate_onto->at(m, n)), acc);
      }
      e.bits[static_cast<size_t>(m * N + n)] = exact::from_f32(dst, acc);
    }
  }
  return e;
}

Expected transpose_tensor(const Tile& src, DType dst) {
  // A matmul of src (stationary [P, F]) with the P x P identity (moving), as documented.
  const int64_t P = src.rows;
  Tile identity{src.dtype, P, {P}, std::vector<uint32_t>(static_cast<size_t>(P * P))};
  const uint32_t one = exact::from_f32(src.dtype, kOne);
  for (int64_t p = 0; p < P; ++p) identity.bits[static_cast<size_t>(p * P + p)] = one;
  return matmul(src, identity, dst, nullptr);
}

Expected transpose_vector(const Tile& src) {
  const int64_t P = src.rows, F = src.cols();
  Expected e = sized(src.dtype, src.bits.size());
  for (int64_t p = 0; p < P; ++p) {
    for (int64_t f = 0; f < F; ++f) e.bits[static_cast<size_t>(f * P + p)] = src.at(p, f);
  }
  return e;
}

Expected activation(const Tile& src, DType dst, ActFunc func, const ScalarOperand& scale,
                    const std::optional<ScalarOperand>& bias, ReduceCmd cmd,
                    int64_t first_partition, Registers& regs, int64_t* outside) {
  const bool reset = cmd == ReduceCmd::reset || cmd == ReduceCmd::reset_reduce;
  const bool accumulate = cmd == ReduceCmd::reduce || cmd == ReduceCmd::reset_reduce;
  const int64_t n = src.cols();
  Expected e = sized(dst, src.bits.size());
  for (int64_t r = 0; r < src.rows; ++r) {
    Maybe& reg = regs.at(static_cast<size_t>(first_partition + r));
    if (reset) reg = kPosZero;
    for (int64_t f = 0; f < n; ++f) {
      // func(x * scale + bias): two fp32 roundings, no bias term when there is no bias.
      const uint32_t x = exact::to_f32(src.dtype, src.at(r, f));
      uint32_t pre = exact::mul(x, scale.f32(r));
      if (bias) pre = exact::add(pre, bias->f32(r));
      if (outside && !exact::is_nan(pre) && !in_range(func, exact::value(pre))) ++*outside;
      const Maybe out = activation_function(func, pre);
      if (accumulate) reg = alu_f32(AluOp::add, reg, out);
      e.bits[static_cast<size_t>(r * n + f)] = encode(dst, out);
    }
  }
  return e;
}

Expected registers_read_out(const Registers& regs, int64_t first_partition, int64_t rows,
                            DType dst) {
  Expected e = sized(dst, static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    e.bits[static_cast<size_t>(r)] = encode(dst, regs.at(static_cast<size_t>(first_partition + r)));
  }
  return e;
}

Expected tensor_reduce(const Tile& src, DType dst, AluOp op, int axes, bool negate) {
  int64_t inner = 1;
  for (size_t d = src.free.size() - static_cast<size_t>(axes); d < src.free.size(); ++d) {
    inner *= src.free[d];
  }
  const int64_t kept = src.cols() / inner;
  Expected e = sized(dst, static_cast<size_t>(src.rows * kept));
  for (int64_t r = 0; r < src.rows; ++r) {
    for (int64_t k = 0; k < kept; ++k) {
      // Sequential, in row-major order of the reduced elements, from the operator's identity.
      Maybe out;
      if (is_bitwise(op)) {
        int64_t acc = op == AluOp::bitwise_and ? -1 : 0;
        for (int64_t j = 0; j < inner; ++j) {
          acc = exact::alu_int(op, acc, exact::int_value(src.dtype, src.at(r, k * inner + j)));
        }
        out = exact::from_int(dst, acc);
      } else {
        Maybe acc = reduce_identity(op);
        for (int64_t j = 0; j < inner; ++j) {
          acc = alu_f32(op, acc, exact::to_f32(src.dtype, src.at(r, k * inner + j)));
        }
        if (negate) acc = alu_f32(AluOp::multiply, acc, kMinusOne);
        out = encode(dst, acc);
      }
      e.bits[static_cast<size_t>(r * kept + k)] = out;
    }
  }
  return e;
}

Expected tensor_scalar(const Tile& src, DType dst, AluOp op0, const ScalarOperand& a0,
                       bool reverse0, std::optional<AluOp> op1, const ScalarOperand& a1,
                       bool reverse1) {
  const int64_t n = src.cols();
  Expected e = sized(dst, src.bits.size());
  for (int64_t r = 0; r < src.rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      const uint32_t bits = src.at(r, f);
      Maybe out;
      if (is_bitwise(op0)) {  // both ops are bitwise (a static rule): the integer domain
        const int64_t x = exact::int_value(src.dtype, bits);
        const int64_t s0 = a0.integer(r);
        int64_t v = reverse0 ? exact::alu_int(op0, s0, x) : exact::alu_int(op0, x, s0);
        if (op1) {
          const int64_t s1 = a1.integer(r);
          v = reverse1 ? exact::alu_int(*op1, s1, v) : exact::alu_int(*op1, v, s1);
        }
        out = exact::from_int(dst, v);
      } else {
        const Maybe x = exact::to_f32(src.dtype, bits);
        const Maybe s0 = a0.f32(r);
        Maybe v = reverse0 ? alu_f32(op0, s0, x) : alu_f32(op0, x, s0);
        if (op1) {
          const Maybe s1 = a1.f32(r);
          v = reverse1 ? alu_f32(*op1, s1, v) : alu_f32(*op1, v, s1);
        }
        out = encode(dst, v);
      }
      e.bits[static_cast<size_t>(r * n + f)] = out;
    }
  }
  return e;
}

Expected tensor_tensor(const Tile& a, const Tile& b, DType dst, AluOp op, Engine engine) {
  Expected e = sized(dst, a.bits.size());
  const bool native =
      engine == Engine::GpSimd && exact::gpsimd_native_int(op, a.dtype, b.dtype, dst);
  for (size_t i = 0; i < a.bits.size(); ++i) {
    if (native) {
      e.bits[i] = exact::from_int(dst, exact::native_int(op, exact::int_value(a.dtype, a.bits[i]),
                                                         exact::int_value(b.dtype, b.bits[i])));
    } else if (is_bitwise(op)) {
      e.bits[i] = exact::from_int(dst, exact::alu_int(op, exact::int_value(a.dtype, a.bits[i]),
                                                      exact::int_value(b.dtype, b.bits[i])));
    } else {
      e.bits[i] = encode(
          dst, alu_f32(op, exact::to_f32(a.dtype, a.bits[i]), exact::to_f32(b.dtype, b.bits[i])));
    }
  }
  return e;
}

bool tensor_tensor_undefined(const Tile& a, const Tile& b, DType dst, AluOp op, Engine engine) {
  if (engine != Engine::GpSimd || !exact::gpsimd_native_int(op, a.dtype, b.dtype, dst)) {
    return false;
  }
  const int64_t lo = dst == DType::int32 ? -(int64_t{1} << 31) : 0;
  const int64_t hi = dst == DType::int32 ? (int64_t{1} << 31) - 1 : (int64_t{1} << 32) - 1;
  for (size_t i = 0; i < a.bits.size(); ++i) {
    const int64_t v = exact::native_int(op, exact::int_value(a.dtype, a.bits[i]),
                                        exact::int_value(b.dtype, b.bits[i]));
    if (v < lo || v > hi) return true;
  }
  return false;
}

WithReduction tensor_scalar_reduce(const Tile& src, DType dst, AluOp op0, const ScalarOperand& a0,
                                   bool reverse0, AluOp reduce_op, DType reduce_dtype) {
  const int64_t n = src.cols();
  WithReduction w{sized(dst, src.bits.size()), sized(reduce_dtype, static_cast<size_t>(src.rows))};
  for (int64_t r = 0; r < src.rows; ++r) {
    Maybe acc = reduce_identity(reduce_op);
    for (int64_t f = 0; f < n; ++f) {
      const Maybe x = exact::to_f32(src.dtype, src.at(r, f));
      const Maybe s = a0.f32(r);
      const Maybe v = reverse0 ? alu_f32(op0, s, x) : alu_f32(op0, x, s);
      acc = alu_f32(reduce_op, acc, v);  // the fp32 results, before the dst conversion
      w.dst.bits[static_cast<size_t>(r * n + f)] = encode(dst, v);
    }
    w.reduce_res.bits[static_cast<size_t>(r)] = encode(reduce_dtype, acc);
  }
  return w;
}

Expected copy_predicated(const Tile& old_dst, const std::variant<float, Tile>& src,
                         const Tile& predicate, bool reverse) {
  Expected e = sized(old_dst.dtype, old_dst.bits.size());
  const Tile* tile = std::get_if<Tile>(&src);
  for (size_t i = 0; i < old_dst.bits.size(); ++i) {
    // Integer predicates select where nonzero (xor reverse).
    const bool selected = (predicate.bits[i] != 0) != reverse;
    if (!selected) {
      e.bits[i] = old_dst.bits[i];
    } else if (tile) {
      e.bits[i] = exact::convert(tile->dtype, old_dst.dtype, tile->bits[i]);
    } else {
      e.bits[i] = exact::from_f32(old_dst.dtype, f32_bits(std::get<float>(src)));
    }
  }
  return e;
}

Expected affine_select(const Tile& on_true, DType dst, const std::vector<int64_t>& dst_free,
                       int64_t offset, int64_t channel_multiplier,
                       const std::vector<int64_t>& steps, CmpOp cmp, float on_false) {
  const int64_t n = on_true.cols();
  Expected e = sized(dst, on_true.bits.size());
  const uint32_t false_bits = exact::from_f32(dst, f32_bits(on_false));
  for (int64_t r = 0; r < on_true.rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      const int64_t v = affine_value(dst_free, offset, channel_multiplier, steps, r, f);
      e.bits[static_cast<size_t>(r * n + f)] =
          compare(cmp, v) ? exact::convert(on_true.dtype, dst, on_true.at(r, f)) : false_bits;
    }
  }
  return e;
}

Expected iota(DType dst, int64_t rows, const std::vector<int64_t>& free, int64_t offset,
              int64_t channel_multiplier, const std::vector<int64_t>& steps) {
  int64_t n = 1;
  for (int64_t f : free) n *= f;
  Expected e = sized(dst, static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n; ++f) {
      e.bits[static_cast<size_t>(r * n + f)] =
          exact::from_int(dst, affine_value(free, offset, channel_multiplier, steps, r, f));
    }
  }
  return e;
}

Expected memset(DType dst, int64_t elements, float value) {
  Expected e = sized(dst, static_cast<size_t>(elements));
  for (auto& b : e.bits) b = exact::from_f32(dst, f32_bits(value));
  return e;
}

Expected reciprocal(const Tile& src, DType dst) {
  Expected e = sized(dst, src.bits.size());
  for (size_t i = 0; i < src.bits.size(); ++i) {
    e.bits[i] = exact::from_f32(dst, exact::div(kOne, exact::to_f32(src.dtype, src.bits[i])));
  }
  return e;
}

}  // namespace ncv::props::instr::expect
