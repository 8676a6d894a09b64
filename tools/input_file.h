// Reading what the user hands the command line (.nkir programs, SPEC.json, calibration data):
// regular files only (a device or FIFO could be read forever), at most --max-input-mib bytes,
// checked before reading; text without NUL bytes; JSON that is exactly one document. Every
// refusal is a UsageError (exit 2) naming the file and, where it applies, the byte offset.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace CLI {
class App;
}

namespace ncv::cli {

inline constexpr int64_t kDefaultMaxInputMib = 64;

// Adds --max-input-mib to `app` (the top-level app; subcommands fall through to it).
void add_input_limit_option(CLI::App& app);
int64_t max_input_bytes();

// The command's memory budget: its --memory-budget-mib (RunLimits, or add_memory_budget_option
// for commands that run no kernel, records it here as it is parsed), else RunOptions' default.
// It bounds a run's host memory, the NKI tracer's address space and a program's parse
// (parse_program_within_budget).
int64_t command_memory_mib();
void set_command_memory_mib(int64_t mib);

// --memory-budget-mib for a command that reads or traces programs but runs none (import, dump,
// prove, frontier).
void add_memory_budget_option(CLI::App* cmd);

// The whole file, refused (UsageError) when it is not a regular file, is larger than
// max_input_bytes() or holds a NUL byte.
std::string read_input_file(const std::string& path);

// The whole file as bytes (NUL bytes allowed: .npy arrays), refused (UsageError) when it is not
// a regular file or is larger than `limit` bytes; `flag` names the option that raises the limit.
std::string read_binary_input_file(const std::string& path, int64_t limit, const std::string& flag);

// `text` (the contents of `path`) as one JSON document; trailing bytes, syntax errors and
// numbers out of range are a UsageError naming the file and the byte offset.
nlohmann::json parse_json_document(const std::string& text, const std::string& path);

}  // namespace ncv::cli
