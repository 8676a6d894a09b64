// fuzz_cli (fuzz/README.md): the whole command line in-process (tools/cli_app.h), with fuzzed
// arguments and a fuzzed input file: the argument parser, the file readers (.nkir, SPEC.json,
// calibration data), the limits and the output-file rules.
//
// Input: byte 0 picks the subcommand, byte 1 the input file's extension (.nkir or .json); then
// NUL-terminated argument tokens up to an empty one; the rest is the input file. Tokens `@FILE`,
// `@DIR` (a calibration folder holding the file as data.json) and `@OUT` (an existing file) are
// replaced by paths. The harness pins the limits that bound one execution (steps, memory, trace,
// cases, Z3 time, oracle size), dropping the fuzzer's own values for them.
//
// Oracles:
//   * the exit code is 0, 1 or 2, and exit 2 comes with a message;
//   * no message leaks a library's raw text (a JSON exception, a Z3 numeral error, a standard
//     library function name) or reports an internal error;
//   * `@OUT` keeps its contents unless --force was given, and no temporary file is left behind;
//   * nothing crashes and nothing is undefined (the sanitizers of the fuzz build).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/support/fuzz_check.h"
#include "tools/cli_app.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kTarget = "fuzz_cli";
constexpr const char* kPrecious = "precious contents";

// The subcommands whose work one execution can afford (bugs and report run whole suites).
const char* const kCommands[] = {"run",      "dump",   "check",     "bench", "prove",
                                 "frontier", "oracle", "calibrate", "list"};

struct Workspace {
  fs::path dir, data_dir, out;
};

