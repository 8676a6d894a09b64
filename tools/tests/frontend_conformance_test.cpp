// The NKI front end against the NKI API reference, argument by argument (labels conformance and
// frontend): kernels from frontend/tests/kernels/conformance.py are traced by `ncverify import`
// and run on the interpreter with inputs chosen here, every output element compared with a value
// computed here; the kernels of conformance_refusals.py pass an argument the API does not have or
// the model does not run, and each must stop at its line with exit 2, naming call and argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/nkir/parse.h"
#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

// A [rows, cols] fp32 input whose element (r, c) is f(r, c).
HostTensor input(int64_t rows, int64_t cols, const std::function<float(int64_t, int64_t)>& f) {
  HostTensor t(DType::fp32, {rows, cols});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t.set(r * cols + c, f(r, c));
  }
  return t;
}

// Small integers: every product and every sum of up to 128 of them is exact in fp32, so the
// expected values below are exact whatever order the engine adds in. Neither is symmetric, so a
// transposed operand gives other values.
float small_a(int64_t r, int64_t c) {
  return static_cast<float>((3 * r + c) % 5 - 2);
}
float small_b(int64_t r, int64_t c) {
  return static_cast<float>((r + 2 * c) % 7 - 3);
}

// Traces FILE.py:FUNCTION with `ncverify import`, runs it with `inputs`, and returns its outputs.
std::map<std::string, HostTensor> traced_run(const std::string& function,
                                             const std::map<std::string, HostTensor>& inputs) {
  const CliResult imp =
      run_cli({"import", (kKernels / "conformance.py").string() + ":" + function});
  EXPECT_EQ(imp.exit_code, 0) << describe(imp);
  if (imp.exit_code != 0) return {};
  const Program p = parse_program(imp.out, function);
  // The kernels assert every shape, so each param's domain is one value.
  ParamValues params;
  for (const Param& param : p.params) {
    EXPECT_EQ(param.lo, param.hi) << param.name;
    params[param.name] = param.lo;
  }
  RunResult r = run_program(p, params, inputs);
  EXPECT_FALSE(r.error.has_value()) << (r.error ? r.error->message : "");
  return r.outputs;
}

