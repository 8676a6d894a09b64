#include "tools/report_html.h"

#include <string>

#include "tools/output_file.h"

namespace ncv::cli {

void write_html_report(const nlohmann::json& report, const std::filesystem::path& dir) {
  const std::string verdict = report.value("pass", false) ? "PASS" : "FAIL";
  const std::string page =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ncverify report</title></head>\n"
      "<body><h1>ncverify report: " +
      verdict + "</h1>\n<p>The data: <a href=\"report.json\">report.json</a>.</p></body></html>\n";
  write_output_file((dir / "index.html").string(), page, true, "--html");
}

}  // namespace ncv::cli
