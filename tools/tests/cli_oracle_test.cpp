// `ncverify oracle`: a good run (exact and fast), the --out/--force rule, and exit 2 with the
// JSON path of the offending field for each kind of bad spec.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace {

using nlohmann::json;

using namespace ncv::cli_test;  // NOLINT: the shared CLI runner

// The issue's example shape: B=1, H=2, KVH=1, Sq=2, Skv=3, d=2, sliding window 2, sinks.
json example_spec() {
  return json::parse(R"({
    "batch": 1, "heads": 2, "kv_heads": 1, "seqlen_q": 2, "seqlen_kv": 3, "d_head": 2,
    "scale": 0.5, "mask": {"kind": "sliding_window", "window": 2}, "sink": [0.0, -1.5],
    "q": [[[[0.5, -1.25], [1.0, 2.0]], [[0.0, 0.25], [-2.0, 1.5]]]],
    "k": [[[[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]]]],
    "v": [[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]})");
}

CliResult run_spec(const json& spec, std::vector<std::string> extra = {}) {
  const fs::path path = write_temp("spec.json", spec.dump());
  std::vector<std::string> args = {"oracle", "--spec", path.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

int significant_digits(const std::string& s) {
  int n = 0;
  bool leading = true;
  for (char c : s) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

// Independent double computation of one output row of the example (sliding window 2, Sq=2,
// Skv=3: query i sees keys i and i + 1).
double example_value(const json& spec, int h, int i, int c) {
  const auto& q = spec["q"][0][h][i];
  double m = spec["sink"][h].get<double>(), s[2];
  for (int n = 0; n < 2; ++n) {
    const auto& k = spec["k"][0][0][i + n];
    s[n] =
        0.5 * (q[0].get<double>() * k[0].get<double>() + q[1].get<double>() * k[1].get<double>());
    m = std::max(m, s[n]);
  }
  double l = std::exp(spec["sink"][h].get<double>() - m), acc = 0;
  for (int n = 0; n < 2; ++n) {
    l += std::exp(s[n] - m);
    acc += std::exp(s[n] - m) * spec["v"][0][0][i + n][c].get<double>();
  }
  return acc / l;
}

TEST(CliOracle, ExactRunWritesThirtyPlusDigits) {
  const json spec = example_spec();
  const CliResult r = run_spec(spec);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  EXPECT_EQ(out["oracle"], "exact");
  ASSERT_EQ(out["out"].size(), 1u);
  ASSERT_EQ(out["out"][0].size(), 2u);
  ASSERT_EQ(out["lse"][0].size(), 2u);
  for (int h = 0; h < 2; ++h) {
    ASSERT_EQ(out["out"][0][h].size(), 2u);
    ASSERT_EQ(out["lse"][0][h].size(), 2u);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(out["out"][0][h][i].size(), 2u);
      for (int c = 0; c < 2; ++c) {
        const std::string v = out["out"][0][h][i][c];
        EXPECT_GE(significant_digits(v), 30) << v;
        EXPECT_NEAR(std::stod(v), example_value(spec, h, i, c), 1e-14);
      }
    }
  }
}

TEST(CliOracle, FastRunSaysSo) {
  const CliResult r = run_spec(example_spec(), {"--fast"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  EXPECT_EQ(out["oracle"], "fast");
  EXPECT_EQ(out["significant_digits"], 17);
  const json exact = json::parse(run_spec(example_spec()).out);
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 2; ++i) {
      for (int c = 0; c < 2; ++c) {
        EXPECT_NEAR(std::stod(out["out"][0][h][i][c].get<std::string>()),
                    std::stod(exact["out"][0][h][i][c].get<std::string>()), 1e-15);
      }
    }
  }
}

TEST(CliOracle, NanInputGivesNanRowNotACrash) {
  json spec = example_spec();
  spec["k"][0][0][2][0] = "nan";  // key 2: visible to query 1 only
  const CliResult r = run_spec(spec);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  EXPECT_EQ(out["out"][0][0][1][0], "nan");
  EXPECT_EQ(out["lse"][0][0][1], "nan");
  EXPECT_NE(out["out"][0][0][0][0], "nan");
}

TEST(CliOracle, FullyMaskedRow) {
  json spec = example_spec();
  spec["mask"] = {{"kind", "position_ids"}, {"pos", {{-1, 2}}}};
  spec.erase("sink");
  const CliResult r = run_spec(spec);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  EXPECT_EQ(out["out"][0][0][0][0], "0");
  EXPECT_EQ(out["lse"][0][0][0], "-inf");
}

TEST(CliOracle, KvCacheMaskHidesStaleEntriesAndKeepsTheActiveTailCausal) {
  json spec = example_spec();  // one cached key (0), two active tokens (keys 1 and 2)
  spec["mask"] = {{"kind", "kv_cache"}, {"cache_begin", {{0, 0}}}, {"cache_end", {{0, 1}}}};
  spec.erase("sink");
  const CliResult r = run_spec(spec);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json out = json::parse(r.out);
  // Query 0 sees only its own key (1): the cached key is stale for it, key 2 is in its future.
  EXPECT_EQ(std::stod(out["out"][0][0][0][0].get<std::string>()), 3.0);
  EXPECT_EQ(std::stod(out["out"][0][0][0][1].get<std::string>()), 4.0);
  spec["mask"]["cache_end"] = {{0, 2}};  // beyond the one cached key
  const CliResult bad = run_spec(spec);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("mask.cache_end[0][1]"), std::string::npos) << bad.err;
}

TEST(CliOracle, PagedCacheRopeAndExplicitMask) {
  json spec = example_spec();
  spec["mask"] = {{"kind", "explicit"}, {"allowed", {{true, false, true}, {false, true, true}}}};
  spec["rope"] = {{"theta", 500000.0}, {"pos_q", {{7, 9}}}, {"pos_k", {{3, 8, 9}}}};
  spec["input_dtype"] = "bf16";
  const CliResult plain = run_spec(spec);
  ASSERT_EQ(plain.exit_code, 0) << describe(plain);
  // The same keys in a paged cache of 3 blocks of 1 row: logical key j lives in block 2 - j.
  spec["block_table"] = {{"block_size", 1}, {"num_blocks", 3}, {"table", {{2, 1, 0}}}};
  for (const char* t : {"k", "v"}) {
    json rows = spec[t][0][0];
    spec[t] = json::array();
    for (int blk = 0; blk < 3; ++blk) spec[t].push_back({{rows[2 - blk]}});
  }
  const CliResult paged = run_spec(spec);
  ASSERT_EQ(paged.exit_code, 0) << describe(paged);
  EXPECT_EQ(json::parse(paged.out), json::parse(plain.out));
}

TEST(CliOracle, OutFileIsNotOverwrittenWithoutForce) {
  const fs::path out = temp_dir() / "out.json";
  fs::remove(out);
  CliResult r = run_spec(example_spec(), {"--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(json::parse(read_file(out))["oracle"], "exact");
  r = run_spec(example_spec(), {"--out", out.string(), "--fast"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << describe(r);
  EXPECT_EQ(json::parse(read_file(out))["oracle"], "exact");
  r = run_spec(example_spec(), {"--out", out.string(), "--fast", "--force"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(json::parse(read_file(out))["oracle"], "fast");
}

struct BadCase {
  const char* name;
  std::function<void(json&)> edit;
  const char* path;  // must appear in stderr as "PATH: "
};

TEST(CliOracle, BadSpecsExitTwoWithTheJsonPath) {
  const std::vector<BadCase> cases = {
      {"missing field", [](json& j) { j.erase("d_head"); }, "d_head"},
      {"unknown field", [](json& j) { j["seqlen"] = 3; }, "seqlen"},
      {"non-integer size", [](json& j) { j["heads"] = 2.5; }, "heads"},
      {"string size", [](json& j) { j["batch"] = "1"; }, "batch"},
      {"gqa",
       [](json& j) {
         j["kv_heads"] = 3;
         j["heads"] = 4;
       },
       "kv_heads"},
      {"zero size", [](json& j) { j["seqlen_q"] = 0; }, "seqlen_q"},
      {"scale not a number", [](json& j) { j["scale"] = "0.5"; }, "scale"},
      {"short q row", [](json& j) { j["q"][0][1][0] = {1.0}; }, "q[0][1][0]"},
      {"q too few heads", [](json& j) { j["q"][0].erase(1); }, "q[0]"},
      {"k not an array", [](json& j) { j["k"] = 3; }, "k"},
      {"missing v", [](json& j) { j.erase("v"); }, "v"},
      {"non-numeric value", [](json& j) { j["v"][0][0][2][1] = "x"; }, "v[0][0][2][1]"},
      {"null value", [](json& j) { j["q"][0][0][1][0] = nullptr; }, "q[0][0][1][0]"},
      {"unknown mask kind",
       [](json& j) {
         j["mask"] = {{"kind", "diagonal"}};
       },
       "mask.kind"},
      {"mask without kind", [](json& j) { j["mask"] = json::object(); }, "mask.kind"},
      {"window zero", [](json& j) { j["mask"]["window"] = 0; }, "mask.window"},
      {"mask extra field", [](json& j) { j["mask"]["windw"] = 1; }, "mask.windw"},
      {"explicit shape",
       [](json& j) {
         j["mask"] = {{"kind", "explicit"}, {"allowed", {{true, false, true}}}};
       },
       "mask.allowed"},
      {"explicit not bool",
       [](json& j) {
         j["mask"] = {{"kind", "explicit"}, {"allowed", {{true, 1, true}, {true, true, true}}}};
       },
       "mask.allowed[0][1]"},
      {"pos shape",
       [](json& j) {
         j["mask"] = {{"kind", "position_ids"}, {"pos", {{0}}}};
       },
       "mask.pos[0]"},
      {"sink length", [](json& j) { j["sink"] = {0.0}; }, "sink"},
      {"sink value", [](json& j) { j["sink"][1] = "big"; }, "sink[1]"},
      {"rope pos_k",
       [](json& j) {
         j["rope"] = {{"pos_q", {{0, 1}}}, {"pos_k", {{0, 1}}}};
       },
       "rope.pos_k[0]"},
      {"rope theta",
       [](json& j) {
         j["rope"] = {{"theta", -1.0}, {"pos_q", {{0, 1}}}, {"pos_k", {{0, 1, 2}}}};
       },
       "rope.theta"},
      {"block size",
       [](json& j) {
         j["block_table"] = {{"block_size", 2}, {"num_blocks", 2}, {"table", {{0}}}};
       },
       "block_table.block_size"},
      {"block entry",
       [](json& j) {
         j["block_table"] = {{"block_size", 3}, {"num_blocks", 1}, {"table", {{1}}}};
       },
       "block_table.table[0][0]"},
      {"dtype name", [](json& j) { j["input_dtype"] = "bf17"; }, "input_dtype"},
      {"not representable",
       [](json& j) {
         j["input_dtype"] = "bf16";
         j["q"][0][0][0][1] = 0.1;
       },
       "q[0][0][0][1]"},
  };
  for (const BadCase& c : cases) {
    json spec = example_spec();
    c.edit(spec);
    const CliResult r = run_spec(spec);
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << describe(r);
    EXPECT_NE(r.err.find(std::string(c.path) + ": "), std::string::npos) << c.name << "\n"
                                                                         << describe(r);
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
}

TEST(CliOracle, BadFilesAndJson) {
  CliResult r = run_cli({"oracle", "--spec", (temp_dir() / "no_such.json").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  r = run_cli({"oracle", "--spec", write_temp("broken.json", "{\"batch\": 1,").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("broken.json: not one valid JSON document (byte offset 13)"),
            std::string::npos)
      << describe(r);
  std::string text = example_spec().dump();
  text.replace(text.find("0.5"), 3, "1e999");  // overflows double while parsing
  r = run_cli({"oracle", "--spec", write_temp("overflow.json", text).string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("overflow.json: not valid JSON: number overflow parsing '1e999'"),
            std::string::npos)
      << describe(r);
  r = run_cli({"oracle", "--spec", write_temp("array.json", "[1, 2]").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  r = run_cli({"oracle"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
}

}  // namespace
