// `ncverify oracle --spec SPEC.json [--out OUT.json] [--force] [--fast]`: evaluates an attention
// spec with the exact (Boost.Multiprecision, 36 significant digits) or fast (double, compensated)
// oracle and writes OUT.json (oracle/README.md "Spec format"). Without --out the JSON goes to
// stdout. An existing --out file is never overwritten unless --force is given.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/spec_json.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

struct OracleCommandOptions {
  std::string spec;
  std::string out;
  bool fast = false;
  bool force = false;
};

int run_oracle(const OracleCommandOptions& opts) {
  if (!opts.out.empty() && !opts.force && std::filesystem::exists(opts.out)) {
    throw UsageError(opts.out + ": output file exists (use --force to overwrite)");
  }
  const std::string text = read_text_file(opts.spec);
  oracle::SpecFile f;
  oracle::OracleOutput result;
  try {
    f = oracle::parse_spec_text(text);
    result = opts.fast ? oracle::fast_attention(f.spec, f.inputs)
                       : oracle::exact_attention(f.spec, f.inputs, /*with_decimal=*/true);
  } catch (const oracle::SpecError& e) {
    throw UsageError(opts.spec + ": " + e.message);
  }
  const std::string json = oracle::oracle_output_json(f.spec, result, opts.fast).dump(1) + "\n";
  if (opts.out.empty()) {
    std::cout << json;
    return kExitOk;
  }
  std::ofstream out(opts.out, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  if (!out) throw UsageError(opts.out + ": cannot write the output file");
  std::cerr << "ncverify oracle: wrote " << opts.out << " (" << result.out.size() << " values, "
            << (opts.fast ? "fast" : "exact") << " oracle)\n";
  return kExitOk;
}

}  // namespace

void register_oracle(CLI::App& app, Action& action) {
  auto opts = std::make_shared<OracleCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "oracle",
      "Evaluate an attention spec (SPEC.json with q, k, v) with the exact or fast oracle");
  cmd->add_option("--spec", opts->spec, "Spec and inputs (oracle/README.md \"Spec format\")")
      ->required();
  cmd->add_option("--out", opts->out, "Write the result here instead of stdout");
  cmd->add_flag("--force", opts->force, "Overwrite an existing --out file");
  cmd->add_flag("--fast", opts->fast,
                "Use the double-precision fast oracle (17 digits, bounded error) instead of the "
                "exact one");
  cmd->footer("Exit codes: 0 done, 2 bad usage or bad input (the message names the JSON path).");
  cmd->callback([opts, &action] { action = [opts] { return run_oracle(*opts); }; });
}

}  // namespace ncv::cli
