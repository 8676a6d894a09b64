// dma_copy's two modes from ISA-OLD's dma_copy page, through the interpreter: oob_skip (NKI's
// oob_mode.skip: a row of an indirect access whose index leaves the tensor is not transferred)
// and dst_rmw (dst_rmw_op=np.add: the destination accumulates the source in fp32, rounded to
// its dtype). Each has a deliberately broken twin that must fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

RunResult interptest_run(const Program& p) {
  return run_program(p, {}, random_inputs(p, {}, 1));
}

void set_table(HostTensor& t, const std::vector<int32_t>& rows) {
  for (size_t r = 0; r < rows.size(); ++r) {
    store_bits(DType::int32, t.bytes.data() + 4 * r, static_cast<uint32_t>(rows[r]));
  }
}

// g[4, 16] = -1, then row r of g = cache[table[r]] (8 rows); y = g. `skip`: oob_skip, the
// declared range the whole int32 range; otherwise oob_mode.error with the rows' range [0, 7].
// `fill`: whether g is set to -1 first (a skipped row then keeps it).
Program gather(bool skip, bool fill = true) {
  Builder b("gather_skip");
  auto cache = b.input("cache", DType::fp32, {8, 16});
  auto table = b.input("table", DType::int32, {4, 1});
  auto y = b.output("y", DType::fp32, {4, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto g = b.sbuf("g", DType::fp32, {4, 16});
  b.dma_copy(ts(), table());
  if (fill) b.memset(g(), -1.0f);
  DmaCopy d{g(), indirect(cache({ds(0, 4, 0), all()}), 0, ts(), skip ? kInt32Min : 0,
                          skip ? kInt32Max : 7)};
  d.oob_skip = skip;
  b.emit(d);
  b.dma_copy(y(), g());
  return b.finish();
}

TEST(DmaModes, OobSkipGatherTransfersOnlyTheRowsInsideTheTensor) {
  const Program p = gather(true);
  auto in = random_inputs(p, {}, 3);
  set_table(in.at("table"), {2, 8, -1, 7});  // rows 1 and 2 leave the 8-row cache
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& y = r.outputs.at("y");
  const HostTensor& cache = in.at("cache");
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(y.bits(0 * 16 + c), cache.bits(2 * 16 + c));
    EXPECT_EQ(y.get(1 * 16 + c), -1.0f);
    EXPECT_EQ(y.get(2 * 16 + c), -1.0f);
    EXPECT_EQ(y.bits(3 * 16 + c), cache.bits(7 * 16 + c));
  }
}

TEST(DmaModes, WithoutOobSkipTheSameIndexIsOutOfBounds) {
  const Program p = gather(false);
  auto in = random_inputs(p, {}, 3);
  set_table(in.at("table"), {2, 7, 0, 7});
  ASSERT_FALSE(run_program(p, {}, in).error);
  // Row 1 names row 8 of an 8-row tensor: inside the declared range [0, 7] only if declared
  // wider; here it is outside it, which is the error oob_mode.error gives.
  const Program wide = [] {
    Builder b("gather_error");
    auto cache = b.input("cache", DType::fp32, {8, 16});
    auto table = b.input("table", DType::int32, {4, 1});
    auto y = b.output("y", DType::fp32, {4, 16});
    auto ts = b.sbuf("ts", DType::int32, {4, 1});
    auto g = b.sbuf("g", DType::fp32, {4, 16});
    b.dma_copy(ts(), table());
    b.dma_copy(g(), indirect(cache({ds(0, 4, 0), all()}), 0, ts(), kInt32Min, kInt32Max));
    b.dma_copy(y(), g());
    return b.finish();
  }();
  auto bad = random_inputs(wide, {}, 3);
  set_table(bad.at("table"), {2, 8, 0, 7});
  RunResult r = run_program(wide, {}, bad);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::out_of_bounds);
  EXPECT_NE(r.error->message.find("indirect offset 8 at row 1"), std::string::npos)
      << r.error->message;
  // The row's first element in the flattened tensor, for the simulator's NumPy wording.
  EXPECT_NE(r.error->message.find("flat element 128 of 128"), std::string::npos)
      << r.error->message;
}

// A skipped row is not written: reading it later is a read of memory nothing wrote.
TEST(DmaModes, ASkippedRowLeavesItsDestinationUnwritten) {
  const Program p = gather(true, /*fill=*/false);
  auto in = random_inputs(p, {}, 3);
  set_table(in.at("table"), {0, 1, 2, 3});
  ASSERT_FALSE(run_program(p, {}, in).error);
  set_table(in.at("table"), {0, 1, 100, 3});
  RunResult r = run_program(p, {}, in);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read) << r.error->message;
  EXPECT_NE(r.error->message.find("partition 2"), std::string::npos) << r.error->message;
}

