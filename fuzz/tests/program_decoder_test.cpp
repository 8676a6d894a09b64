// The program decoder's capacity-boundary mode: without it no decoded program comes near a
// memory's capacity, and fuzz_program's capacity oracle would only ever see placements. And its
// choice of ALU operators: the unary ones reach valid programs.
#include "fuzz/support/program_decoder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <variant>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/numerics/dtype.h"
#include "solver/allocation.h"

namespace ncv::fuzz {
namespace {

// Structured-mode bytes whose flags byte has `set` and not `clear`; the rest is random.
std::vector<uint8_t> structured_bytes(std::mt19937_64& rng, uint8_t set, uint8_t clear) {
  std::vector<uint8_t> bytes(48);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  bytes[0] = 0;  // not kTextMode
  bytes[1] = static_cast<uint8_t>((bytes[1] | set) & ~clear);
  return bytes;
}

struct OnChipBytes {
  const Tensor* tensor;
  int64_t bytes;  // per partition, all copies
};

std::vector<OnChipBytes> on_chip_buffers(const DecodedCase& c) {
  Env env;
  for (const auto& [name, v] : c.params) env.set(name, v);
  std::vector<OnChipBytes> out;
  for (const Tensor& t : c.program.tensors) {
    if (t.on_chip()) out.push_back({&t, eval(t.bytes_per_partition(), env) * t.bufs});
  }
  return out;
}

int64_t capacity(const DecodedCase& c, Memory m) {
  const HwConfig& hw = c.hw ? *c.hw : hw_config_trn1();
  return m == Memory::PSUM ? hw.psum_bytes_per_partition : hw.sbuf_usable_bytes_per_partition();
}

constexpr uint8_t kBoundary = 0x40, kSkeleton = 0x20;

TEST(ProgramDecoder, BoundaryFlagSizesTheFirstBufferToWithinAFewElementsOfCapacity) {
  std::mt19937_64 rng(8);
  int decoded = 0, over = 0, fits = 0;
  for (int k = 0; k < 3000; ++k) {
    const auto bytes = structured_bytes(rng, kBoundary, 0x80 | kSkeleton);
    const auto c = decode_case(bytes.data(), bytes.size());
    if (!c) continue;
    ++decoded;
    const auto buffers = on_chip_buffers(*c);
    ASSERT_FALSE(buffers.empty());
    const Tensor& t = *buffers.front().tensor;
    const int64_t cap = capacity(*c, t.memory);
    const int64_t step = static_cast<int64_t>(dtype_size(t.dtype)) * t.bufs;
    // floor(cap / step) - delta elements with delta in [-2, 48] (program_decoder.cpp).
    EXPECT_GT(buffers.front().bytes, cap - 49 * step) << t.name;
    EXPECT_LE(buffers.front().bytes, cap + 2 * step) << t.name;
    const HwConfig& hw = c->hw ? *c->hw : hw_config_trn1();
    (solver::capacity_violation(c->program, hw, c->params) ? over : fits) += 1;
  }
  EXPECT_GT(decoded, 300);
  // The boundary is met from both sides.
  EXPECT_GT(over, decoded / 20);
  EXPECT_GT(fits, decoded / 20);
}

TEST(ProgramDecoder, WithoutTheBoundaryFlagBuffersStayFarBelowCapacity) {
  std::mt19937_64 rng(8);
  int decoded = 0;
  for (int k = 0; k < 3000; ++k) {
    const auto bytes = structured_bytes(rng, 0, kBoundary);
    const auto c = decode_case(bytes.data(), bytes.size());
    if (!c) continue;
    ++decoded;
    for (const OnChipBytes& b : on_chip_buffers(*c)) {
      EXPECT_LT(b.bytes, capacity(*c, b.tensor->memory) / 4) << b.tensor->name;
    }
  }
  EXPECT_GT(decoded, 300);
}

// tensor_scalar and tensor_scalar_reduce get every unary op0 (abs, square, relu, rsqrt,
// reciprocal) in programs the validator accepts, on each engine tensor_scalar may name; without
// it fuzz_program and fuzz_timing never ran them.
TEST(ProgramDecoder, UnaryOp0sReachValidPrograms) {
  std::mt19937_64 rng(45);
  std::set<AluOp> scalar_ops, reduce_ops;
  std::set<Engine> engines;
  for (int k = 0; k < 12000; ++k) {
    const auto bytes = structured_bytes(rng, 0, kBoundary);
    const auto c = decode_case(bytes.data(), bytes.size());
    if (!c) continue;
    for_each_stmt(c->program, [&](const std::vector<const Loop*>&, const Stmt& s) {
      const auto* ins = std::get_if<InstrStmt>(&s.node);
      if (!ins) return;
      if (const auto* t = std::get_if<TensorScalar>(&ins->ins); t && is_unary(t->op0)) {
        scalar_ops.insert(t->op0);
        if (t->engine) engines.insert(*t->engine);
      }
      if (const auto* t = std::get_if<TensorScalarReduce>(&ins->ins); t && is_unary(t->op0)) {
        reduce_ops.insert(t->op0);
      }
    });
  }
  const std::set<AluOp> unary = {AluOp::abs, AluOp::square, AluOp::relu, AluOp::rsqrt,
                                 AluOp::reciprocal};
  EXPECT_EQ(scalar_ops, unary);
  EXPECT_EQ(reduce_ops, unary);
  EXPECT_TRUE(engines.count(Engine::GpSimd));
  EXPECT_TRUE(engines.count(Engine::Vector));
}

}  // namespace
}  // namespace ncv::fuzz
