#include "tools/report_html.h"

#include <string_view>
#include <system_error>

#include "tools/cli_common.h"
#include "tools/output_file.h"
#include "tools/report_page/assets.h"

namespace ncv::cli {

namespace {

// The report as JSON text that is safe inside a <script> element: ASCII only, and '<', '>', '&'
// (which occur only inside strings in JSON text) as \u escapes, so "</script>" in a kernel
// name or an error message stays data. JSON.parse reads the escapes back.
std::string embedded_json(const nlohmann::json& report) {
  const std::string text =
      report.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_html_report(const nlohmann::json& report) {
  const bool pass = report.is_object() && report.value("pass", false) == true;
  std::string html;
  html.reserve(report_page::chart_js().size() + report_page::report_js().size() + (1 << 16));
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += std::string("<title>ncverify report: ") + (pass ? "PASS" : "FAIL") + "</title>\n";
  // First, so that it sees the errors of every later script.
  html += "<script>\n";
  html += report_page::error_probe_js();
  html += "</script>\n<style>\n";
  html += report_page::report_css();
  html += "</style>\n</head>\n<body>\n";
  html += "<div id=\"page-errors\" role=\"alert\" hidden></div>\n";
  html += "<header id=\"summary\"></header>\n";
  html +=
      "<noscript><p>This page draws its table and charts with JavaScript; the same data is in "
      "report.json beside it.</p></noscript>\n";
  html += "<section id=\"verdicts\"></section>\n<section id=\"error-section\"></section>\n";
  html += "<section id=\"families\"></section>\n";
  html += "<footer class=\"meta\"><p>Made by ncverify report. Charts: Chart.js ";
  html += report_page::chart_js_version();
  html +=
      " (Debian package libjs-chart.js, MIT licence), embedded in this file: the page "
      "fetches nothing.</p></footer>\n";
  html += "<script type=\"application/json\" id=\"report-data\">";
  html += embedded_json(report);
  html += "</script>\n<script>\n";
  html += report_page::chart_js();
  html += "\n</script>\n<script>\n";
  html += report_page::report_js();
  html += "</script>\n</body>\n</html>\n";
  return html;
}

void write_html_report(const nlohmann::json& report, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw UsageError("--html: cannot create the folder '" + dir.string() + "': " + ec.message());
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    throw UsageError("--html: '" + dir.string() + "' is not a folder");
  }
  // Replaces a page from an earlier run (never a non-regular file: write_output_file refuses).
  write_output_file((dir / "index.html").string(), render_html_report(report), /*force=*/true,
                    "--html");
}

}  // namespace ncv::cli
