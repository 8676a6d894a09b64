// The report page's assets, embedded into the binary at build time (embed_assets.cmake writes
// their definitions into the build folder; tools/CMakeLists.txt runs it). Each view is the file's
// exact bytes, with no terminating NUL.
#pragma once

#include <string_view>

namespace ncv::cli::report_page {

// Chart.js (the UMD build, chart.min.js) from Debian's libjs-chart.js 3.9.1
// (/usr/share/javascript/chart.js/chart.min.js), MIT licensed; its banner is kept.
std::string_view chart_js();
// The version in Chart.js's banner ("3.9.1").
std::string_view chart_js_version();
// tools/report_page/error_probe.js: records uncaught errors and console.error into the page.
std::string_view error_probe_js();
// tools/report_page/report.js: builds the page from the embedded report object.
std::string_view report_js();
// tools/report_page/report.css.
std::string_view report_css();

}  // namespace ncv::cli::report_page
