// `ncverify report --html DIR` end to end on one kernel family at small shapes: every section of
// the report's JSON (tools/report_page/README.md) is filled, the trace files are gzip-compressed
// Perfetto JSON, a kernel over the timeline's instance cap is traced at a smaller shape that the
// JSON names, the output does not depend on the worker count, other files in DIR survive, and a
// DIR that is a regular file is refused before any work.
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// The text of a gzip file (empty when it is not one).
std::string gunzip_file(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Whether the file starts with gzip's magic bytes (gzread also passes plain files through).
bool is_gzip(const fs::path& path) {
  const std::string head = read_file(path).substr(0, 2);
  return head == "\x1f\x8b";
}

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
    ASSERT_TRUE(is_gzip(trace)) << trace;
    const auto events = nlohmann::json::parse(gunzip_file(trace)).at("traceEvents");
    EXPECT_FALSE(events.empty()) << trace;
  }
}

// The trace policy on a small kernel: every trace is gzip-compressed Perfetto JSON named .json.gz;
// a kernel whose run at the report shape records more instances than --timeline-max-instances
// gets its timeline and trace at the largest smaller sweep seqlen under the cap, and the
// timeline names both shapes and says why, while the check rows stay at the report shape.
TEST(CliReport, TraceIsGzipAndAKernelOverTheCapIsTracedAtASmallerShape) {
  const fs::path dir = temp_dir() / "report_trace_policy";
  fs::remove_all(dir);
  // sd_attention: 21 instances at seqlen 128, 54 at 256 (no rewrite: no equiv to wait for).
  const std::vector<std::string> base{
      "report", "--kernel",           "sd_attention", "--seqlen", "256",    "--cases",
      "1",      "--sweep-max-seqlen", "256",          "--json",   "--html", dir.string()};
  std::vector<std::string> capped = base;
  capped.insert(capped.end(), {"--timeline-max-instances", "30", "--force"});
  const CliResult r = run_cli(capped);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("timelines").size(), 1u);
  const auto& t = j.at("timelines").at(0);
  EXPECT_EQ(t.at("report_params").at("seqlen"), 256) << t.dump();
  EXPECT_EQ(t.at("params").at("seqlen"), 128) << t.dump();
  EXPECT_LE(t.at("instances").get<int64_t>(), 30);
  const std::string note = t.at("shape_note");
  EXPECT_NE(note.find("over the timeline's cap of 30"), std::string::npos) << note;
  EXPECT_NE(note.find("seqlen 128"), std::string::npos) << note;
  for (const auto& row : j.at("checks")) EXPECT_EQ(row.at("params").at("seqlen"), 256);
  const std::string file = t.at("trace_file");
  EXPECT_EQ(file, "traces/sd_attention-trn1.json.gz");
  ASSERT_TRUE(is_gzip(dir / file));
  const auto trace = nlohmann::json::parse(gunzip_file(dir / file));
  int slices = 0;
  for (const auto& e : trace.at("traceEvents")) slices += e.at("ph") == "X";
  EXPECT_EQ(slices, t.at("instances").get<int>()) << "one slice per traced instance";
  // Under the default cap the same kernel is traced at the report shape, with no note; and one
  // worker gives the same rows as one per core.
  std::vector<std::string> plain = base;
  plain.insert(plain.end(), {"--jobs", "1", "--force"});
  const CliResult r1 = run_cli(plain);
  ASSERT_TRUE(r1.exit_code == 0 || r1.exit_code == 1) << r1.err;
  const auto j1 = nlohmann::json::parse(r1.out);
  const auto& t1 = j1.at("timelines").at(0);
  EXPECT_EQ(t1.at("params").at("seqlen"), 256);
  EXPECT_FALSE(t1.contains("shape_note")) << t1.dump();
  EXPECT_FALSE(t1.contains("report_params"));
  ASSERT_EQ(j1.at("checks").size(), j.at("checks").size());
  for (size_t i = 0; i < j.at("checks").size(); ++i) {
    const auto& a = j.at("checks").at(i);
    const auto& b = j1.at("checks").at(i);
    EXPECT_EQ(a.at("mask"), b.at("mask"));
    EXPECT_EQ(a.at("normalized_errors"), b.at("normalized_errors"));
    EXPECT_EQ(a.at("latency_us"), b.at("latency_us"));
  }
  ASSERT_EQ(j1.at("proofs").size(), 1u);
  EXPECT_EQ(j1.at("proofs").at(0).at("proved"), j.at("proofs").at(0).at("proved"));
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
  for (const char* name : {"index.html", "report.json", "traces/naive_attention-trn1.json.gz"}) {
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