// out[i][j] = sum_k a[k][i] * b[k][j]: the Tensor engine's stationary.T @ moving.
void expect_product(const HostTensor& out, const HostTensor& a, const HostTensor& b) {
  const int64_t k = a.shape[0], m = a.shape[1], n = b.shape[1];
  ASSERT_EQ(out.shape, (std::vector<int64_t>{m, n}));
  int wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t kk = 0; kk < k; ++kk) want += a.get(kk * m + i) * b.get(kk * n + j);
      if (out.get(i * n + j) != want && ++wrong <= 3) {
        ADD_FAILURE() << "out[" << i << "][" << j << "] = " << out.get(i * n + j) << ", want "
                      << want;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

// nc_matmul(is_transpose=True) with a [128, 512] moving tile computes the [128, 512] product
// stationary.T @ moving (the flag is a hint that moving is an identity; trn1 has no transpose
// mode), never a [128, 128] transpose of the stationary tile.
TEST(ConformanceMatmul, TransposeFlagWithAWideMovingTileIsTheProduct) {
  const HostTensor q = input(128, 128, small_a), k = input(128, 512, small_b);
  const auto out = traced_run("transpose_flag_wide_moving", {{"q", q}, {"k", k}});
  ASSERT_EQ(out.count("out"), 1u);
  expect_product(out.at("out"), q, k);
}

// The documented use: with the identity as moving, the same flag gives the transpose, exactly.
TEST(ConformanceMatmul, TransposeFlagWithTheIdentityTransposes) {
  const HostTensor a = input(128, 128, [](int64_t r, int64_t c) { return 0.25f * r - c; });
  const auto out = traced_run("transpose_by_identity", {{"a", a}});
  ASSERT_EQ(out.count("out"), 1u);
  const HostTensor& o = out.at("out");
  for (int64_t i = 0; i < 128; ++i) {
    for (int64_t j = 0; j < 128; ++j) ASSERT_EQ(o.get(i * 128 + j), a.get(j * 128 + i));
  }
}

// tile_position/tile_size place the matmul in part of the PE array; the values are the product.
TEST(ConformanceMatmul, PeTilingKeepsTheProduct) {
  const HostTensor a = input(64, 64, small_a), b = input(64, 512, small_b);
  const auto out = traced_run("pe_tiled_matmul", {{"a", a}, {"b", b}});
  ASSERT_EQ(out.count("out"), 1u);
  expect_product(out.at("out"), a, b);
}

// reduce_cmd is passed as written: reset_reduce without reduce_res still fills the registers,
// and reduce adds the second tile's rows to them (the front end once dropped a reduce_cmd
// without reduce_res, which gave the second tile's sums alone).
TEST(ConformanceActivation, ReduceCommandsDriveTheRegistersAsWritten) {
  const HostTensor a = input(128, 64, small_a), b = input(128, 64, small_b);
  const auto out = traced_run("accumulator_registers", {{"a", a}, {"b", b}});
  ASSERT_EQ(out.count("out"), 1u);
  for (int64_t r = 0; r < 128; ++r) {
    float want = 0;
    for (int64_t c = 0; c < 64; ++c) want += a.get(r * 64 + c);
    for (int64_t c = 0; c < 64; ++c) want += b.get(r * 64 + c);
    ASSERT_EQ(out.at("out").get(r), want) << "row " << r;
  }
}

// tensor_reduce's negate and keepdims, nl.max's keepdims: [128, 1] columns.
TEST(ConformanceReduce, NegateAndKeepdims) {
  const HostTensor a = input(128, 64, small_a);
  const auto out = traced_run("reductions_keepdims", {{"a", a}});
  ASSERT_EQ(out.count("out"), 1u);
  for (int64_t r = 0; r < 128; ++r) {
    float sum = 0, max = a.get(r * 64);
    for (int64_t c = 0; c < 64; ++c) {
      sum += a.get(r * 64 + c);
      max = std::max(max, a.get(r * 64 + c));
    }
    ASSERT_EQ(out.at("out").get(r * 2), -sum) << "row " << r;
    ASSERT_EQ(out.at("out").get(r * 2 + 1), max) << "row " << r;
  }
}

// Hints that change when or how the hardware works, not the values, are accepted (a + 2 here).
TEST(ConformanceHints, ScheduleAndDescriptorHintsKeepTheValues) {
  const HostTensor a = input(128, 64, small_a);
  const auto out = traced_run("hints_keep_values", {{"a", a}});
  ASSERT_EQ(out.count("out"), 1u);
  for (int64_t i = 0; i < 128 * 64; ++i) ASSERT_EQ(out.at("out").get(i), a.get(i) + 2.0f) << i;
}

struct Refusal {
  std::string function;
  std::string why;  // part of the message (the call and the argument)
};

// The line a kernel's refusal must name: the first line of its function (after `def NAME(`)
// that carries the `# refused` comment.
int refusal_line(const std::string& function) {
  std::istringstream in(read_file(kKernels / "conformance_refusals.py"));
  std::string line;
  bool inside = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind("def " + function + "(", 0) == 0) inside = true;
    if (inside && line.find("# refused") != std::string::npos) return n;
  }
  return -1;
}

void expect_refusals(const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    SCOPED_TRACE(c.function);
    const CliResult r =
        run_cli({"import", (kKernels / "conformance_refusals.py").string() + ":" + c.function});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    const std::string where =
        "conformance_refusals.py:" + std::to_string(refusal_line(c.function)) + ": ";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected " << where << "\n" << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("TypeError"), std::string::npos) << r.err;
  }
}

TEST(ConformanceRefusals, ArgumentsTheApiDoesNotHave) {
  expect_refusals({
      {"unknown_keyword", "nisa.nc_matmul: unknown keyword argument 'transpose_moving'"},
      {"newer_api_dst", "nisa.tensor_tensor: unknown keyword argument 'dst'"},
      {"matmul_accumulate_flag",
       "nisa.nc_matmul: unknown keyword argument 'accumulate': the newer nki API's"},
      {"misspelt_load_keyword", "nl.load: unknown keyword argument 'dtyp'"},
      {"keyword_only_by_position", "nisa.tensor_copy: takes 1 positional argument (src)"},
      {"loop_keyword", "nl.affine_range: unknown keyword argument 'unroll_factor'"},
      {"program_id_without_axis", "nl.program_id: missing argument 'axis'"},
      {"no_reorder_with_argument", "ncc.no_reorder: takes 0 positional arguments, 1 given"},
  });
}

