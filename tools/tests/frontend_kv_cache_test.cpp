// `check --layout` with KV-cache roles (check/kv_cache_layout.h) through the command line: a small
// traced decode kernel (frontend/tests/kernels/kv_cache_decode.py) passes against the oracle's
// kv_cache problem under attention_tkg's contract, with each case's positions drawn by
// attention_tkg's generator; the same kernel reading the cache's stale active slots, or every
// cache slot one off, fails; a layout that does not fit is a usage error naming what is wrong.
// A block cache (role `table`, kv_cache_blocks.py) passes and a kernel ignoring its table fails;
// a two-core kernel exchanging its rows with nisa.sendrecv (kv_cache_lnc2.py, --grid 2) passes,
// and fails with its halves swapped or both cores on one half.
#include <gtest/gtest.h>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

const char* const kLayout =
    "q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c out=h*s,d";

std::vector<std::string> decode_check(const std::string& bug, const std::string& layout) {
  std::vector<std::string> args = {
      "check",      (kKernels / "kv_cache_decode.py").string() + ":kv_decode",
      "--input",    "q=bf16[64,8]",
      "--input",    "k_active=bf16[64,4]",
      "--input",    "v_active=bf16[4,64]",
      "--input",    "k_prior=bf16[64,256]",
      "--input",    "v_prior=bf16[256,64]",
      "--input",    "mask=uint8[8,128]",
      "--param",    "bug=" + bug,
      "--layout",   layout,
      "--contract", "attention_tkg",
      "--gen",      "trn2",
      "--cases",    "3"};
  append_attention_tkg_options(args);
  return args;
}

// `check` passes under attention_tkg's contract, or FAILs (exit 1).
void expect_passes(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("contract attention_tkg with options"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

void expect_fails(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST(FrontendKvCacheLayout, ARightDecodeKernelPasses) {
  expect_passes(decode_check("none", kLayout));
}

void expect_fail(const std::string& bug) {
  expect_fails(decode_check(bug, kLayout));
}

// The active tokens read from the cache's active slots (which hold values no kernel may use).
TEST(FrontendKvCacheLayout, ReadingTheStaleActiveSlotsFails) {
  expect_fail("stale");
}

// Every cached slot read one slot late (caught once a case's position makes cached keys visible).
TEST(FrontendKvCacheLayout, ReadingEverySlotOneOffFails) {
  expect_fail("off_by_one");
}

// The block-cache kernel: one batch, 2 heads x 4 active tokens, d 64, 24 physical blocks of 4
// slots, a table of 16 blocks (S = 64 slots).
const char* const kBlockLayout =
    "q=d,h*s k_active=d,s v_active=s,d k_prior=n,l*d v_prior=n,l*d table=t,b mask=h*s,c "
    "out=h*s,d";

std::vector<std::string> block_check(const std::string& bug, const std::string& layout) {
  std::vector<std::string> args = {
      "check",      (kKernels / "kv_cache_blocks.py").string() + ":kv_blocks_decode",
      "--input",    "q=bf16[64,8]",
      "--input",    "k_active=bf16[64,4]",
      "--input",    "v_active=bf16[4,64]",
      "--input",    "k_prior=bf16[24,256]",
      "--input",    "v_prior=bf16[24,256]",
      "--input",    "table=uint32[16,1]",
      "--input",    "mask=uint8[8,64]",
      "--param",    "bug=" + bug,
      "--layout",   layout,
      "--contract", "attention_tkg",
      "--gen",      "trn2",
      "--cases",    "3"};
  append_attention_tkg_options(args);
  return args;
}

TEST(FrontendKvCacheLayout, ABlockTableKernelPasses) {
  expect_passes(block_check("none", kBlockLayout));
}

// Physical blocks 0..T-1 read in order (each case draws a permutation of the blocks).
TEST(FrontendKvCacheLayout, IgnoringTheBlockTableFails) {
  expect_fails(block_check("ignore_table", kBlockLayout));
}

// The two-core kernel: kv_cache_decode's problem (2 heads x 4 active tokens, S = 128 of 256
// cache slots), rows split between the cores.
std::vector<std::string> lnc2_check(const std::string& bug) {
  std::vector<std::string> args = decode_check(bug, kLayout);
  args[1] = (kKernels / "kv_cache_lnc2.py").string() + ":kv_lnc2_decode";
  args.insert(args.begin() + 2, {"--grid", "2"});
  return args;
}

TEST(FrontendKvCacheLayout, ATwoCoreKernelPasses) {
  expect_passes(lnc2_check("none"));
}

void expect_lnc2_fail(const std::string& bug) {
  expect_fails(lnc2_check(bug));
}

// The rows received from the peer stored as this core's own (the halves swapped).
TEST(FrontendKvCacheLayout, ATwoCoreKernelStoringTheWrongHalfFails) {
  expect_lnc2_fail("wrong_half");
}

// Both cores computing the first half of the rows.
TEST(FrontendKvCacheLayout, ATwoCoreKernelComputingOneHalfTwiceFails) {
  expect_lnc2_fail("one_half");
}

TEST(FrontendKvCacheLayout, ALayoutThatDoesNotFitIsAUsageError) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      // refused before the kernel is traced
      {"q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d out=h*s,d",
       "layout misses 'mask'"},
      {"q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c,a out=h*s,d",
       "one of them"},
      // the heads left out of q: its 8 columns are then 8 active tokens, not k_active's 4
      {"q=d,s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c out=h*s,d",
       "dimension 1 is 8, its axes' sizes multiply to 4"},
  };
  for (const auto& [layout, why] : bad) {
    const CliResult r = run_cli(decode_check("none", layout));
    EXPECT_EQ(r.exit_code, 2) << layout << "\n" << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ncv::cli_test
