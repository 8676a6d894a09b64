// The page of `ncverify report --html DIR`: DIR/index.html from the report's JSON object
// (/work/notes/report-schema29.md). This placeholder writes a plain page that links report.json;
// the html helper's implementation (charts, tables) replaces it at merge.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace ncv::cli {

// Writes DIR/index.html for `report` (DIR exists). Throws UsageError naming the path on I/O
// problems.
void write_html_report(const nlohmann::json& report, const std::filesystem::path& dir);

}  // namespace ncv::cli
