// What the interpreter does with programs that cannot run as given: a shape, loop range, grid or
// placement its arithmetic gets wrong at the params is a well_formed failure (never a wrapped
// number, never undefined behaviour); a run over the step budget is refused before it starts,
// and the pre-count is exactly what the run takes.
#include <gtest/gtest.h>

#include <limits>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/builder.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The well_formed failure of a run at `params`, wherever the interpreter finds it (drawing the
// inputs or running).
std::optional<DynamicError> well_formed_failure(const Program& p, const ParamValues& params) {
  try {
    RunResult r = interptest::run_random(p, params);
    if (r.error && r.error->kind == CheckKind::well_formed) return r.error;
    return std::nullopt;
  } catch (const DynamicError& e) {
    if (e.kind == CheckKind::well_formed) return e;
    return std::nullopt;
  }
}

TEST(RunLimits, ADimensionBelowOneIsAWellFormedFailureNamingIt) {
  const Program p = parse_program(R"(kernel thin
param N in [1, 8]
input x : hbm fp32 [128, 4 - N]
output y : hbm fp32 [128, 4 - N]
dma_copy y[:, :], x[:, :]
)");
  EXPECT_FALSE(well_formed_failure(p, {{"N", 3}}));
  const auto e = well_formed_failure(p, {{"N", 4}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("non-positive dimension N * -1 + 4 = 0"), std::string::npos)
      << e->message;
}

TEST(RunLimits, ASizeBeyondInt64IsWellFormedEvenInAScopeNeverEntered) {
  // Found by fuzz_solver: prove refutes "size fits int64" for every declared buffer, so the run
  // must fail on it too, although the loop declaring it is empty at every point.
  const Program p = parse_program(R"(kernel unused
param a in [1, 8]
input x : hbm fp32 [128, 64]
output y : hbm fp32 [128, 64]
for i in affine_range(0, 0) {
  buffer t : sbuf fp32 [1, a * 4611686018427387904] at (0, 0)
  activation t[:, :], t[:, :], func=exp
}
dma_copy y[:, :], x[:, :]
)");
  const auto e = well_formed_failure(p, {{"a", 1}});  // 4 * 2^62 bytes
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("tensor 't'"), std::string::npos) << e->message;
}

TEST(RunLimits, ANegativeTripCountIsAWellFormedFailureNotASkippedLoop) {
  const Program p = parse_program(R"(kernel backwards
param N in [1, 8]
input x : hbm fp32 [128, 64]
output y : hbm fp32 [128, 64]
for i in sequential_range(0, N - 3) {
  dma_copy y[:, :], x[:, :]
}
dma_copy y[:, :], x[:, :]
)");
  EXPECT_FALSE(well_formed_failure(p, {{"N", 3}}));  // an empty loop is fine
  const auto e = well_formed_failure(p, {{"N", 2}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("negative trip count: range(0, -1)"), std::string::npos) << e->message;
}

TEST(RunLimits, APlacementNearInt64MaxIsCheckedArithmetic) {
  // Copy 1 of the buffer starts at N + stride: beyond int64 (undefined behaviour before).
  const Program p = parse_program(R"(kernel far
param N in [0, 9223372036854775807]
input x : hbm fp32 [128, 64]
output y : hbm fp32 [128, 64]
for i in sequential_range(0, 2) {
  buffer t : sbuf fp32 [128, 64] bufs 2 at (0, N)
  dma_copy t[:, :], x[:, :]
  dma_copy y[:, :], t[:, :]
}
)");
  RunResult r = interptest::run_random(p, {{"N", kMax - 8}});
  ASSERT_TRUE(r.error);
  // Copy 0 already lies outside SBUF (capacity); the offset itself never wraps.
  EXPECT_EQ(r.error->kind, CheckKind::capacity) << r.error->message;
  EXPECT_NE(r.error->message.find("from byte 9223372036854775799"), std::string::npos)
      << r.error->message;
}

TEST(RunLimits, ArithmeticBeyondInt64InAnIndexIsWellFormed) {
  const Program p = parse_program(R"(kernel wrap
param N in [1, 9223372036854775807]
input x : hbm fp32 [128, 64]
output y : hbm fp32 [128, 64]
dma_copy y[:, N * 2 - N - N :+ 64], x[:, :]
)");
  EXPECT_FALSE(well_formed_failure(p, {{"N", 5}}));
  const auto e = well_formed_failure(p, {{"N", int64_t{1} << 62}});
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("beyond int64"), std::string::npos) << e->message;
}

