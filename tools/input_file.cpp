#include "tools/input_file.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/interp/interpreter.h"
#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

int64_t g_max_input_mib = kDefaultMaxInputMib;
const int64_t kDefaultCommandMemoryMib = RunOptions{}.memory_budget_bytes >> 20;
int64_t g_command_memory_mib = kDefaultCommandMemoryMib;

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at ...": the bracket is the
// library's, not the user's business.
std::string without_library_prefix(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
  }
  return what;
}

std::string mib_text(int64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

void add_input_limit_option(CLI::App& app) {
  g_max_input_mib = kDefaultMaxInputMib;  // a fresh app starts from the defaults
  g_command_memory_mib = kDefaultCommandMemoryMib;
  app.add_option("--max-input-mib", g_max_input_mib,
                 "Largest input file (.nkir, SPEC.json, calibration data) read, in MiB")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
}

int64_t max_input_bytes() {
  return g_max_input_mib << 20;
}

int64_t command_memory_mib() {
  return g_command_memory_mib;
}

void set_command_memory_mib(int64_t mib) {
  g_command_memory_mib = mib;
}

void add_memory_budget_option(CLI::App* cmd) {
  cmd->add_option_function<int64_t>(
         "--memory-budget-mib", [](const int64_t& mib) { set_command_memory_mib(mib); },
         "Host memory the command may use (the NKI tracer's address space, a program's parse), "
         "in MiB (default " +
             std::to_string(command_memory_mib()) + ")")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
}

namespace {

// The whole regular file, at most `limit` bytes; `flag` names the option that raises the limit.
std::string read_regular_file(const std::string& path, int64_t limit, const std::string& flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw UsageError("cannot read '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw UsageError("cannot read '" + path + "': it is " + kind_of(st.st_mode) +
                     "; inputs must be regular files");
  }
  if (st.st_size > limit) {
    throw UsageError("cannot read '" + path + "': it has " + std::to_string(st.st_size) +
                     " bytes, over the input limit of " + mib_text(limit) + " (" + flag +
                     " N raises it)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "': " + std::strerror(errno));
  // Read at most limit + 1 bytes: the file may have grown since stat().
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw UsageError("cannot read '" + path + "': read error");
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<int64_t>(text.size()) > st.st_size) {
    while (in && static_cast<int64_t>(text.size()) <= limit) {
      char buf[65536];
      in.read(buf, sizeof buf);
      text.append(buf, static_cast<size_t>(in.gcount()));
    }
    if (static_cast<int64_t>(text.size()) > limit) {
      throw UsageError("cannot read '" + path + "': it grew past the input limit of " +
                       mib_text(limit) + " while being read (" + flag + " N raises it)");
    }
  }
  return text;
}

}  // namespace

std::string read_binary_input_file(const std::string& path, int64_t limit,
                                   const std::string& flag) {
  return read_regular_file(path, limit, flag);
}

std::string read_input_file(const std::string& path) {
  std::string text = read_regular_file(path, max_input_bytes(), "--max-input-mib");
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + nul, '\n'));
    const size_t col = nul - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
    throw UsageError(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": a NUL byte (byte offset " + std::to_string(nul) +
                     "); a text input has none");
  }
  return text;
}

nlohmann::json parse_json_document(const std::string& text, const std::string& path) {
  try {
    // parse() reads to the end of the text and refuses anything after the document.
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(path + ": not one valid JSON document (byte offset " + std::to_string(e.byte) +
                     "): " + without_library_prefix(e));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": not valid JSON: " + without_library_prefix(e));
  }
}

}  // namespace ncv::cli
