// `check --layout` with KV-cache roles and RoPE fused into the kernel (the inv_freqs role,
// check/kv_cache_layout.h): a small traced new-API decode kernel
// (frontend/tests/kernels/kv_cache_rope_decode.py, d = 128 so that the 1/sqrt(d) folded into q is
// no power of two and q is rounded twice) passes against the oracle's RoPE under attention_tkg's
// contract with its fuse_rope stage; the same kernel turning every pair the wrong way
// (rotate_half's halves swapped) or rotating by the position + 1 fails; a RoPE layout without
// positions, or a rope_products without inv_freqs, is a usage error.
#include <gtest/gtest.h>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

const char* const kLayout =
    "q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c out=h*s,d "
    "inv_freqs=r,1 positions:rope_pos_ids=b,s rope_products=fp32";

std::vector<std::string> rope_check(const std::string& bug, const std::string& layout,
                                    const std::vector<std::string>& cases) {
  std::vector<std::string> args = {
      "check",      (kKernels / "kv_cache_rope_decode.py").string() + ":kv_rope_decode",
      "--input",    "q=bf16[128,8]",
      "--input",    "k_active=bf16[128,4]",
      "--input",    "v_active=bf16[4,128]",
      "--input",    "k_prior=bf16[128,256]",
      "--input",    "v_prior=bf16[256,128]",
      "--input",    "mask=uint8[8,128]",
      "--input",    "inv_freqs=fp32[64,1]",
      "--input",    "rope_pos_ids=fp32[1,4]",
      "--param",    "bug=" + bug,
      "--layout",   layout,
      "--scale",    "0.08838834764831845",  // 1 / sqrt(128), as attention_tkg scales q
      "--contract", "attention_tkg",
      "--gen",      "trn2"};
  args.insert(args.end(), cases.begin(), cases.end());
  append_attention_tkg_options(args);
  return args;
}

// Three cases: position 0 (no turn), C (every cached key visible) and a drawn one.
TEST(FrontendKvCacheRope, ARightRopeDecodeKernelPasses) {
  const CliResult r = run_cli(rope_check("none", kLayout, {"--cases", "3"}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("contract attention_tkg+fuse_rope"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

void expect_fail(const std::string& bug, const std::vector<std::string>& cases) {
  const CliResult r = run_cli(rope_check(bug, kLayout, cases));
  EXPECT_EQ(r.exit_code, 1) << bug << "\n" << describe(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << bug << "\n" << r.out;
}

// Every pair turned backwards. The active tokens share one position (the test's broadcast of
// pos_id), so q against the active keys cannot show it, nor can the rank-one `peaked` inputs;
// the cached keys (not rotated) against q at a non-zero position do: the third case's.
TEST(FrontendKvCacheRope, RotateHalfTheOtherWayFails) {
  expect_fail("swapped", {"--dist", "overflow_logits", "--seed", "3"});
}

// Rotated by position + 1: at the first case's position 0 already.
TEST(FrontendKvCacheRope, APositionOffByOneFails) {
  expect_fail("position", {"--cases", "1"});
}

TEST(FrontendKvCacheRope, ARopeLayoutThatDoesNotStateItIsAUsageError) {
  const std::string base =
      "q=d,h*s k_active=d,s v_active=s,d k_prior=d,c v_prior=c,d mask=h*s,c out=h*s,d ";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {base + "inv_freqs=r,1", "inv_freqs (RoPE in the kernel) goes with positions"},
      {base + "rope_products=fp32", "rope_products states how the kernel rotates"},
      {base + "inv_freqs=d,1 positions:rope_pos_ids=b,s", "inv_freqs takes the axes r"},
  };
  for (const auto& [layout, why] : bad) {
    const CliResult r = run_cli(rope_check("none", layout, {"--cases", "1"}));
    EXPECT_EQ(r.exit_code, 2) << layout << "\n" << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ncv::cli_test
