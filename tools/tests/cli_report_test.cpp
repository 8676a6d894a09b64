// `ncverify report --html DIR` end to end on one kernel family at small shapes: every section of
// the report's JSON (tools/report_page/README.md) is filled, the trace files are Perfetto
// JSON, other files in DIR survive, and a DIR that is a regular file is refused before any work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

TEST(CliReport, HtmlFillsEverySectionWritesTracesAndKeepsOtherFiles) {
  const fs::path dir = temp_dir() / "report_html";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "keep.txt") << "the user's\n";
  // One rewrite (its links, speed-ups) at a small seqlen, the sweep capped at 256: the cheapest
  // link of the registry (sd_attention_step5's equiv takes a few seconds).
  const CliResult r =
      run_cli({"report", "--kernel", "sd_attention_step5", "--seqlen", "128", "--cases", "1",
               "--sweep-max-seqlen", "256", "--json", "--html", dir.string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(r.exit_code, j.at("pass").get<bool>() ? 0 : 1);
  EXPECT_NE(r.err.find("page: " + (dir / "index.html").string()), std::string::npos) << r.err;
  // report.json is the object printed.
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "report.json")), j);
  EXPECT_TRUE(fs::is_regular_file(dir / "index.html"));
  EXPECT_EQ(read_file(dir / "keep.txt"), "the user's\n") << "report must not touch other files";
  EXPECT_EQ(j.at("command").get<std::string>().rfind("ncverify report", 0), 0u);
  EXPECT_FALSE(j.at("generated").get<std::string>().empty());
  for (const char* section : {"checks", "links", "proofs", "latency", "footprint", "timelines"}) {
    EXPECT_FALSE(j.at(section).empty()) << section;
  }
  int rewrites = 0;
  for (const auto& row : j.at("checks")) {
    EXPECT_EQ(row.at("family"), "sd_attention");
    EXPECT_GT(row.at("latency_us").get<double>(), 0) << row.dump();
    EXPECT_EQ(row.at("normalized_errors").size(), row.at("cases").size());
    EXPECT_EQ(row.at("replay").empty(), row.at("pass").get<bool>());
    if (row.at("rewrites") == "") {
      EXPECT_TRUE(row.at("predecessor").is_null());
      EXPECT_TRUE(row.at("speedup").is_null());
      continue;
    }
    ++rewrites;
    EXPECT_EQ(row.at("predecessor"), row.at("rewrites"));
    EXPECT_DOUBLE_EQ(
        row.at("speedup").get<double>(),
        row.at("predecessor_latency_us").get<double>() / row.at("latency_us").get<double>());
  }
  EXPECT_EQ(rewrites, 2) << "none and causal";
  EXPECT_EQ(j.at("links").size(), 2u);
  for (const auto& row : j.at("links")) {
    EXPECT_DOUBLE_EQ(
        row.at("speedup").get<double>(),
        row.at("predecessor_latency_us").get<double>() / row.at("latency_us").get<double>())
        << row.dump();
  }
  for (const auto& row : j.at("proofs")) {
    ASSERT_EQ(row.at("frontiers").size(), 3u) << "every generation";
    for (const auto& f : row.at("frontiers")) {
      const std::string status = f.at("status");
      EXPECT_TRUE(status == "fits_below" || status == "fits_everywhere" ||
                  status == "fits_nowhere" || status == "unknown" || status == "skipped")
          << f.dump();
    }
  }
  // One latency and one footprint series per kernel and generation (all three here).
  EXPECT_EQ(j.at("latency").size(), 3 * j.at("proofs").size());
  EXPECT_EQ(j.at("footprint").size(), 3 * j.at("proofs").size());
  for (const auto& s : j.at("latency")) {
    EXPECT_FALSE(s.at("points").empty()) << s.dump();
    for (const auto& p : s.at("points")) {
      EXPECT_LE(p.at("seqlen").get<int64_t>(), 256);
      EXPECT_GT(p.at("latency_us").get<double>(), 0);
    }
  }
  for (const auto& s : j.at("footprint")) {
    EXPECT_GT(s.at("sbuf_capacity_bytes").get<int64_t>(), 0);
    EXPECT_FALSE(s.at("points").empty()) << s.dump();
  }
  for (const auto& t : j.at("timelines")) {
    EXPECT_FALSE(t.at("tracks").empty()) << t.dump();
    EXPECT_FALSE(t.at("intervals").empty());
    EXPECT_LE(t.at("intervals").size(), 2000u);
    const fs::path trace = dir / t.at("trace_file").get<std::string>();
    const auto events = nlohmann::json::parse(read_file(trace)).at("traceEvents");
    EXPECT_FALSE(events.empty()) << trace;
  }
}

TEST(CliReport, HtmlRefusesARegularFileBeforeAnyWork) {
  const fs::path file = write_temp("not_a_dir.html", "mine\n");
  const CliResult r = run_cli({"report", "--family", "naive_attention", "--html", file.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(read_file(file), "mine\n");
}

// A DIR already holding a file the report writes (index.html, report.json, a trace) is refused
// before any work unless --force; the refusal names the file and leaves it as it was.
TEST(CliReport, HtmlNeverReplacesAnEarlierFileWithoutForce) {
  const fs::path dir = temp_dir() / "report_html_existing";
  fs::remove_all(dir);
  fs::create_directories(dir / "traces");
  for (const char* name : {"index.html", "report.json", "traces/naive_attention-trn1.json"}) {
    const fs::path mine = dir / name;
    std::ofstream(mine) << "mine\n";
    const CliResult r = run_cli({"report", "--family", "naive_attention", "--html", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(mine.string() + " exists"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(mine), "mine\n");
    fs::remove(mine);
  }
}

}  // namespace
}  // namespace ncv::cli_test
