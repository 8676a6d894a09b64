// What every `ncverify` subcommand shares: the exit-code contract (0 pass, 1 verification
// failure, 2 bad usage or input, the same for every command), the errors that map onto it, where
// default files live, and the small parsers for flags that several subcommands take.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace ncv::cli {

// The exit codes CI relies on.
enum ExitCode : int {
  kExitOk = 0,                   // the command did what was asked and every check passed
  kExitVerificationFailure = 1,  // a kernel failed a check: dynamic check, oracle, proof, ...
  kExitUsage = 2,                // bad usage or bad input: flags, files, params
};

// Bad usage or bad input detected by the CLI itself; main() prints the message and exits 2.
struct UsageError : std::exception {
  std::string message;
  explicit UsageError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

// A kernel file that reached past the NKI language (the tracer's check or sandbox refused it,
// frontend::FrontendError::tamper): bad input (exit 2) for every command but `adopt`, whose
// verdict it is (reject, reason tamper).
struct TamperError : UsageError {
  using UsageError::UsageError;
};

// A kernel file whose tracing exceeded a limit (time, memory, program size): bad input (exit 2),
// and for `adopt` a rejected candidate (reason trace-limit).
struct TraceLimitError : UsageError {
  using UsageError::UsageError;
};

// A kernel failed a check (the interpreter's dynamic checks, for instance a trace-only run that
// cannot be timed): main() prints the message and exits 1, whichever command found it.
struct VerificationFailure : std::exception {
  std::string message;
  explicit VerificationFailure(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

// A path inside the repository this binary was built from (defaults such as calibration/ are
// found there, never relative to the working directory).
std::string repository_path(std::string_view relative);

// A subcommand registers itself on the app and, when it is the one selected on the command
// line, sets `action` to the work to do. main() runs the action inside its exception handler,
// so a subcommand may throw anything and the exit code still follows the contract.
using Action = std::function<int()>;
using Registrar = void (*)(CLI::App& app, Action& action);

// Parses repeated `--param NAME=INTEGER` values. Throws UsageError for a value that is not
// NAME=INTEGER or a name given twice.
ParamValues parse_param_assignments(const std::vector<std::string>& assignments);

// Checks that every given param is declared by the program (the interpreter's check_params
// checks domains); throws UsageError naming the unknown param and listing the declared ones.
void check_param_names(const Program& p, const ParamValues& params, std::string_view file);

// The hardware config for `--gen NAME`; throws UsageError listing the known names.
const HwConfig& hw_config_for(const std::string& gen);

// Adds `--seed` to cmd: a decimal integer in [0, 2^64 - 1], refused (exit 2) when it is negative,
// too large or not a number (CLI11 alone would wrap -1 and saturate the rest).
void add_seed_option(CLI::App* cmd, uint64_t& seed, const std::string& description);

// A check for a number of seconds (`--budget-s`, timeouts): a finite decimal in [lo, hi].
// CLI::Range alone lets "nan" through (every comparison with NaN is false), and a NaN budget
// would reach a deadline computation.
CLI::Validator seconds_in_range(double lo, double hi);

// The limits of one kernel run (RunOptions), each with the flag that raises it: host memory
// (--memory-budget-mib) and steps (--max-steps). Both are checked before the run allocates or
// executes anything, and a run over either exits 2 naming the flag.
struct RunLimits {
  int64_t memory_budget_mib = RunOptions{}.memory_budget_bytes >> 20;
  int64_t max_steps = kDefaultMaxSteps;
  void add_options(CLI::App* cmd);
  void apply(RunOptions& options) const;
};

// FNV-1a 64-bit hash of a byte string: the output checksum that `run` prints.
uint64_t fnv1a64(const std::vector<uint8_t>& bytes);
std::string hex64(uint64_t value);

// Shortest decimal text that reads back as the same float ("nan", "inf", "-inf" included).
std::string format_float(float value);

// "M=256 N=512"
std::string format_params(const ParamValues& params);
// A normalized error (max |err| / bound) with three significant digits, as the sweep table
// prints it.
std::string format_ratio(double r);

}  // namespace ncv::cli
