// The gathers and the stream shuffle through the interpreter: results on given indices, an index
// outside its source as an out_of_bounds failure of the run, the per-instance shape and partition
// rules of the pages (each provoked by a deliberately wrong program), the shuffle's 255 entry
// leaving its partition unwritten for the uninitialized-read check, and the validator's rules.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

bool has(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

// y[128, n * e] = local_gather(x[128, 64], idx[128, k]) with num_valid_indices `valid`.
Program local_gather_program(int64_t k, int64_t e, int64_t valid, int64_t dst_free,
                             int64_t parts = 128) {
  Builder b("local_gather");
  auto x = b.input("x", DType::fp32, {parts, 64});
  auto idx = b.input("idx", DType::uint16, {parts, k});
  auto y = b.output("y", DType::fp32, {parts, dst_free});
  auto t = b.sbuf("t", DType::fp32, {parts, 64});
  auto it = b.sbuf("it", DType::uint16, {parts, k});
  auto d = b.sbuf("d", DType::fp32, {parts, dst_free});
  b.dma_copy(t(), x());
  b.dma_copy(it(), idx());
  b.emit(LocalGather{d(), t(), it(), e, valid});
  b.dma_copy(y(), d());
  return b.finish();
}

TEST(InterpreterGather, LocalGatherGathersWithinEachCore) {
  const Program p = local_gather_program(2, 4, 20, 80);
  auto inputs = random_inputs(p, {}, 3);
  HostTensor& idx = inputs.at("idx");
  for (int64_t r = 0; r < 128; ++r) {
    for (int64_t c = 0; c < 2; ++c) idx.set(r * 2 + c, static_cast<float>((r * 7 + c * 13) % 61));
  }
  RunResult r = run_program(p, {}, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& x = inputs.at("x");
  const HostTensor& y = r.outputs.at("y");
  for (int64_t row = 0; row < 128; ++row) {
    const int64_t g = row / 16 * 16;
    for (int64_t j = 0; j < 20; ++j) {
      const auto at = static_cast<int64_t>(idx.get((g + j % 16) * 2 + j / 16));
      for (int64_t e = 0; e < 4; ++e) {
        ASSERT_EQ(y.bits(row * 80 + j * 4 + e), x.bits(row * 64 + at + e)) << row << " " << j;
      }
    }
  }
  // An index whose four elements run past the 64 of its row fails the run.
  idx.set(37 * 2, 61.0f);
  RunResult bad = run_program(p, {}, inputs);
  ASSERT_TRUE(bad.error);
  EXPECT_EQ(bad.error->kind, CheckKind::out_of_bounds);
  EXPECT_TRUE(has(bad.error->message, "index 'it'[37, 0] = 61")) << bad.error->message;
}

TEST(InterpreterGather, LocalGatherShapeRules) {
  // dst must hold n * E elements per partition (n = all 32 indices of a core here).
  RunResult r = interptest::run_random(local_gather_program(2, 1, 0, 31), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::shape_rule);
  EXPECT_TRUE(has(r.error->message, "the gather writes 32 indices x 1")) << r.error->message;
  // More valid indices than a core's index slice holds.
  r = interptest::run_random(local_gather_program(2, 1, 33, 33), {});
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(has(r.error->message, "33 indices per core")) << r.error->message;
  // 24 partitions: not whole cores.
  r = interptest::run_random(local_gather_program(2, 1, 0, 32, 24), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::partition_rule);
  EXPECT_TRUE(has(r.error->message, "multiple of 16")) << r.error->message;
}

// a [rows_in, 8] into b [rows_out, 8] by `mask`; b is read back whole when `read_all`.
Program shuffle_program(int64_t rows_in, int64_t rows_out, const std::vector<int64_t>& mask,
                        int64_t dst_start = 0) {
  Builder b("shuffle");
  auto x = b.input("x", DType::fp32, {rows_in, 8});
  auto y = b.output("y", DType::fp32, {rows_out, 8});
  auto a = b.sbuf("a", DType::fp32, {rows_in, 8});
  auto d = b.sbuf("d", DType::fp32, {128, 8});
  b.dma_copy(a(), x());
  b.emit(StreamShuffle{d({ds(dst_start, rows_out), all()}), a(), mask});
  b.dma_copy(y(), d({ds(dst_start, rows_out), all()}));
  return b.finish();
}

TEST(InterpreterGather, StreamShuffleRules) {
  std::vector<int64_t> rotate(32);
  for (int64_t i = 0; i < 32; ++i) rotate[i] = (i + 1) % 32;
  const Program p = shuffle_program(64, 64, rotate);
  auto inputs = random_inputs(p, {}, 9);
  RunResult r = run_program(p, {}, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  for (int64_t row = 0; row < 64; ++row) {
    const int64_t from = row / 32 * 32 + (row % 32 + 1) % 32;
    for (int64_t c = 0; c < 8; ++c) {
      ASSERT_EQ(r.outputs.at("y").bits(row * 8 + c), inputs.at("x").bits(from * 8 + c));
    }
  }
  // A 255 entry leaves its partition of a fresh tile unwritten: reading it back is an
  // uninitialized read.
  std::vector<int64_t> keep = rotate;
  keep[5] = kShuffleKeep;
  r = interptest::run_random(shuffle_program(32, 32, keep), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read) << r.error->message;
  // A mask entry past the source's partitions (a one-partition source, entry 1).
  std::vector<int64_t> broadcast(32, 0);
  EXPECT_FALSE(interptest::run_random(shuffle_program(1, 32, broadcast), {}).error);
  broadcast[7] = 1;
  r = interptest::run_random(shuffle_program(1, 32, broadcast), {});
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(has(r.error->message, "copies partition 1 of source")) << r.error->message;
  // 64 active partitions (a 64-partition source): the 32-partition dst may start at 0 or 64,
  // not at 32.
  EXPECT_FALSE(interptest::run_random(shuffle_program(64, 32, rotate, 64), {}).error);
  r = interptest::run_random(shuffle_program(64, 32, rotate, 32), {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::partition_rule);
  EXPECT_TRUE(has(r.error->message, "64 active partitions")) << r.error->message;
}

TEST(InterpreterGather, GatherFlattenedIndexOutsideTheRowFailsTheRun) {
  Builder b("gather_flattened");
  auto x = b.input("x", DType::fp32, {16, 4, 6});
  auto idx = b.input("idx", DType::uint32, {16, 5});
  auto y = b.output("y", DType::bf16, {16, 5});
  auto t = b.sbuf("t", DType::fp32, {16, 4, 6});
  auto it = b.sbuf("it", DType::uint32, {16, 5});
  auto d = b.sbuf("d", DType::bf16, {16, 5});
  b.dma_copy(t(), x());
  b.dma_copy(it(), idx());
  b.emit(GatherFlattened{d(), t(), it()});
  b.dma_copy(y(), d());
  const Program p = b.finish();
  auto inputs = random_inputs(p, {}, 4);
  HostTensor& ix = inputs.at("idx");
  for (int64_t k = 0; k < 80; ++k) ix.set(k, static_cast<float>((k * 5) % 24));
  RunResult r = run_program(p, {}, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  for (int64_t k = 0; k < 80; ++k) {
    const int64_t row = k / 5;
    EXPECT_EQ(r.outputs.at("y").get(k),
              quantize(DType::bf16, inputs.at("x").get(row * 24 + (k * 5) % 24)));
  }
  ix.set(9, 24.0f);
  r = run_program(p, {}, inputs);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::out_of_bounds);
  EXPECT_TRUE(has(r.error->message, "indices 'it'[1, 4] = 24")) << r.error->message;
}

// The validator's message for a one-instruction program ("" if it passed).
std::string build_error(const std::function<Instruction(Builder&)>& ins) {
  Builder b("rules");
  auto y = b.output("y", DType::fp32, {128, 16});
  auto a = b.sbuf("a", DType::fp32, {128, 16});
  b.memset(a(), 1.0f);
  try {
    b.emit(ins(b));
    b.dma_copy(y(), a());
    b.finish();
  } catch (const BuildError& e) {
    return e.message;
  }
  return "";
}

TEST(InterpreterGather, TheValidatorHoldsThePagesRules) {
  auto gather = [](DType index, DType dst, int64_t e, int64_t valid, bool psum) {
    return build_error([=](Builder& b) -> Instruction {
      auto s = psum ? b.psum("s", DType::fp32, {128, 16}) : b.sbuf("s", DType::fp32, {128, 16});
      auto i = b.sbuf("i", index, {128, 1});
      auto d = b.sbuf("d", dst, {128, 16});
      return LocalGather{d(), s(), i(), e, valid};
    });
  };
  EXPECT_EQ(gather(DType::uint16, DType::fp32, 1, 16, false), "");
  EXPECT_TRUE(has(gather(DType::uint32, DType::fp32, 1, 16, false), "must be uint16"));
  EXPECT_TRUE(has(gather(DType::uint16, DType::bf16, 1, 16, false), "no cast"));
  EXPECT_TRUE(has(gather(DType::uint16, DType::fp32, 3, 16, false), "1, 2, 4, 8, 16 or 32"));
  EXPECT_TRUE(has(gather(DType::uint16, DType::fp32, 1, 4097, false), "4096"));
  const std::string psum = gather(DType::uint16, DType::fp32, 1, 16, true);
  EXPECT_TRUE(has(psum, "source must be in sbuf")) << psum;
  auto shuffle = [](std::vector<int64_t> mask, DType dst) {
    return build_error([=](Builder& b) -> Instruction {
      auto s = b.psum("s", DType::fp32, {32, 16});
      auto d = b.sbuf("d", dst, {32, 16});
      return StreamShuffle{d(), s(), mask};
    });
  };
  EXPECT_EQ(shuffle(std::vector<int64_t>(32, kShuffleKeep), DType::fp32), "");
  EXPECT_TRUE(has(shuffle(std::vector<int64_t>(31, 0), DType::fp32), "takes 32"));
  EXPECT_TRUE(has(shuffle(std::vector<int64_t>(32, 32), DType::fp32), "neither a partition"));
  EXPECT_TRUE(has(shuffle(std::vector<int64_t>(32, 0), DType::bf16), "src's dtype"));
  EXPECT_TRUE(has(build_error([](Builder& b) -> Instruction {
                    auto s = b.sbuf("s", DType::fp32, {128, 16});
                    auto i = b.sbuf("i", DType::int32, {128, 4});
                    auto d = b.sbuf("d", DType::fp32, {128, 4});
                    return GatherFlattened{d(), s(), i()};
                  }),
                  "must be uint32"));
}

}  // namespace
}  // namespace ncv
