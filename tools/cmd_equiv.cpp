// `ncverify equiv ORIGINAL REWRITE [--param NAME=VALUE ...] [--require bit-exact|real|contract]
// [--like KERNEL] [--cases N] [--seed N] [--json]`: whether REWRITE computes what ORIGINAL
// computes (equiv/equiv.h), for every option combination of ORIGINAL not pinned by --param, at
// the checked shapes. Each side is a registered kernel, a bug-catalogue entry, a .nkir file or
// an NKI kernel FILE.py:FUNCTION (a file borrows --like's layout, spec and contract; a fixed
// program fixes the options to the ones given).
// Exit 0 when the required level holds for every option set, 1 when it does not (refuted or
// unknown), 2 on bad usage.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "equiv/equiv.h"
#include "kernels/registry.h"
#include "tools/commands.h"
#include "tools/equiv_sides.h"
#include "tools/generations.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

struct EquivCommandOptions {
  EquivFlags sides;
  std::string gen;  // "": trn1, or the first generation both kernels run on
  int cases = 4;
  uint64_t seed = 1;
  bool json = false;
  RunLimits limits;
};

int run_equiv_command(const EquivCommandOptions& opts) {
  equiv::EquivRequest req = opts.sides.request();
  req.cases = opts.cases;
  req.seed = opts.seed;
  req.run.hw = &generation_for({req.original.variant, req.rewrite.variant}, opts.gen);
  opts.limits.apply(req.run);
  // The option sets run in parallel; each reports as it finishes.
  Progress progress("equiv", "option sets", 0);
  req.on_option_set = [&progress](size_t done, size_t total, const std::string& options) {
    progress.set_total(static_cast<int64_t>(total));
    progress.update(static_cast<int64_t>(done), options);
  };
  const equiv::EquivResult r = run_equiv_or_usage(req);
  // A refuted option set's counterexample (at the required level's layer) and its replay line.
  std::vector<std::string> replays(r.outcomes.size());
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const equiv::OptionOutcome& o = r.outcomes[i];
    const auto& c =
        r.required == equiv::Level::bit_exact ? o.bit_counterexample : o.numeric_counterexample;
    if (c && o.status(r.required) == "refuted") {
      replays[i] =
          equiv_replay_line(opts.sides, req, o, *c, r.required, opts.seed, req.run.hw->name);
    }
  }
  if (opts.json) {
    nlohmann::json j = r.to_json();
    for (size_t i = 0; i < replays.size(); ++i) {
      if (replays[i].empty()) continue;
      j["per_options"][i]["replay"] = replays[i];
      if (!j.contains("replay")) j["replay"] = replays[i];  // the first refutation's
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << r.text();
    for (const std::string& line : replays) {
      if (!line.empty()) std::cout << "replay: " << line << "\n";
    }
  }
  return r.exit_code == 0 ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_equiv(CLI::App& app, Action& action) {
  auto opts = std::make_shared<EquivCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "equiv", "Prove a rewrite equivalent to the kernel it replaces, or show how it differs");
  opts->sides.like_registered_side = true;
  opts->sides.add_options(cmd);
  cmd->add_option("--cases", opts->cases, "Concrete input sets per shape")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  add_seed_option(cmd, opts->seed, "Seed of the first input set");
  cmd->add_option("--gen", opts->gen,
                  "Hardware generation: trn1, trn2 or trn3 (default trn1, or the first generation "
                  "both kernels run on)");
  opts->limits.add_options(cmd);
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->callback([opts, &action] { action = [opts] { return run_equiv_command(*opts); }; });
}

}  // namespace ncv::cli
