// What did not pass in a report, and why: one entry per check row, rewrite link and kernel's
// proofs that is not PASS, each with its reason in one line and the command that replays it.
// `report` ends its terminal output with this list and puts it in report.json (`failures`);
// every non-passing row also gets its `reason` (and a link or proof its `replay`), which the page
// shows in the row. Read from the report's JSON, so a service assembling a report reuses it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ncv::cli {

// Adds `reason` (and `replay` where a row has none) to every non-passing row of
// report["checks"], ["links"] and ["proofs"], and returns the list
// [{kind, kernel, verdict: FAIL|UNKNOWN, reason, replay}] in that order.
nlohmann::json annotate_failures(nlohmann::json& report);

// The list as the report's closing text: "not passed: none" or a count and one block per entry.
std::string failures_text(const nlohmann::json& failures);

}  // namespace ncv::cli
