// `ncverify bugs [--json] [--only NAME]`: the catch table (properties/README.md) — for every entry
// of the bug catalogue (properties/bug_catalogue.h), whether the property suite catches it (and
// with which property) and whether the common baseline does (allclose(atol=1e-2) on 5 uniform
// inputs at one shape), ending with `properties caught X/N; baseline caught Y/N`. Exit 0 when the
// property suite catches every entry, 1 otherwise.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "properties/allclose_baseline.h"
#include "properties/bug_catalogue.h"
#include "properties/suite_runner.h"
#include "tools/commands.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

struct BugsCommandOptions {
  bool json = false;
  std::vector<std::string> only;
};

int run_bugs(const BugsCommandOptions& opts) {
  for (const std::string& name : opts.only) {
    if (!props::find_bug(name)) throw UsageError("--only " + name + ": no such catalogue entry");
  }
  const props::SuiteParams params = props::default_suite_params();
  nlohmann::json rows = nlohmann::json::array();
  int n = 0, by_props = 0, by_baseline = 0;
  if (!opts.json) {
    std::printf("%-34s %-24s %-28s %s\n", "bug", "base kernel", "property suite",
                "baseline allclose(atol=1e-2)");
  }
  Progress progress(
      "bugs", "catalogue entries",
      static_cast<int64_t>(opts.only.empty() ? props::bug_catalogue().size() : opts.only.size()));
  for (const props::BugEntry& bug : props::bug_catalogue()) {
    if (!opts.only.empty() &&
        std::find(opts.only.begin(), opts.only.end(), bug.name) == opts.only.end()) {
      continue;
    }
    const props::KernelUnderTest k = props::broken_kernel(bug);
    const props::SuiteVerdict suite = props::run_property_suite(k, params);
    const props::BaselineVerdict base = props::allclose_baseline(k);
    ++n;
    progress.update(n, bug.name);
    by_props += suite.caught;
    by_baseline += base.caught;
    const std::string suite_cell = suite.caught    ? "caught (" + suite.property + ")"
                                   : suite.gave_up ? "MISSED (" + suite.property + " gave up)"
                                                   : "MISSED";
    const std::string base_cell = !base.caught          ? "missed"
                                  : base.by_model_check ? "caught (model check)"
                                                        : "caught";
    if (opts.json) {
      rows.push_back({{"bug", bug.name},
                      {"what", bug.what},
                      {"base", bug.base},
                      {"properties_caught", suite.caught},
                      {"property", suite.property},
                      {"cases_before_failure", suite.cases_before},
                      {"property_message", suite.message},
                      {"baseline_caught", base.caught},
                      {"baseline_by_model_check", base.by_model_check},
                      {"baseline_detail", base.detail},
                      {"baseline_shape", base.shape}});
    } else {
      std::printf("%-34s %-24s %-28s %s\n", bug.name.c_str(), bug.base.c_str(), suite_cell.c_str(),
                  base_cell.c_str());
    }
  }
  if (opts.json) {
    std::cout << nlohmann::json{{"rows", rows},
                                {"properties_caught", by_props},
                                {"baseline_caught", by_baseline},
                                {"entries", n},
                                {"rc_seed", params.seed},
                                {"rc_max_success", params.max_success}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("properties caught %d/%d; baseline caught %d/%d\n", by_props, n, by_baseline, n);
  }
  return by_props == n ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_bugs(CLI::App& app, Action& action) {
  auto opts = std::make_shared<BugsCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bugs",
      "Catch table: the bug catalogue against the property suite and the allclose baseline");
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the table");
  cmd->add_option("--only", opts->only, "Only these catalogue entries (repeatable)")
      ->expected(1)
      ->take_all();
  cmd->callback([opts, &action] { action = [opts] { return run_bugs(*opts); }; });
}

}  // namespace ncv::cli
