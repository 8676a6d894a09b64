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

// The address space of the NKI tracer (frontend/): the command's --memory-budget-mib when it has
// one (RunLimits records it here as it is parsed), else RunOptions' default budget.
int64_t tracer_memory_mib();
void set_tracer_memory_mib(int64_t mib);

// The whole file, refused (UsageError) when it is not a regular file, is larger than
// max_input_bytes() or holds a NUL byte.
std::string read_input_file(const std::string& path);

// `text` (the contents of `path`) as one JSON document; trailing bytes, syntax errors and
// numbers out of range are a UsageError naming the file and the byte offset.
nlohmann::json parse_json_document(const std::string& text, const std::string& path);

}  // namespace ncv::cli