const Workspace& workspace() {
  static const Workspace w = [] {
    Workspace ws;
    ws.dir = fs::temp_directory_path() / ("ncverify_fuzz_cli_" + std::to_string(::getpid()));
    ws.data_dir = ws.dir / "data";
    ws.out = ws.dir / "out.json";
    fs::create_directories(ws.data_dir);
    return ws;
  }();
  return w;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// The limits the harness pins (flag, value) per subcommand, and the flags it drops from the
// fuzzer's tokens together with their value.
struct Pinned {
  std::vector<std::pair<std::string, std::string>> flags;
};

Pinned pinned_for(const std::string& cmd, const std::vector<std::string>& tokens) {
  Pinned p;
  if (cmd == "run" || cmd == "check" || cmd == "bench" || cmd == "calibrate") {
    p.flags = {{"--max-steps", "100000"}, {"--memory-budget-mib", "256"}};
  }
  if (cmd == "bench") p.flags.emplace_back("--max-trace-mib", "64");
  if (cmd == "check" &&
      std::find(tokens.begin(), tokens.end(), std::string("--values")) == tokens.end()) {
    p.flags.emplace_back("--cases", "1");
  }
  if (cmd == "prove" || cmd == "frontier") p.flags.emplace_back("--timeout-ms", "100");
  if (cmd == "oracle") {
    p.flags = {{"--max-macs", "100000"}, {"--memory-budget-mib", "256"}};
  }
  return p;
}

// Tokens the harness never passes: flags it pins (with their value) and whole-suite switches.
std::vector<std::string> filter(const std::vector<std::string>& tokens, const Pinned& pinned) {
  std::set<std::string> drop_with_value;
  for (const auto& [flag, value] : pinned.flags) drop_with_value.insert(flag);
  std::vector<std::string> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const std::string name = t.substr(0, t.find('='));
    if (drop_with_value.count(name) != 0) {
      if (t.find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    if (t == "--all") continue;  // prove --all: every registered kernel, seconds per exec
    out.push_back(t);
  }
  return out;
}

std::string substitute(const std::string& token, const fs::path& file) {
  const Workspace& w = workspace();
  if (token == "@FILE") return file.string();
  if (token == "@DIR") return w.data_dir.string();
  if (token == "@OUT") return w.out.string();
  return token;
}

// The value of an output flag (--trace, --out) stays inside the workspace: @OUT (an existing
// file) or a fresh name there, never a path the fuzzer made up.
void confine_outputs(std::vector<std::string>& args) {
  const Workspace& w = workspace();
  const fs::path fresh = w.dir / "new_output.json";
  fs::remove(fresh);
  for (size_t i = 0; i < args.size(); ++i) {
    for (const std::string flag : {"--trace", "--out"}) {
      if (args[i].rfind(flag + "=", 0) == 0) {
        const std::string value = args[i].substr(flag.size() + 1);
        args[i] = flag + "=" + (value == w.out.string() ? value : fresh.string());
      } else if (args[i] == flag && i + 1 < args.size() && args[i + 1] != w.out.string()) {
        args[i + 1] = fresh.string();
      }
    }
  }
}

// `echoed`: what the user gave (arguments, file contents); a message may quote it, so a needle
// found there says nothing about the program's own text.
void check_message(const std::string& err, int code, const std::string& argv_text,
                   const std::string& echoed) {
  const auto where = [&] { return "\nargs:" + argv_text + "\nstderr:\n" + err; };
  NCV_FUZZ_CHECK(code == 0 || code == 1 || code == 2, kTarget,
                 "exit code " + std::to_string(code) + where());
  NCV_FUZZ_CHECK(code != 2 || !err.empty(), kTarget, "exit 2 without a message" + where());
  for (const char* leak : {"internal error", "json.exception", "numeral does not fit",
                           "basic_string", "std::", "stoll", "vector::"}) {
    NCV_FUZZ_CHECK(err.find(leak) == std::string::npos || echoed.find(leak) != std::string::npos,
                   kTarget, std::string("a raw message reached the user (") + leak + ")" + where());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Workspace& w = workspace();
  const std::string cmd = kCommands[data[0] % (sizeof kCommands / sizeof kCommands[0])];
  const fs::path file = w.dir / (data[1] % 2 == 0 ? "input.nkir" : "input.json");
  std::vector<std::string> tokens;
  size_t at = 2;
  for (;;) {
    const auto* begin = reinterpret_cast<const char*>(data) + at;
    const auto* end = static_cast<const char*>(std::memchr(begin, '\0', size - at));
    if (end == nullptr) break;  // no terminator: everything is file
    const std::string token(begin, end);
    at += token.size() + 1;
    if (token.empty()) break;
    tokens.push_back(token);
    if (tokens.size() > 32 || at >= size) break;
  }
  const std::string contents(reinterpret_cast<const char*>(data) + std::min(at, size),
                             size - std::min(at, size));
  write(file, contents);
  write(w.data_dir / "data.json", contents);
  write(w.out, kPrecious);

  const Pinned pinned = pinned_for(cmd, tokens);
  std::vector<std::string> args{"ncverify", cmd};
  for (const std::string& t : filter(tokens, pinned)) args.push_back(substitute(t, file));
  for (const auto& [flag, value] : pinned.flags) {
    args.push_back(flag);
    args.push_back(value);
  }
  confine_outputs(args);
  std::vector<char*> argv;
  std::string argv_text;
  for (std::string& a : args) {
    argv.push_back(a.data());
    argv_text += " " + a;
  }
  argv.push_back(nullptr);

  std::ostringstream out, err;
  std::streambuf* const old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const old_err = std::cerr.rdbuf(err.rdbuf());
  const int code = ncv::cli::run_ncverify(static_cast<int>(args.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  std::cout.clear();
  std::cerr.clear();

  // NCV_FUZZ_CLI_TRACE=1: each execution's arguments, exit code and first message line, to see
  // what the corpus reaches.
  static const bool trace = std::getenv("NCV_FUZZ_CLI_TRACE") != nullptr;
  if (trace) {
    const std::string e = err.str();
    std::fprintf(stderr, "fuzz_cli: exit %d:%s | %s\n", code, argv_text.c_str(),
                 e.substr(0, e.find('\n')).c_str());
  }
  check_message(err.str(), code, argv_text, argv_text + contents);
  const bool forced =
      std::find(tokens.begin(), tokens.end(), std::string("--force")) != tokens.end();
  if (!forced) {
    std::ifstream in(w.out, std::ios::binary);
    std::ostringstream kept;
    kept << in.rdbuf();
    NCV_FUZZ_CHECK(kept.str() == kPrecious, kTarget,
                   "an existing file was replaced without --force:" + argv_text);
  }
  for (const auto& entry : fs::directory_iterator(w.dir)) {
    NCV_FUZZ_CHECK(entry.path().filename().string().find(".ncverify-") == std::string::npos,
                   kTarget, "a temporary file was left behind: " + entry.path().string());
  }
  return 0;
}