// Scatter: y = -1 everywhere, then row table[r] of y = x[r] for the rows inside y.
Program scatter(bool skip) {
  Builder b("scatter_skip");
  auto x = b.input("x", DType::fp32, {4, 16});
  auto table = b.input("table", DType::int32, {4, 1});
  auto y = b.output("y", DType::fp32, {6, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto xs = b.sbuf("xs", DType::fp32, {4, 16});
  auto fill = b.sbuf("fill", DType::fp32, {6, 16});
  b.dma_copy(ts(), table());
  b.dma_copy(xs(), x());
  b.memset(fill(), -1.0f);
  b.dma_copy(y(), fill());
  DmaCopy d{indirect(y({ds(0, 4, 0), all()}), 0, ts(), kInt32Min, kInt32Max), xs()};
  d.oob_skip = skip;
  b.emit(d);
  return b.finish();
}

TEST(DmaModes, OobSkipScatterWritesOnlyTheRowsInsideTheTensor) {
  const Program p = scatter(true);
  auto in = random_inputs(p, {}, 4);
  set_table(in.at("table"), {5, -3, 0, 6});
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& y = r.outputs.at("y");
  const HostTensor& x = in.at("x");
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(y.bits(5 * 16 + c), x.bits(0 * 16 + c));
    EXPECT_EQ(y.bits(0 * 16 + c), x.bits(2 * 16 + c));
    for (int row : {1, 2, 3, 4}) EXPECT_EQ(y.get(row * 16 + c), -1.0f) << row;
  }
  // The same scatter without oob_skip stops at the first row outside y.
  RunResult strict = run_program(scatter(false), {}, in);
  ASSERT_TRUE(strict.error);
  EXPECT_EQ(strict.error->kind, CheckKind::out_of_bounds);
  EXPECT_NE(strict.error->message.find("indirect offset -3 at row 1"), std::string::npos)
      << strict.error->message;
}

// y[6, 16] (bf16) = base, then y[table[r]] = bf16(fp32(y[table[r]]) + x[r]) row by row.
Program accumulate(int64_t src_rows) {
  Builder b("scatter_add");
  auto base = b.input("base", DType::bf16, {6, 16});
  auto x = b.input("x", DType::fp32, {src_rows, 64 / src_rows});
  auto table = b.input("table", DType::int32, {4, 1}, ValueRange{0, 5});
  auto y = b.output("y", DType::bf16, {6, 16});
  auto ts = b.sbuf("ts", DType::int32, {4, 1});
  auto xs = b.sbuf("xs", DType::fp32, {src_rows, 64 / src_rows});
  auto bs = b.sbuf("bs", DType::bf16, {6, 16});
  b.dma_copy(ts(), table());
  b.dma_copy(xs(), x());
  b.dma_copy(bs(), base());
  b.dma_copy(y(), bs());
  DmaCopy d{indirect(y({ds(0, 4, 0), all()}), 0, ts(), 0, 5), xs()};
  d.dst_rmw = AluOp::add;
  b.emit(d);
  return b.finish();
}

TEST(DmaModes, DstRmwAddsInFp32AndRoundsToTheDestinationRowByRow) {
  const Program p = accumulate(4);
  auto in = random_inputs(p, {}, 5);
  set_table(in.at("table"), {1, 4, 1, 0});  // row 1 of y receives rows 0 and 2 of x
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& y = r.outputs.at("y");
  const HostTensor& base = in.at("base");
  const HostTensor& x = in.at("x");
  auto bf16 = [](float f) {
    return decode_to_float(DType::bf16, encode_from_float(DType::bf16, f));
  };
  for (int c = 0; c < 16; ++c) {
    const volatile float first = bf16(base.get(1 * 16 + c) + x.get(0 * 16 + c));
    EXPECT_EQ(y.get(1 * 16 + c), bf16(first + x.get(2 * 16 + c))) << c;
    EXPECT_EQ(y.get(4 * 16 + c), bf16(base.get(4 * 16 + c) + x.get(1 * 16 + c))) << c;
    EXPECT_EQ(y.get(0 * 16 + c), bf16(base.get(0 * 16 + c) + x.get(3 * 16 + c))) << c;
    for (int row : {2, 3, 5}) EXPECT_EQ(y.bits(row * 16 + c), base.bits(row * 16 + c)) << row;
  }
}

// Rows paired: a [2, 32] source does not accumulate row by row into 4 rows of 16.
TEST(DmaModes, DstRmwWithUnpairedRowsIsAShapeError) {
  const Program p = accumulate(2);
  auto in = random_inputs(p, {}, 5);
  set_table(in.at("table"), {0, 1, 2, 3});
  RunResult r = run_program(p, {}, in);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::shape_rule);
  EXPECT_NE(r.error->message.find("pairs row r of the source"), std::string::npos)
      << r.error->message;
}

