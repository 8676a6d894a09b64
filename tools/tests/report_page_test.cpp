// The HTML report page (tools/report_html.*, tools/report_page/) rendered from a hand-written
// report (data/report_fixture.json: two families, a rewrite chain naive_attention ->
// sd_attention -> sd_attention_allocated, one failing check with its replay line, every section)
// and opened in headless Chromium (label `report`): no console error or uncaught exception, every
// chart drawn (data-rendered, datasets, points and inked pixels on its canvas), every table row,
// the URL-hash filter, a screenshot. The detector is shown to catch both kinds of error on broken
// reports. Without a browser the browser tests are skipped, saying which package to install.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tools/cli_common.h"
#include "tools/report_html.h"
#include "tools/tests/headless_browser.h"

namespace ncv::cli {
namespace {

namespace fs = std::filesystem;
using browser_test::BrowserRun;
using browser_test::elements;
using browser_test::read_file;
using Json = nlohmann::json;

Json fixture() {
  return Json::parse(read_file(NCV_REPORT_FIXTURE));
}

// This test's output folder in the build tree (kept: the page and its screenshot can be opened).
fs::path out_dir(const std::string& name) {
  const fs::path dir = fs::path(NCV_REPORT_TEST_OUT) / name;
  fs::create_directories(dir);
  return dir;
}

std::string file_url(const fs::path& page, const std::string& hash) {
  return "file://" + fs::absolute(page).string() + (hash.empty() ? "" : "#" + hash);
}

// What the page should show, derived from the report here rather than read back from the page.
std::string family_of(const Json& row) {
  return row.value("family", "(no family)");
}

std::string verdict_of(const std::string& kind, const Json& row) {
  if (kind == "check") return row.at("pass").get<bool>() ? "pass" : "fail";
  if (kind == "equiv") {
    if (row.at("pass").get<bool>()) return "pass";
    return row.value("status", "") == "UNKNOWN" ? "unknown" : "fail";
  }
  if (row.value("counterexample", 0) > 0) return "fail";
  return row.value("unknown", 0) > 0 ? "unknown" : "pass";
}

// Rows of the verdict table (one per check, link and proof) matching a family ("" any) and a
// verdict ("" any).
int expected_rows(const Json& report, const std::string& family, const std::string& verdict) {
  int n = 0;
  for (const auto& [kind, key] :
       {std::pair{"check", "checks"}, {"equiv", "links"}, {"prove", "proofs"}}) {
    for (const Json& row : report.at(key)) {
      if ((family.empty() || family_of(row) == family) &&
          (verdict.empty() || verdict_of(kind, row) == verdict)) {
        ++n;
      }
    }
  }
  return n;
}

// The chart canvases the page must draw for `report` (tools/report_page/README.md names them).
std::set<std::string> expected_charts(const Json& report) {
  std::set<std::string> ids{"chart-error-histogram"};
  for (const Json& s : report.at("latency")) ids.insert("chart-latency-" + family_of(s));
  for (const Json& r : report.at("checks")) {
    if (r.value("speedup", Json()).is_number()) ids.insert("chart-speedup-" + family_of(r));
  }
  for (const Json& s : report.at("footprint")) {
    ids.insert("chart-sbuf-" + s.at("kernel").get<std::string>());
    ids.insert("chart-psum-" + s.at("kernel").get<std::string>());
  }
  for (const Json& t : report.at("timelines")) {
    if (t.contains("error") || t.at("tracks").empty()) continue;  // a note says why
    ids.insert("chart-timeline-" + t.at("kernel").get<std::string>() + "-" +
               t.at("gen").get<std::string>());
  }
  return ids;
}

// The errors of a page run: those the page's probe recorded (uncaught exceptions and
// console.error, tools/report_page/error_probe.js), uncaught errors in the browser's console log,
// a script that never finished, a browser that failed.
std::vector<std::string> page_errors(const BrowserRun& r) {
  std::vector<std::string> out;
  if (r.exit_code != 0) out.push_back("the browser exited " + std::to_string(r.exit_code));
  const auto html = elements(r.dom, "html");
  if (html.empty()) {
    out.push_back("no <html> element in the dumped DOM");
  } else if (html.front().count("data-page-errors") == 0) {
    out.push_back("the error probe did not run (no data-page-errors)");
  } else if (html.front().at("data-page-errors") != "0") {
    std::smatch m;
    static const std::regex box(R"re(<div id="page-errors"[^>]*>([^<]*)</div>)re");
    out.push_back("the page recorded " + html.front().at("data-page-errors") + " error(s): " +
                  (std::regex_search(r.dom, m, box) ? m[1].str() : std::string("?")));
  }
  std::istringstream log(r.log);
  for (std::string line; std::getline(log, line);) {
    if (line.find("CONSOLE") != std::string::npos && line.find("Uncaught") != std::string::npos) {
      out.push_back("browser console: " + line);
    }
  }
  if (r.dom.find("data-report-ready=\"true\"") == std::string::npos) {
    out.push_back("the page's script did not finish (no data-report-ready)");
  }
  return out;
}

// Problems with the charts: an expected chart missing, any chart canvas not drawn, drawn without
// data or without a pixel of ink.
std::vector<std::string> chart_problems(const std::string& dom, const std::set<std::string>& ids) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& c : elements(dom, "canvas")) {
    const std::string id = c.count("id") ? c.at("id") : "(no id)";
    seen.insert(id);
    auto number = [&](const char* key) { return c.count(key) ? std::stol("0" + c.at(key)) : 0L; };
    if (c.count("data-chart") == 0) out.push_back(id + ": no data-chart kind");
    if (!c.count("data-rendered") || c.at("data-rendered") != "true") {
      out.push_back(id + ": not drawn");
      continue;
    }
    if (number("data-datasets") <= 0) out.push_back(id + ": no dataset");
    if (number("data-points") <= 0) out.push_back(id + ": no data point");
    if (number("data-inked") <= 0) out.push_back(id + ": a blank canvas");
  }
  for (const std::string& id : ids) {
    if (!seen.count(id)) out.push_back(id + ": missing");
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += "  " + l + "\n";
  return s;
}

// Table rows of the verdict table that are shown.
std::vector<std::map<std::string, std::string>> visible_rows(const std::string& dom) {
  std::vector<std::map<std::string, std::string>> out;
  for (auto& tr : elements(dom, "tr")) {
    if (tr.count("class") && tr.at("class").rfind("verdict-row", 0) == 0 && !tr.count("hidden")) {
      out.push_back(tr);
    }
  }
  return out;
}

// Width and height of a PNG from its IHDR chunk; {0, 0} when the file is not a PNG.
std::pair<uint32_t, uint32_t> png_size(const std::string& bytes) {
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

#define NCV_REQUIRE_BROWSER(browser)                                                               \
  const std::string browser = browser_test::find_browser();                                        \
  if (browser.empty()) {                                                                           \
    GTEST_SKIP() << "no chromium: install Debian package chromium (ci/setup installs it), or set " \
                    "NCV_CHROMIUM to a Chromium binary";                                           \
  }

// ---------------------------------------------------------------- the page file (no browser)

TEST(ReportHtml, EmbedsTheReportSoThatNoStringInItClosesTheScript) {
  Json report = fixture();
  report["command"] = "ncverify report </script><script>window.pwned = 1</script> & <!-- x";
  const std::string html = render_html_report(report);
  // The probe, the data, Chart.js and the page's script: four elements, four ends.
  size_t ends = 0;
  for (size_t at = html.find("</script"); at != std::string::npos;
       at = html.find("</script", at + 1)) {
    ++ends;
  }
  EXPECT_EQ(ends, 4u);
  EXPECT_EQ(html.find("window.pwned = 1</script>"), std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t begin = html.find(open);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = html.find("</script>", begin);
  EXPECT_EQ(Json::parse(html.substr(begin + open.size(), end - begin - open.size())), report);
}

TEST(ReportHtml, FetchesNothing) {
  const std::string html = render_html_report(fixture());
  for (const char* ref : {" src=", "<link", "@import", "url("}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
  EXPECT_NE(html.find("Chart.js v3.9.1"), std::string::npos) << "Chart.js's banner is kept";
}

TEST(ReportHtml, AFolderThatCannotBeWrittenIsAUsageError) {
  const fs::path dir = out_dir("unwritable");
  const fs::path file = dir / "a_file";
  std::ofstream(file) << "x";
  try {
    write_html_report(fixture(), file / "report");
    FAIL() << "wrote into a folder under a regular file";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message.find((file / "report").string()), std::string::npos) << e.message;
  }
  const fs::path blocked = dir / "blocked";
  fs::create_directories(blocked / "index.html");  // a folder where the page should go
  EXPECT_THROW(write_html_report(fixture(), blocked), UsageError);
  // A page from an earlier run is replaced.
  const fs::path again = dir / "again";
  write_html_report(fixture(), again);
  write_html_report(fixture(), again);
  EXPECT_NE(read_file(again / "index.html").find("report-data"), std::string::npos);
}

// ---------------------------------------------------------------- in the browser

TEST(ReportPageBrowser, FixtureDrawsEveryChartAndRowWithoutAnError) {
  NCV_REQUIRE_BROWSER(browser);
  const Json report = fixture();
  const fs::path dir = out_dir("fixture");
  write_html_report(report, dir);
  const fs::path png = fs::path(NCV_REPORT_TEST_OUT) / "report_page_screenshot.png";
  fs::remove(png);
  const BrowserRun r = browser_test::open_page(browser, file_url(dir / "index.html", "expand=all"),
                                               out_dir("run_fixture"), png);
  ASSERT_EQ(page_errors(r), std::vector<std::string>{}) << joined(page_errors(r)) << r.log;

  const std::set<std::string> ids = expected_charts(report);
  EXPECT_EQ(ids.size(), 16u) << "the fixture covers every chart kind";
  EXPECT_EQ(chart_problems(r.dom, ids), std::vector<std::string>{})
      << joined(chart_problems(r.dom, ids));
  EXPECT_NE(r.dom.find("data-charts-total=\"" + std::to_string(ids.size()) + "\""),
            std::string::npos);

  EXPECT_EQ(visible_rows(r.dom).size(), static_cast<size_t>(expected_rows(report, "", "")));
  // The failing check's replay line, copyable as it is.
  const std::string replay = report.at("checks").at(2).at("replay").at(0);
  EXPECT_NE(r.dom.find("<pre class=\"replay-line\">" + replay + "</pre>"), std::string::npos);
  // A frontier table per proved kernel; markup in the data stays text.
  EXPECT_EQ(elements(r.dom, "table class=\"frontier\"").size(), report.at("proofs").size());
  EXPECT_NE(r.dom.find("&lt;/script&gt;&lt;b&gt;markup in data stays text"), std::string::npos);
  EXPECT_EQ(r.dom.find("<b>markup"), std::string::npos);
  // Seqlens a sweep skipped are listed with their reason.
  EXPECT_NE(r.dom.find("attention_tkg \u00b7 trn3 \u00b7 seqlen=16384: model error"),
            std::string::npos);
  EXPECT_EQ(elements(r.dom, "ul class=\"skipped\"").size(), 2u);
  // A timeline whose run failed is a note with the error, not an empty chart.
  EXPECT_NE(
      r.dom.find("No timeline on trn3: model error: the trace-only run exceeded --max-steps."),
      std::string::npos);
  // The Perfetto trace link, relative to the page, said to be gzip-compressed; a timeline made at
  // a smaller shape than the report's says so with both shapes.
  EXPECT_NE(r.dom.find("<a href=\"traces/attention_tkg-trn2.json.gz\">"), std::string::npos);
  EXPECT_NE(r.dom.find("(gzip-compressed JSON at seqlen=1024 batch=2 d_head=128)"),
            std::string::npos);
  EXPECT_NE(r.dom.find("<p class=\"shape-note\">Smaller shape: the report shape (seqlen 4096)"),
            std::string::npos);
  EXPECT_NE(r.dom.find("(report shape seqlen=4096 batch=2 d_head=128).</p>"), std::string::npos);

  const auto [width, height] = png_size(read_file(png));
  EXPECT_EQ(width, 1400u);
  EXPECT_EQ(height, 3000u);
  EXPECT_GT(fs::file_size(png), 50'000u) << "a screenshot of a drawn page is not that small";
}

TEST(ReportPageBrowser, TheHashFiltersTheTableAndUndrawnChartsAreFound) {
  NCV_REQUIRE_BROWSER(browser);
  const Json report = fixture();
  const fs::path dir = out_dir("filtered");
  write_html_report(report, dir);
  const BrowserRun r = browser_test::open_page(
      browser, file_url(dir / "index.html", "family=sd_attention&verdict=pass"),
      out_dir("run_filtered"));
  ASSERT_EQ(page_errors(r), std::vector<std::string>{}) << joined(page_errors(r));
  const int want = expected_rows(report, "sd_attention", "pass");
  // Either filter alone would show more rows: the count tells them apart.
  ASSERT_LT(want, expected_rows(report, "", "pass"));
  ASSERT_LT(want, expected_rows(report, "sd_attention", ""));
  const auto rows = visible_rows(r.dom);
  EXPECT_EQ(rows.size(), static_cast<size_t>(want));
  for (const auto& tr : rows) {
    EXPECT_EQ(tr.at("data-family"), "sd_attention");
    EXPECT_EQ(tr.at("data-verdict"), "pass");
  }
  // The failing row's replay line is filtered out with it.
  for (const auto& tr : elements(r.dom, "tr")) {
    if (tr.count("class") && tr.at("class") == "replay-row") {
      EXPECT_TRUE(tr.count("hidden"));
    }
  }
  // Only the selected family's section is open, so the kernels' charts are not drawn yet: the
  // chart check says so (it can fail).
  const auto problems = chart_problems(r.dom, expected_charts(report));
  EXPECT_NE(
      std::find(problems.begin(), problems.end(), "chart-timeline-naive_attention-trn1: not drawn"),
      problems.end())
      << joined(problems);
  EXPECT_EQ(std::find(problems.begin(), problems.end(), "chart-latency-sd_attention: not drawn"),
            problems.end())
      << joined(problems);
}

// The detector catches a console.error (the page reports a malformed timeline interval) ...
TEST(ReportPageBrowser, DetectorReportsAConsoleError) {
  NCV_REQUIRE_BROWSER(browser);
  Json report = fixture();
  report["timelines"][0]["intervals"][0]["track"] = 99;
  const fs::path dir = out_dir("bad_track");
  write_html_report(report, dir);
  const BrowserRun r = browser_test::open_page(browser, file_url(dir / "index.html", "expand=all"),
                                               out_dir("run_bad_track"));
  const auto errors = page_errors(r);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_NE(
      errors[0].find("console.error: timeline naive_attention on trn1: interval 0 is malformed"),
      std::string::npos)
      << errors[0];
}

// ... and an uncaught exception (a section of the wrong type stops the script).
TEST(ReportPageBrowser, DetectorReportsAnUncaughtException) {
  NCV_REQUIRE_BROWSER(browser);
  Json report = fixture();
  report["latency"] = Json{{"not", "an array"}};
  const fs::path dir = out_dir("bad_section");
  write_html_report(report, dir);
  const BrowserRun r = browser_test::open_page(browser, file_url(dir / "index.html", ""),
                                               out_dir("run_bad_section"));
  const std::string all = joined(page_errors(r));
  EXPECT_NE(all.find("uncaught: Uncaught Error: report.latency is not an array"), std::string::npos)
      << all;
  EXPECT_NE(all.find("browser console:"), std::string::npos) << all;
  EXPECT_NE(all.find("did not finish"), std::string::npos) << all;
}

// ---------------------------------------------------------------- end to end

struct Command {
  int exit_code = -1;
  std::string out, err;
};

Command run_ncverify(const std::vector<std::string>& args, const fs::path& work) {
  fs::create_directories(work);
  std::string cmd = browser_test::shell_quote(NCVERIFY_BINARY);
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += browser_test::shell_quote(a);
  }
  cmd += " >" + browser_test::shell_quote((work / "stdout").string());
  cmd += " 2>" + browser_test::shell_quote((work / "stderr").string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  Command c;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.out = read_file(work / "stdout");
  c.err = read_file(work / "stderr");
  return c;
}

// `ncverify report --html` on one cheap kernel, its page opened like the fixture's: the page and
// the data side agree on the object. Skipped while `report` has no --html (before the data side
// is merged).
TEST(ReportPageEndToEnd, ReportHtmlOfOneKernelDrawsEveryChartWithoutAnError) {
  NCV_REQUIRE_BROWSER(browser);
  const fs::path work = out_dir("end_to_end");
  const Command help = run_ncverify({"report", "--help"}, work);
  if (help.out.find("--html") == std::string::npos) {
    GTEST_SKIP() << "ncverify report has no --html option in this build";
  }
  const fs::path dir = work / "report";
  fs::remove_all(dir);
  const Command report =
      run_ncverify({"report", "--kernel", "sd_attention", "--cases", "1", "--sweep-max-seqlen",
                    "512", "--frontier-timeout-s", "1", "--html", dir.string()},
                   work);
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  const Json data = Json::parse(read_file(dir / "report.json"));
  for (const Json& t : data.at("timelines")) {
    EXPECT_TRUE(fs::is_regular_file(dir / t.at("trace_file").get<std::string>()))
        << t.at("trace_file");
  }
  const BrowserRun r = browser_test::open_page(browser, file_url(dir / "index.html", "expand=all"),
                                               out_dir("run_end_to_end"));
  ASSERT_EQ(page_errors(r), std::vector<std::string>{}) << joined(page_errors(r)) << r.log;
  const std::set<std::string> ids = expected_charts(data);
  EXPECT_GE(ids.size(), 5u) << "histogram, latency, SBUF, PSUM, timeline";
  EXPECT_EQ(chart_problems(r.dom, ids), std::vector<std::string>{})
      << joined(chart_problems(r.dom, ids));
  EXPECT_EQ(visible_rows(r.dom).size(), static_cast<size_t>(expected_rows(data, "", "")));
}

}  // namespace
}  // namespace ncv::cli
