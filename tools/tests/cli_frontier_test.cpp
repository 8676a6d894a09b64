// `ncverify frontier`: the largest seqlen that fits, per generation, exit codes and bad usage.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// [128, 64 * N] fp32 needs 256 * N bytes per partition: trn1 has 176 KiB usable (180224 bytes),
// so N fits up to 640 (multiples of 128) and 768 does not.
const std::string kGrowingBuffer = std::string(NCV_CLI_TEST_DATA_DIR) + "/growing_buffer.nkir";

TEST(CliFrontier, FileFrontierPerGeneration) {
  const CliResult r = run_cli(
      {"frontier", kGrowingBuffer, "--vary", "N", "--up-to", "4096", "--gen", "trn1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("frontiers").size(), 1u);
  const auto& f = j.at("frontiers")[0];
  EXPECT_EQ(f.at("status").get<std::string>(), "fits");
  EXPECT_EQ(f.at("largest_fitting").get<int64_t>(), 640);
  EXPECT_EQ(f.at("first_failing").get<int64_t>(), 768);
  EXPECT_NE(f.at("why_failing").get<std::string>().find("SBUF"), std::string::npos) << r.out;
}

TEST(CliFrontier, TextNamesEveryGenerationAndTheDeclaredDomain) {
  const CliResult r = run_cli({"frontier", kGrowingBuffer, "--vary", "N", "--up-to", "4096"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* gen : {"trn1: ", "trn2: ", "trn3: "}) {
    EXPECT_NE(r.out.find(gen), std::string::npos) << gen << r.out;
  }
  // 640 < the declared maximum 1024: the declared domain does not fit trn1.
  EXPECT_NE(r.out.find("fits up to N=640; 768 does not"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("INSIDE the declared domain"), std::string::npos) << r.out;
}

TEST(CliFrontier, RegisteredKernelWithFixedOptionsAndDHead) {
  const CliResult r = run_cli({"frontier", "sd_attention", "--param", "d_head=64", "--param",
                               "dtype=fp32", "--param", "mixed_precision=false", "--param",
                               "use_causal_mask=false", "--gen", "trn1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("frontiers").size(), 1u);
  const auto& f = j.at("frontiers")[0];
  EXPECT_EQ(f.at("fixed").at("d_head").get<int64_t>(), 64);
  EXPECT_EQ(f.at("status").get<std::string>(), "fits");
  // The declared domain (up to 4096) fits; the frontier lies beyond it.
  EXPECT_GE(f.at("largest_fitting").get<int64_t>(), 4096);
  ASSERT_TRUE(f.contains("first_failing"));
  EXPECT_EQ(f.at("first_failing").get<int64_t>(), f.at("largest_fitting").get<int64_t>() + 128);
}

// nki-library's attention_cte in one KV section at d = 128: 18 bytes per key plus ~17 KiB per
// partition, growing in steps of a 2048-key large tile (research28 §2.5): trn2 stops at 10240
// (the source's single-section limit), trn3 at 12288; trn1 is skipped (NeuronCore-v3 only).
TEST(CliFrontier, AttentionCteLargestSeqlenPerGeneration) {
  const CliResult r =
      run_cli({"frontier", "attention_cte", "--param", "d_head=128", "--param", "causal_mask=true",
               "--param", "sliding_window=off", "--param", "sink=off", "--param", "dtype=bf16",
               "--param", "lnc=1", "--param", "scale=1.0", "--gen", "all", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("frontiers").size(), 2u) << r.out;
  std::map<std::string, int64_t> largest;
  for (const auto& f : j.at("frontiers")) {
    largest[f.at("gen").get<std::string>()] = f.at("largest_fitting").get<int64_t>();
  }
  EXPECT_EQ(largest.count("trn1"), 0u) << r.out;
  EXPECT_EQ(largest["trn2"], 10240) << r.out;
  EXPECT_EQ(largest["trn3"], 12288) << r.out;
}

// At the first seqlen that does not fit, the JSON names what fills SBUF: the live buffers,
// largest first, whose bytes add up to a peak over the capacity.
TEST(CliFrontier, JsonSaysWhatFillsMemoryAtTheFirstFailingValue) {
  const CliResult r = run_cli({"frontier", "sd_attention", "--param", "d_head=64", "--param",
                               "dtype=fp32", "--param", "mixed_precision=true", "--param",
                               "use_causal_mask=false", "--gen", "trn1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& f = j.at("frontiers").at(0);
  ASSERT_TRUE(f.contains("first_failing")) << r.out;
  const auto& sbuf = f.at("memory_at_first_failing").at("sbuf");
  EXPECT_EQ(sbuf.at("capacity").get<int64_t>(), 180224);
  EXPECT_FALSE(sbuf.at("fits").get<bool>());
  const int64_t peak = sbuf.at("peak_bytes").get<int64_t>();
  EXPECT_GT(peak, 180224);
  const auto& live = sbuf.at("live");
  ASSERT_GE(live.size(), 2u);
  EXPECT_EQ(live[0].at("name").get<std::string>(), "qk_res_buf");
  int64_t sum = 0, prev = live[0].at("bytes_per_partition").get<int64_t>();
  for (const auto& b : live) {
    const int64_t bytes = b.at("bytes_per_partition").get<int64_t>();
    EXPECT_LE(bytes, prev) << "not largest first: " << r.out;
    prev = bytes;
    sum += bytes;
  }
  EXPECT_EQ(sum, peak);
  // The PSUM table is there too, within its 16 KiB.
  const auto& psum = f.at("memory_at_first_failing").at("psum");
  EXPECT_EQ(psum.at("capacity").get<int64_t>(), 16384);
  EXPECT_FALSE(psum.at("live").empty());
}

TEST(CliFrontier, TextListsTheLiveBuffersAtTheFirstFailingValue) {
  const CliResult r = run_cli({"frontier", "sd_attention", "--param", "d_head=64", "--param",
                               "dtype=fp32", "--param", "mixed_precision=true", "--param",
                               "use_causal_mask=false", "--gen", "trn1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("what fills memory at seqlen="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SBUF peak "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of 180224 bytes per partition"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" over, in loop "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qk_res_buf"), std::string::npos) << r.out;
  // The growing buffer's file: one buffer of 256 * 768 bytes at N = 768.
  const CliResult g =
      run_cli({"frontier", kGrowingBuffer, "--vary", "N", "--up-to", "4096", "--gen", "trn1"});
  ASSERT_EQ(g.exit_code, 0) << g.out << g.err;
  EXPECT_NE(g.out.find("SBUF peak 196608 of 180224 bytes per partition (109.1%, 16384 over"),
            std::string::npos)
      << g.out;
}

TEST(CliFrontier, UnfixedOptionsAreAllTried) {
  const CliResult r = run_cli({"frontier", "sd_attention", "--param", "d_head=128", "--param",
                               "dtype=bf16", "--gen", "trn2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // use_causal_mask x mixed_precision.
  EXPECT_EQ(nlohmann::json::parse(r.out).at("frontiers").size(), 4u);
}

TEST(CliFrontier, BadUsageExitsTwo) {
  EXPECT_EQ(run_cli({"frontier", "sd_attention", "--vary", "nope"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frontier", "sd_attention", "--param", "d_head=500"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frontier", "sd_attention", "--param", "seqlen=256"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frontier", "sd_attention", "--param", "dtype=fp64"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frontier", "sd_attention", "--gen", "trn9"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frontier", "no_such_kernel"}).exit_code, 2);
  const CliResult r = run_cli({"frontier", "sd_attention", "--param", "d_head=500"});
  EXPECT_NE(r.err.find("outside its domain"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ncv::cli_test
