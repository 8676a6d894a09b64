// tools/generations.h in process, on a kernel restricted to trn2 (a copy of sd_attention with
// Variant::generations set): a named generation it does not run on is a UsageError with the
// kernel's reason, no --gen picks its first generation, --gen all skips the others with a reason.
#include "tools/generations.h"

#include <gtest/gtest.h>

#include <functional>

#include "kernels/registry.h"
#include "tools/cli_common.h"

namespace ncv::cli {
namespace {

kernels::Variant trn2_only() {
  kernels::Variant v = *kernels::find_variant("sd_attention");
  v.name = "fake_trn2_kernel";
  v.generations = {"trn2"};
  v.generations_reason = "it needs sendrecv";
  return v;
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.message;
  }
  return "(no UsageError)";
}

TEST(Generations, ANamedGenerationTheKernelDoesNotRunOnIsRefusedWithItsReason) {
  const kernels::Variant v = trn2_only();
  EXPECT_EQ(usage_error([&] { generation_for(&v, "trn1"); }),
            "--gen trn1: fake_trn2_kernel runs on trn2 only: it needs sendrecv");
  EXPECT_EQ(usage_error([&] { generation_for(&v, "trn3"); }),
            "--gen trn3: fake_trn2_kernel runs on trn2 only: it needs sendrecv");
  EXPECT_EQ(generation_for(&v, "trn2").name, "trn2");
  // An unknown name is still an unknown name.
  EXPECT_NE(usage_error([&] { generation_for(&v, "trn9"); }).find("unknown --gen 'trn9'"),
            std::string::npos);
}

TEST(Generations, WithoutGenTheKernelsFirstGenerationReplacesTrn1) {
  const kernels::Variant v = trn2_only();
  EXPECT_EQ(generation_for(&v, "").name, "trn2");
  EXPECT_EQ(generation_for(kernels::find_variant("sd_attention"), "").name, "trn1");
  EXPECT_EQ(generation_for(static_cast<const kernels::Variant*>(nullptr), "").name, "trn1");
  // A rewrite and its original together: the first generation both run on.
  EXPECT_EQ(generation_for({kernels::find_variant("sd_attention"), &v}, "").name, "trn2");
  EXPECT_NE(usage_error([&] {
              generation_for({kernels::find_variant("sd_attention"), &v}, "trn1");
            }).find("runs on trn2 only"),
            std::string::npos);
}

TEST(Generations, AllSkipsTheOthersAndSaysWhy) {
  const kernels::Variant v = trn2_only();
  const GenerationPlan plan = generations_for(&v, "all", "");
  ASSERT_EQ(plan.run.size(), 1u);
  EXPECT_EQ(plan.run.front()->name, "trn2");
  ASSERT_EQ(plan.skipped.size(), 2u);
  EXPECT_EQ(plan.skipped[0].gen, "trn1");
  EXPECT_EQ(plan.skipped[1].gen, "trn3");
  EXPECT_EQ(skip_line("fake_trn2_kernel", plan.skipped[0]),
            "SKIP fake_trn2_kernel on trn1: fake_trn2_kernel runs on trn2 only: it needs sendrecv");
  // Unrestricted: every generation, nothing skipped.
  const GenerationPlan all = generations_for(kernels::find_variant("sd_attention"), "all", "");
  EXPECT_EQ(all.run.size(), 3u);
  EXPECT_TRUE(all.skipped.empty());
  // One named generation through the plan is refused like generation_for.
  EXPECT_NE(usage_error([&] { generations_for(&v, "trn1", ""); }).find("runs on trn2 only"),
            std::string::npos);
  EXPECT_EQ(generations_for(&v, "", "").run.front()->name, "trn2");
}

}  // namespace
}  // namespace ncv::cli
