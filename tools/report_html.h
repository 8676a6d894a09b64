// `ncverify report --html DIR`'s page: DIR/index.html, one self-contained file (the report object,
// Chart.js and the page's script and style inlined; nothing is fetched when it is viewed, so it
// opens from disk). The object is the one described in tools/report_page/README.md.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ncv::cli {

// The page's HTML for `report`. The JSON is embedded in a <script type="application/json">
// element with '<', '>' and '&' written as \u escapes, so no string in the data can close the
// element or start markup.
std::string render_html_report(const nlohmann::json& report);

// Writes dir/index.html (creating dir when missing, replacing an index.html already there:
// whether DIR may be reused is the caller's decision). Throws UsageError naming the path when
// the folder cannot be made or the file cannot be written.
void write_html_report(const nlohmann::json& report, const std::filesystem::path& dir);

}  // namespace ncv::cli
