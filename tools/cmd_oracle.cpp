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
  int64_t max_macs = 0;  // 0: the default of the oracle chosen
  int64_t memory_budget_mib = 4096;
};

// The exact oracle runs about 14 M multiply-adds per second on one core (bench/README.md,
// "Measurements behind the code"), the fast one about 30 times more: the default limits keep a
// run under about 20 s.
constexpr int64_t kDefaultExactMacs = int64_t{1} << 28;
constexpr int64_t kDefaultFastMacs = int64_t{1} << 33;
// Host bytes per logical element (every key and value row is expanded, rotated and held by the
// oracle; queries and outputs once more): 36-digit numbers for the exact oracle, doubles and
// their error terms for the fast one. Estimates with headroom, not measurements.
constexpr int64_t kExactBytesPerElement = 96, kFastBytesPerElement = 32;

// a * b * ..., saturating at INT64_MAX (the spec's sizes are user numbers).
int64_t saturating_product(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f < 1 || __builtin_mul_overflow(p, f, &p)) return INT64_MAX;
  }
  return p;
}

std::string count_text(int64_t n) {
  return n == INT64_MAX ? std::string("more than 2^63") : std::to_string(n);
}

// Refuses a spec whose evaluation would take more than --max-macs multiply-adds or more than
// --memory-budget-mib of host memory, before anything is allocated: a paged spec can name
// millions of keys with a few blocks.
void check_oracle_size(const oracle::AttentionSpec& s, const OracleCommandOptions& opts) {
  const int64_t limit = opts.max_macs != 0 ? opts.max_macs
                        : opts.fast        ? kDefaultFastMacs
                                           : kDefaultExactMacs;
  const int64_t macs = saturating_product({s.batch, s.heads, s.seqlen_q, s.seqlen_kv, s.d_head, 2});
  if (macs > limit) {
    throw UsageError(
        opts.spec + ": evaluating this spec takes " + count_text(macs) +
        " multiply-adds (batch x heads x seqlen_q x seqlen_kv x d_head x 2), over the " +
        (opts.fast ? "fast" : "exact") + " oracle's limit of " + std::to_string(limit) +
        " (--max-macs N raises it)");
  }
  const int64_t keys = saturating_product({s.batch, s.kv_heads, s.seqlen_kv, s.d_head, 2});
  const int64_t queries = saturating_product({s.batch, s.heads, s.seqlen_q, s.d_head, 2});
  const int64_t elements = keys > INT64_MAX - queries ? INT64_MAX : keys + queries;
  const int64_t bytes =
      saturating_product({elements, opts.fast ? kFastBytesPerElement : kExactBytesPerElement});
  if (bytes > (opts.memory_budget_mib << 20)) {
    throw UsageError(opts.spec + ": evaluating this spec needs about " +
                     (bytes == INT64_MAX ? std::string("more than 2^63 bytes")
                                         : std::to_string(bytes >> 20) + " MiB") +
                     " of host memory, over the budget of " +
                     std::to_string(opts.memory_budget_mib) +
                     " MiB (--memory-budget-mib N raises it)");
  }
}

int run_oracle(const OracleCommandOptions& opts) {
  if (!opts.out.empty()) refuse_existing_output(opts.out, opts.force, "--out");
  if (opts.force && opts.out.empty()) throw UsageError("--force applies to --out only");
  const std::string text = read_input_file(opts.spec);
  oracle::SpecFile f;
  oracle::OracleOutput result;
  try {
    f = oracle::parse_spec_json(parse_json_document(text, opts.spec));
    check_oracle_size(f.spec, opts);
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
                  "x d_head x 2); larger ones are refused before allocating. Default 2^28 for "
                  "the exact oracle, 2^33 with --fast")
      ->check(CLI::Range(int64_t{1}, INT64_MAX));
  cmd->add_option("--memory-budget-mib", opts->memory_budget_mib,
                  "Host memory the oracle may use (estimated from the spec's sizes); larger "
                  "specs are refused before allocating")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--fast", opts->fast,
                "Use the double-precision fast oracle (17 digits, bounded error) instead of the "
                "exact one");
  cmd->footer("Exit codes: 0 done, 2 bad usage or bad input (the message names the JSON path).");
  cmd->callback([opts, &action] { action = [opts] { return run_oracle(*opts); }; });
}

}  // namespace ncv::cli
