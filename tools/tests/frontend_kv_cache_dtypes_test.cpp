// `check --layout` with KV-cache roles under attention_tkg's contract at the dtypes of
// nki-library's own fp8 KV and fp32 rows, values its contract is stated for but the registered
// kernel is not built with (`--contract-option q_dtype=fp8_e4m3 kv_dtype=fp8_e4m3 out_dtype=bf16`,
// or fp32 for all three; Variant::contract_only_values): a small decode kernel rounding as the
// library does for its q dtype (frontend/tests/kernels/kv_cache_io_dtype.py: exp written in q's
// dtype, the row sum and PV of those values) passes; the same kernel keeping its scores in fp8, or
// its P in bf16 with fp32 q, fails; a dtype the contract is not stated for is a usage error.
// (kernels/decode_attention/tests/attention_tkg_dtypes_test.cpp shows the contract-level facts,
// the fp8 computation outside the bf16-q contract among them.)
#include <gtest/gtest.h>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

// One batch, 2 heads x 4 active tokens, d 64, S = 128 of 256 cache slots, all inputs in `dtype`;
// the contract's dtype options `q`, `kv`, `out` (every other option at its default).
std::vector<std::string> io_check(const std::string& dtype, const std::string& out_dtype,
                                  const std::string& bug, const std::string& q,
                                  const std::string& kv, const std::string& out) {
  std::vector<std::string> args = {
      "check",
      (kKernels / "kv_cache_io_dtype.py").string() + ":kv_decode_io",
      "--input",
      "q=" + dtype + "[64,8]",
      "--input",
      "k_active=" + dtype + "[64,4]",
      "--input",
      "v_active=" + dtype + "[4,64]",
      "--input",
      "k_prior=" + dtype + "[64,256]",
      "--input",
      "v_prior=" + dtype + "[256,64]",
      "--input",
      "mask=uint8[8,128]",
      "--param",
      "out_dtype=" + out_dtype,
      "--param",
      "bug=" + bug,
      "--layout",
      "q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c out=h*s,d",
      "--contract",
      "attention_tkg",
      "--gen",
      "trn2",
      "--cases",
      "3"};
  for (const char* o : {"lnc=1", "strided_mm1=true", "mask=hbm", "sink=off", "s_prior_tiling=off",
                        "block_len=0", "block_resize=1", "swa=off", "out_in_sb=false"}) {
    args.insert(args.end(), {"--contract-option", o});
  }
  args.insert(args.end(), {"--contract-option", "q_dtype=" + q, "--contract-option",
                           "kv_dtype=" + kv, "--contract-option", "out_dtype=" + out});
  return args;
}

std::vector<std::string> fp8_check(const std::string& bug, const std::string& q = "fp8_e4m3") {
  return io_check("fp8_e4m3", "bfloat16", bug, q, "fp8_e4m3", "bf16");
}

std::vector<std::string> fp32_check(const std::string& bug) {
  return io_check("fp32", "float32", bug, "fp32", "fp32", "fp32");
}

void expect_passes(const std::vector<std::string>& args, const std::string& options) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find(options), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

void expect_fails(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST(FrontendKvCacheDtypes, Fp8QkvRoundedAsTheLibraryPassesTheFp8Contract) {
  expect_passes(fp8_check("none"), "kv_dtype=fp8_e4m3 lnc=1 mask=hbm out_dtype=bf16");
}

// Scores kept in q's dtype (fp8) instead of the library's fp32 inter_type.
TEST(FrontendKvCacheDtypes, ScoresKeptInFp8FailTheFp8Contract) {
  expect_fails(fp8_check("scores_in_io"));
}

TEST(FrontendKvCacheDtypes, AllFp32PassesTheFp32Contract) {
  expect_passes(fp32_check("none"), "kv_dtype=fp32 lnc=1 mask=hbm out_dtype=fp32");
}

// exp written in bf16 (and V taken in bf16) whatever q's dtype.
TEST(FrontendKvCacheDtypes, PInBf16FailsTheFp32Contract) {
  expect_fails(fp32_check("p_bf16"));
}

TEST(FrontendKvCacheDtypes, ADtypeTheContractIsNotStatedForIsAUsageError) {
  const CliResult r = run_cli(fp8_check("none", "fp16"));
  expect_exit(r, 2,
              {"does not offer q_dtype=fp16",
               "q_dtype is one of bf16; its contract also fp32, "
               "fp8_e4m3"});
}

}  // namespace
}  // namespace ncv::cli_test