TEST(ConformanceRefusals, MatmulArgumentsTheModelDoesNotRun) {
  expect_refusals({
      {"matmul_perf_mode", "nisa.nc_matmul: perf_mode='double_row_gen3' is not modelled"},
      {"matmul_tile_position_alone", "tile_position and tile_size must both be set"},
      {"matmul_tile_too_small", "tile_size rows (partitions) 64 is smaller than the stationary"},
      {"matmul_tile_unaligned", "tile_position=(16, 0): each value must be a multiple of 32"},
      {"matmul_tile_32_by_32", "tile_size=(32, 32): NeuronCore-v2 cannot"},
      {"matmul_mixed_fp32", "nc_matmul: an fp32 operand needs an fp32 partner"},
      {"matmul_integer_operand", "nc_matmul: the stationary tile is int32"},
  });
}

TEST(ConformanceRefusals, DataMovementArgumentsTheModelDoesNotRun) {
  expect_refusals({
      {"dma_read_modify_write", "nisa.dma_copy: dst_rmw_op=add is not modelled"},
      {"dma_oob_skip", "nisa.dma_copy: oob_mode='skip' is not modelled"},
      {"dma_dge_mode", "nisa.dma_copy: dge_mode='hwdge' is not modelled"},
      {"predicated_copy_casts", "nisa.tensor_copy_predicated: dtype=nl.bfloat16 is not"},
      {"psum_alloc_offset", "ncc.psum.mod_alloc: base_addr=512 is not modelled"},
      {"psum_alloc_free_tiles", "ncc.psum.mod_alloc: num_free_tiles=(2,) is not modelled"},
      {"sbuf_alloc_partition", "ncc.sbuf.mod_alloc: base_partition=32 is not modelled"},
  });
}

TEST(ConformanceRefusals, ComputeArgumentsTheModelDoesNotRun) {
  expect_refusals({
      {"masked_iota", "nisa.iota: mask=... is not modelled"},
      {"masked_memset", "nisa.memset: mask=... is not modelled"},
      {"scalar_reduce_reversed", "nisa.tensor_scalar_reduce: reverse0=True is not modelled"},
      {"activation_max_reduce", "nisa.activation: reduce_op=amax is not modelled"},
      {"activation_reduce_max", "nisa.activation_reduce: reduce_op=amax is not modelled"},
      {"negated_bitwise_reduce", "nisa.tensor_reduce: negate=True applies to arithmetic"},
  });
}

// A correct kernel must never get a FAIL: operands over different partition counts (neither of
// them one, which broadcasts) are refused at the call instead of being emitted as a
// tensor_scalar whose operand the ISA rule rejects at run time.
TEST(ConformanceRefusals, PartitionCountsThatDoNotBroadcastAreRefusedNotFailed) {
  expect_refusals({
      {"column_over_other_partitions",
       "add of a tile over 128 partitions with a column over 64: only a single partition "
       "broadcasts"},
  });
}

// Indirect addressing is modelled for DMAs between HBM and SBUF with one index tile of integers;
// anything else stops at the access instead of reading the wrong elements.
TEST(ConformanceRefusals, MemoryAccessesTheModelDoesNotMake) {
  expect_refusals({
      {"index_tile_into_sbuf", "indirect addressing reads or writes HBM only"},
      {"two_index_tiles", "more than one index tile into 'a'"},
      {"float_index_tile", "is fp32; indirect indices are int32 or uint32"},
      {"symbolic_indexed_dim", "needs the size of its dim 0 fixed (give it with --shape)"},
      // The kernel names its tensor `scratch`, an .nkir keyword: the tracer renames it.
      {"masked_indirect_load",
       "mask= of an indirectly addressed access of 'scratch_2' is not modelled"},
      {"dma_transpose_from_sbuf", "nisa.dma_transpose: src='a tile in sbuf' is not modelled"},
      {"dma_transpose_other_axes", "nisa.dma_transpose: axes=(0, 1) is not modelled"},
  });
}

TEST(ConformanceRefusals, EnginesACallDoesNotRunOn) {
  expect_refusals({
      {"transpose_on_gpsimd", "nisa.nc_transpose: engine=nisa.gpsimd_engine is not one"},
      {"tensor_tensor_on_scalar", "nisa.tensor_tensor: engine=nisa.scalar_engine is not one"},
      {"gpsimd_reads_psum", "nisa.tensor_copy: engine=nisa.gpsimd_engine cannot read PSUM"},
      {"tensor_scalar_on_tensor_engine", "nisa.tensor_scalar: engine=nisa.tensor_engine is not"},
      {"memset_on_scalar", "nisa.memset: engine=nisa.scalar_engine is not one"},
  });
}

}  // namespace
}  // namespace ncv::cli_test