TEST(DmaModes, TheValidatorAcceptsOnlyTheDocumentedCombinations) {
  const std::string head =
      "kernel k\ninput a : hbm fp32 [8, 16]\ninput t : hbm int32 [4, 1]\n"
      "output o : hbm fp32 [4, 16]\nbuffer ts : sbuf int32 [4, 1]\n"
      "buffer g : sbuf fp32 [4, 16]\ndma_copy ts[:, :], t[:, :]\nmemset g[:, :], value=0\n";
  const std::string gather_row = "dma_copy g[:, :], a[0:+4:0, :].indirect(0, ts[:, :], 0, 7)";
  const std::string tail = "\ndma_copy o[:, :], g[:, :]\n";
  auto parse = [&](const std::string& mode) {
    return parse_program(head + gather_row + mode + tail, "k.nkir");
  };
  // Accepted (the parser validates), and printed back as written.
  for (const char* mode : {", oob_skip=true", ", dst_rmw=add"}) {
    const Program p = parse(mode);
    EXPECT_NO_THROW(validate_program(p)) << mode;
    EXPECT_NE(print_program(p).find(mode), std::string::npos) << mode << "\n" << print_program(p);
  }
  // Refused: an op other than add, skip together with rmw, skip without an indirect operand.
  auto refused = [&](const std::string& text, const std::string& why) {
    try {
      parse_program(text, "k.nkir");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(head + gather_row + ", dst_rmw=multiply" + tail, "dst_rmw supports add only");
  refused(head + gather_row + ", dst_rmw=add, oob_skip=true" + tail, "oob_mode.error only");
  refused(head + "dma_copy g[:, :], a[0:+4, :], oob_skip=true" + tail,
          "oob_skip needs an indirect");
}

// nisa.dma_transpose from SBUF: a DMA whose SBUF source is viewed with its partition dim last
// (.perm(1, 0)) moves each element to the transposed partition. `rows_written`: how many of
// the source's 16 partitions are written before it.
Program transpose_on_chip(int64_t rows_written) {
  Builder b("sbuf_transpose");
  auto x = b.input("x", DType::fp16, {16, 128});
  auto y = b.output("y", DType::fp16, {128, 16});
  auto a = b.sbuf("a", DType::fp16, {16, 128});
  auto t = b.sbuf("t", DType::fp16, {128, 16});
  if (rows_written == 16) {
    b.dma_copy(a(), x());
  } else {
    b.dma_copy(a({ds(0, rows_written), all()}), x({ds(0, rows_written), all()}));
  }
  Access across = a();
  across.perm = {1, 0};
  b.dma_copy(t(), across);
  b.dma_copy(y(), t());
  return b.finish();
}

TEST(DmaModes, AnSbufSourceViewedAcrossPartitionsTransposes) {
  const Program p = transpose_on_chip(16);
  auto in = random_inputs(p, {}, 6);
  RunResult r = run_program(p, {}, in);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& x = in.at("x");
  const HostTensor& y = r.outputs.at("y");
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 128; ++j)
      ASSERT_EQ(y.bits(j * 16 + i), x.bits(i * 128 + j)) << i << "," << j;
  }
  // The transposing DMA reads partitions [0, 16) of 'a' and writes [0, 128) of 't'.
  const TraceEvent& e = r.trace.events.at(1);
  ASSERT_EQ(e.num_reads, 1);
  ASSERT_EQ(e.num_writes, 1);
  const Region& read = r.trace.regions.at(e.region_begin);
  EXPECT_EQ(read.partition_end - read.partition_begin, 16);
  const Region& written = r.trace.regions.at(e.region_begin + 1);
  EXPECT_EQ(written.partition_end - written.partition_begin, 128);
}

// Reading partitions nobody wrote is caught on the permuted view as on any other: the shadow
// check covers the source's partitions, not its view rows.
TEST(DmaModes, ATransposingDmaReadingUnwrittenPartitionsIsCaught) {
  RunResult r = interptest_run(transpose_on_chip(8));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::uninitialized_read) << r.error->message;
  EXPECT_NE(r.error->message.find("partition 8"), std::string::npos) << r.error->message;
}

// Only a DMA moves data across partitions: a compute engine's operand keeps them first.
TEST(DmaModes, OnlyADmaMayViewAnOnChipTensorAcrossPartitions) {
  Builder b("copy_across");
  auto x = b.input("x", DType::fp32, {32, 32});
  auto y = b.output("y", DType::fp32, {32, 32});
  auto a = b.sbuf("a", DType::fp32, {32, 32});
  auto t = b.sbuf("t", DType::fp32, {32, 32});
  b.dma_copy(a(), x());
  Access across = a();
  across.perm = {1, 0};
  b.tensor_copy(t(), across);
  b.dma_copy(y(), t());
  try {
    b.finish();
    ADD_FAILURE() << "a tensor_copy across partitions was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("only a DMA moves data across partitions"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ncv
