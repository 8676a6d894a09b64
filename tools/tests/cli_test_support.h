// Runs the built `ncverify` binary the way a user or CI does: arguments shell-quoted, stdin
// closed, stdout and stderr captured, exit code decoded. Shared by the CLI test files.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ncv::cli_test {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A per-process scratch folder under gtest's temp dir, removed when the process exits (ctest runs
// each test in its own process: left behind, thousands of them piled up in /tmp per tier run).
inline fs::path temp_dir() {
  struct RemovedAtExit {
    fs::path dir;
    ~RemovedAtExit() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  };
  static const RemovedAtExit scratch{fs::path(::testing::TempDir()) /
                                     ("ncverify_cli_test_" + std::to_string(getpid()))};
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

inline fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path path = temp_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs `program` with `args` from the working directory `cwd` (default: the test's own);
// standard input is empty.
inline CliResult run_command(const std::string& program, const std::vector<std::string>& args,
                             const fs::path& cwd = {}) {
  const fs::path err_path = temp_dir() / "stderr.txt";
  std::string cmd;
  if (!cwd.empty()) {
    cmd += "cd ";
    cmd += shell_quote(cwd.string());
    cmd += " && ";
  }
  cmd += shell_quote(program);
  // Appended piece by piece: `" " + std::string` trips GCC 12's -Wrestrict false positive.
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += shell_quote(a);
  }
  cmd += " 2>";
  cmd += shell_quote(err_path.string());
  cmd += " </dev/null";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err_path);
  return r;
}

// Runs the binary with `args` from the working directory `cwd` (default: the test's own).
inline CliResult run_cli(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  return run_command(NCVERIFY_BINARY, args, cwd);
}

inline std::string describe(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// Exit code `code` and every piece of `needles` in stderr.
inline void expect_exit(const CliResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, code) << describe(r);
  for (const std::string& n : needles) {
    EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "'\n" << describe(r);
  }
}

// `--contract-option` for every option of attention_tkg's contract at a single-core, flat-cache,
// bf16 decode problem: the KV-cache layout tests check their small kernels under it.
inline void append_attention_tkg_options(std::vector<std::string>& args) {
  for (const char* o : {"lnc=1", "strided_mm1=true", "mask=hbm", "sink=off", "kv_dtype=bf16",
                        "q_dtype=bf16", "out_dtype=bf16", "s_prior_tiling=off", "block_len=0",
                        "block_resize=1", "swa=off", "out_in_sb=false"}) {
    args.push_back("--contract-option");
    args.push_back(o);
  }
}

}  // namespace ncv::cli_test