TEST(RunLimits, TheStepCountIsExactlyWhatTheRunTakes) {
  // Loops whose bounds depend on outer loop variables and on the core, a stepped loop, an empty
  // one and a negative-free triangular nest: the shapes the counter handles differently.
  const Program p = parse_program(R"(kernel nest
param N in [1, 16]
grid 2
input x : hbm fp32 [128, 64]
output y : hbm fp32 [128, 64]
for i in sequential_range(N) {
  for j in sequential_range(i + program_id) {
    dma_copy y[:, :], x[:, :]
    for k in affine_range(0, 7, 3) {
      dma_copy y[:, :], x[:, :]
    }
  }
  for e in sequential_range(i, i) {
    dma_copy y[:, :], x[:, :]
  }
}
dma_copy y[:, :], x[:, :]
)");
  for (int64_t n : {1, 5, 16}) {
    const ParamValues params{{"N", n}};
    const StepCount count = count_steps(p, params, kMax - 1);
    RunOptions exact;
    exact.compute_values = false;
    exact.max_steps = count.steps;
    const RunResult r = run_program(p, params, {}, exact);
    EXPECT_FALSE(r.error) << n << ": " << r.error->message;
    EXPECT_EQ(count.instances, static_cast<int64_t>(r.instances)) << n;
    RunOptions short_by_one = exact;
    short_by_one.max_steps = count.steps - 1;
    EXPECT_THROW(run_program(p, params, {}, short_by_one), InputError) << n;
  }
}

TEST(RunLimits, RunawayLoopsAreRefusedBeforeTheyStart) {
  // 2^40 iterations, and 60 nested loops of 2 (2^60 instances): counted in microseconds.
  std::string nested = "kernel deep\ninput x : hbm fp32 [128, 64]\noutput y : hbm fp32 [128, 64]\n";
  for (int k = 0; k < 60; ++k)
    nested += "for i" + std::to_string(k) + " in sequential_range(2) {\n";
  nested += "dma_copy y[:, :], x[:, :]\n";
  for (int k = 0; k < 60; ++k) nested += "}\n";
  for (const std::string& text :
       {std::string("kernel long\ninput x : hbm fp32 [128, 64]\noutput y : hbm fp32 [128, 64]\n"
                    "for i in sequential_range(1099511627776) {\n  dma_copy y[:, :], x[:, :]\n}\n"),
        nested}) {
    const Program p = parse_program(text);
    EXPECT_GT(count_steps(p, {}, RunOptions{}.max_steps).steps, RunOptions{}.max_steps);
    try {
      interptest::run_random(p, {});
      ADD_FAILURE() << "ran " << p.name;
    } catch (const InputError& e) {
      EXPECT_NE(e.message.find("--max-steps"), std::string::npos) << e.message;
    }
  }
}

// `buffers` one-tile buffers in scopes of their own, each carrying x to y: a tensor id per buffer.
Program one_scope_per_buffer(int buffers) {
  std::string text = "kernel many\ninput x : hbm fp32 [1, 4]\noutput y : hbm fp32 [1, 4]\n";
  for (int k = 0; k < buffers; ++k) {
    const std::string t = "t" + std::to_string(k);
    text += "for i" + std::to_string(k) + " in affine_range(0, 1) {\n  buffer " + t +
            " : sbuf fp32 [1, 4] at (0, 0)\n  dma_copy " + t +
            "[:, :], x[:, :]\n  dma_copy y[:, :], " + t + "[:, :]\n}\n";
  }
  return parse_program(text);
}

void expect_runs_as_a_copy(const Program& p) {
  const RunResult r = interptest::run_random(p, {});
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.outputs.at("y").bytes, random_inputs(p, {}, 1).at("x").bytes);
}

// The default tier's sibling of the deep test below: the same program at 3000 buffers (the
// one-pass liveness and the per-scope lifetimes the deep test runs 70000 times).
TEST(RunLimits, AProgramOfAScopePerBufferRuns) {
  expect_runs_as_a_copy(one_scope_per_buffer(3000));
}

// Deep: ~74 s on this machine (the remaining superlinear passes over 70000 scopes).
TEST(DeepRunLimits, AProgramOfMoreThan65534TensorsRuns) {
  // nki-library's attention_cte traced at 32768 keys declares a tensor per unrolled Python
  // iteration, over 65534 (the cap a 16-bit per-byte owner tag once needed).
  const Program p = one_scope_per_buffer(70000);
  ASSERT_GT(p.tensors.size(), 65535u);
  expect_runs_as_a_copy(p);
}

}  // namespace
}  // namespace ncv
