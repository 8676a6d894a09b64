// `check --layout` beyond q, k, v, out and a bottom-right causal mask (check/explicit_layout.h,
// check/explicit_positions.h): a sliding window, a top-left causal mask, sink logits, a prior
// read up to a run-time length, a run-time query offset, per-query key bounds and the cached
// softmax statistics (neg_max, recip_sum), each shown to pass a right kernel and fail one broken
// in that respect (frontend/tests/kernels/
// masked_attention.py; one tile, fp32, under sd_attention's fp32 contract).
#include <gtest/gtest.h>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

// `check masked_attention.py:FUNCTION` with the inputs `inputs`, --layout "q=d,s k=d,s v=d,s
// out=s,d" plus `roles`, sd_attention's fp32 contract, one case, and `extra`.
CliResult check(const std::string& function, const std::vector<std::string>& inputs,
                const std::string& roles, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"check",
                                   (kKernels / "masked_attention.py").string() + ":" + function};
  for (const std::string& in : inputs) {
    args.push_back("--input");
    args.push_back(in);
  }
  for (const std::string& a :
       {std::string("--layout"), "q=d,s k=d,s v=d,s out=s,d" + (roles.empty() ? "" : " " + roles),
        std::string("--contract"), std::string("sd_attention"), std::string("--contract-option"),
        std::string("use_causal_mask=false"), std::string("--contract-option"),
        std::string("mixed_precision=false"), std::string("--contract-option"),
        std::string("dtype=fp32"), std::string("--cases"), std::string("1")}) {
    args.push_back(a);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

std::vector<std::string> cat_inputs(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect_pass(const CliResult& r) {
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}
void expect_fail(const CliResult& r) {
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

const std::vector<std::string> kSquare = {"q=fp32[32,128]", "k=fp32[32,128]", "v=fp32[32,128]"};
const std::vector<std::string> kWide = {"q=fp32[32,64]", "k=fp32[32,128]", "v=fp32[32,128]"};

TEST(FrontendLayoutProblem, WindowPassesTheKernelsWindow) {
  expect_pass(check("window_attention", kSquare, "", {"--causal", "--window", "16"}));
}

TEST(FrontendLayoutProblem, WindowFailsAWindowOneKeyTooWideAndTheReplaySaysSo) {
  const CliResult r = check("window_attention", kSquare, "",
                            {"--param", "off_by_one=True", "--causal", "--window", "16"});
  expect_fail(r);
  EXPECT_NE(r.out.find("--causal --window 16"), std::string::npos) << r.out;  // the replay
}

TEST(FrontendLayoutProblem, TopLeftCausalPassesATopLeftKernel) {
  expect_pass(check("causal_attention", kWide, "", {"--causal", "--align", "top-left"}));
}

TEST(FrontendLayoutProblem, TopLeftCausalFailsABottomRightKernel) {
  expect_fail(check("causal_attention", kWide, "",
                    {"--param", "top_left=False", "--causal", "--align", "top-left"}));
}

TEST(FrontendLayoutProblem, SinkRolePassesAKernelWithTheSink) {
  expect_pass(check("sink_attention", cat_inputs(kSquare, {"sink=fp32[1,1]"}), "sink=h,b", {}));
}

TEST(FrontendLayoutProblem, SinkRoleFailsAKernelThatDropsIt) {
  expect_fail(check("sink_attention", cat_inputs(kSquare, {"sink=fp32[1,1]"}), "sink=h,b",
                    {"--param", "drop_sink=True"}));
}

const std::vector<std::string> kPrior = {"q=fp32[32,64]",       "k=fp32[32,64]",
                                         "v=fp32[32,64]",       "k_prior=fp32[32,64]",
                                         "v_prior=fp32[32,64]", "prior_len=int32[1,1]"};
const char* const kPriorRoles = "k_prior=d,s v_prior=d,s prior_len=prior_len";

TEST(FrontendLayoutProblem, PriorRolesPassAKernelThatReadsTheUsedLength) {
  expect_pass(check("prior_attention", kPrior, kPriorRoles, {"--causal", "--align", "top-left"}));
}

TEST(FrontendLayoutProblem, PriorRolesFailAKernelThatIgnoresTheUsedLength) {
  expect_fail(check("prior_attention", kPrior, kPriorRoles,
                    {"--param", "ignore_len=True", "--causal", "--align", "top-left"}));
}

const std::vector<std::string> kCp = {"q=fp32[32,64]", "k=fp32[32,128]", "v=fp32[32,128]",
                                      "cp_offset=int32[1,1]"};

TEST(FrontendLayoutProblem, QueryOffsetPassesContiguousAndStridedRanks) {
  expect_pass(check("cp_attention", kCp, "q_offset=cp_offset",
                    {"--causal", "--align", "top-left", "--cp-degree", "2", "--seed", "2"}));
  expect_pass(check("cp_attention", kCp, "q_offset=cp_offset",
                    {"--param", "strided=True", "--causal", "--align", "top-left", "--cp-degree",
                     "2", "--cp-strided", "--seed", "2"}));
}

TEST(FrontendLayoutProblem, QueryOffsetFailsAKernelThatIgnoresIt) {
  // Seed 2 draws rank 1 (offset 64): a kernel that ignores the offset masks half the keys.
  expect_fail(check("cp_attention", kCp, "q_offset=cp_offset",
                    {"--param", "ignore_offset=True", "--causal", "--align", "top-left",
                     "--cp-degree", "2", "--seed", "2"}));
}

const std::vector<std::string> kPacked = {"q=fp32[32,128]", "k=fp32[32,128]", "v=fp32[32,128]",
                                          "bound_min=fp32[128,1]", "bound_max=fp32[128,1]"};

TEST(FrontendLayoutProblem, KeyBoundsPassAKernelThatKeepsEachSequence) {
  expect_pass(check("packed_attention", kPacked, "key_min=bound_min key_max=bound_max", {}));
}

TEST(FrontendLayoutProblem, KeyBoundsFailAKernelThatIgnoresTheUpperBound) {
  expect_fail(check("packed_attention", kPacked, "key_min=bound_min key_max=bound_max",
                    {"--param", "ignore_max=True"}));
}

// Each exits 2 naming what is wrong, before any case runs.
void expect_usage_errors(
    const std::vector<std::pair<std::vector<std::string>, std::string>>& cases) {
  const std::string k = (kKernels / "masked_attention.py").string() + ":window_attention";
  for (const auto& [args, why] : cases) {
    std::vector<std::string> a = {"check", k};
    a.insert(a.end(), args.begin(), args.end());
    for (const char* in :
         {"--input", "q=fp32[32,128]", "--input", "k=fp32[32,128]", "--input", "v=fp32[32,128]"}) {
      a.push_back(in);
    }
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

// cache_softmax's statistics as nki-library's attention_cte stores them: -(row max) and
// 1 / (row sum), [128, Sq / 128] (ERROR_BOUNDS.md "The cached softmax statistics").
const std::string kStats = "neg_max=seq_part,seq_tile recip_sum:sum_recip=seq_part,seq_tile";

TEST(FrontendLayoutProblem, CachedSoftmaxRolesPassAKernelThatStoresTheStatistics) {
  const CliResult r = check("cached_softmax_attention", kSquare, kStats, {});
  expect_pass(r);
  EXPECT_NE(r.out.find("row_max PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recip_sum PASS"), std::string::npos) << r.out;
}

TEST(FrontendLayoutProblem, CachedSoftmaxRolesFailAMaxOfHalfTheKeys) {
  const CliResult r =
      check("cached_softmax_attention", kSquare, kStats, {"--param", "wrong_max=True"});
  expect_fail(r);
  EXPECT_NE(r.out.find("row_max FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recip_sum PASS"), std::string::npos) << r.out;
}

TEST(FrontendLayoutProblem, CachedSoftmaxRolesFailASumMissingTheLastKey) {
  const CliResult r =
      check("cached_softmax_attention", kSquare, kStats, {"--param", "wrong_sum=True"});
  expect_fail(r);
  EXPECT_NE(r.out.find("row_max PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recip_sum FAIL"), std::string::npos) << r.out;
}

TEST(FrontendLayoutProblem, ACachedStatisticNamingNoOutputIsAUsageError) {
  const CliResult r =
      check("cached_softmax_attention", kSquare, "neg_max:no_such=seq_part,seq_tile", {});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("no_such"), std::string::npos) << r.err;
}

TEST(FrontendLayoutProblem, ProblemFlagsWithoutALayoutOrOfNoAlignmentAreUsageErrors) {
  expect_usage_errors({
      {{"--like", "sd_attention", "--window", "4"}, "--layout check"},
      {{"--layout", "q=d,s k=d,s v=d,s out=s,d", "--contract", "sd_attention", "--align",
        "diagonal"},
       "expected top-left or bottom-right"},
  });
}

TEST(FrontendLayoutProblem, IncompleteRolesAreUsageErrors) {
  expect_usage_errors({
      {{"--layout", "q=d,s k=d,s v=d,s out=s,d q_offset=q", "--contract", "sd_attention"},
       "needs --cp-degree"},
      {{"--layout", "q=d,s k=d,s v=d,s out=s,d k_prior=d,s", "--contract", "sd_attention"},
       "k_prior, v_prior and prior_len"},
  });
}

TEST(FrontendLayoutProblem, ARoleNamingNoInputIsAUsageError) {
  expect_usage_errors({
      {{"--layout", "q=d,s k=d,s v=d,s out=s,d key_min=nothere key_max=q", "--contract",
        "sd_attention"},
       "'nothere', which is no input"},
  });
}

}  // namespace
}  // namespace ncv::cli_test
