// Runs the tracer as an isolated child process: a private empty working directory (removed
// afterwards), a minimal environment, no inherited descriptors but its three channels, limits on
// address space, CPU time, file size and open files, the system-call filter of syscall_filter.h,
// and a wall-clock deadline. Its only output that counts is what it writes on descriptor 3 (the
// program channel; the kernel's own code has no way to it); its standard output goes to
// /dev/null and its standard error (error messages) is read up to a limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncv::frontend {

struct SandboxLimits {
  int timeout_s = 300;                          // wall clock
  int64_t memory_bytes = int64_t{8} << 30;      // address space (RLIMIT_AS)
  size_t max_program_bytes = size_t{64} << 20;  // descriptor 3
  size_t max_error_bytes = size_t{1} << 20;     // standard error
};

struct SandboxResult {
  std::string program;  // what arrived on descriptor 3
  std::string error;    // standard error
  int status = 0;       // waitpid status
  bool timed_out = false;
  bool program_too_large = false;
  bool error_too_large = false;
};

// Runs argv[0] (a path) with `env` (NAME=VALUE strings). Throws std::runtime_error when the
// sandbox cannot be set up (no working directory, no pipes, fork failed); a child that cannot
// install its limits exits 125 with the reason on standard error.
SandboxResult run_sandboxed(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env, const SandboxLimits& limits);

// Exit status of a child that could not set up its sandbox (the reason is on its stderr).
inline constexpr int kSandboxSetupFailed = 125;

}  // namespace ncv::frontend
