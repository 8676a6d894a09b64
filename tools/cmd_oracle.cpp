// `ncverify oracle --spec SPEC.json [--out OUT.json] [--force] [--fast]`: evaluates an attention
// spec with the exact (Boost.Multiprecision, 36 significant digits) or fast (double, compensated)
// oracle and writes OUT.json (oracle/README.md "Spec format"). Without --out the JSON goes to
// stdout. An existing --out file is never overwritten unless --force is given.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <memory>

#include "oracle/exact_oracle.h"
#include "oracle/fast_oracle.h"
#include "oracle/spec_json.h"
#include "tools/commands.h"
#include "tools/input_file.h"
#include "tools/output_file.h"

namespace ncv::cli {

namespace {

struct OracleCommandOptions {
  std::string spec;
  std::string out;
  bool fast = false;
  bool force = false;
  int64_t max_macs = int64_t{1} << 30;
};

// Refuses a spec whose evaluation would take more than --max-macs multiply-adds (scores and
// outputs) before anything is allocated: a paged spec can name millions of keys with a few
// blocks, and the exact oracle holds every logical key and value in 36-digit numbers.
void check_oracle_size(const oracle::AttentionSpec& s, int64_t max_macs, const std::string& path) {
  const int64_t factors[] = {s.batch, s.heads, s.seqlen_q, s.seqlen_kv, s.d_head, 2};
  int64_t macs = 1;
  for (int64_t f : factors) {
    if (f < 1 || __builtin_mul_overflow(macs, f, &macs)) macs = INT64_MAX;
  }
  if (macs > max_macs) {
    throw UsageError(path + ": evaluating this spec takes " +
                     (macs == INT64_MAX ? std::string("more than 2^63") : std::to_string(macs)) +
                     " multiply-adds (batch x heads x seqlen_q x seqlen_kv x d_head x 2), over "
                     "the limit of " +
                     std::to_string(max_macs) + " (--max-macs N raises it)");
  }
}

int run_oracle(const OracleCommandOptions& opts) {
  if (!opts.out.empty()) refuse_existing_output(opts.out, opts.force, "--out");
  const std::string text = read_input_file(opts.spec);
  oracle::SpecFile f;
  oracle::OracleOutput result;
  try {
    f = oracle::parse_spec_json(parse_json_document(text, opts.spec));
    check_oracle_size(f.spec, opts.max_macs, opts.spec);
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
  write_output_file(opts.out, json, opts.force, "--out");
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
  cmd->add_option("--max-macs", opts->max_macs,
                  "Largest spec evaluated, in multiply-adds (batch x heads x seqlen_q x seqlen_kv "
                  "x d_head x 2); larger ones are refused before allocating")
      ->check(CLI::Range(int64_t{1}, INT64_MAX))
      ->capture_default_str();
  cmd->add_flag("--fast", opts->fast,
                "Use the double-precision fast oracle (17 digits, bounded error) instead of the "
                "exact one");
  cmd->footer("Exit codes: 0 done, 2 bad usage or bad input (the message names the JSON path).");
  cmd->callback([opts, &action] { action = [opts] { return run_oracle(*opts); }; });
}

}  // namespace ncv::cli
