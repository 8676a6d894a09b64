#include "frontend/nki_trace.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "frontend/sandboxed_process.h"

namespace ncv::frontend {

namespace {

// Exit status of the tracer for a kernel that reached past the NKI language
// (python/ncverify_nki/main.py EXIT_TAMPER).
constexpr int kExitTamper = 3;
// ... and for a kernel that ran out of memory under the limit (EXIT_LIMIT).
constexpr int kExitLimit = 4;
constexpr size_t kMaxErrorBytes = size_t{1} << 20;

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', pos), dirs.size());
    const std::string candidate = dirs.substr(pos, end - pos) + "/" + name;
    if (end > pos && access(candidate.c_str(), X_OK) == 0) return candidate;
    pos = end + 1;
  }
  return name;
}

std::string python_interpreter() {
  if (const char* p = std::getenv("NCVERIFY_PYTHON"); p != nullptr && *p != '\0') {
    return find_on_path(p);
  }
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return find_on_path("python3");
}

std::string tracer_script() {
  std::string dir = NCVERIFY_FRONTEND_PY_DIR;
  if (const char* d = std::getenv("NCVERIFY_FRONTEND_DIR"); d != nullptr && *d != '\0') dir = d;
  return dir + "/ncverify_trace.py";
}

// The tracer's whole environment: nothing of the user's (no credentials, no PYTHON* settings, no
// proxies), one thread for numpy's BLAS, UTF-8 text.
std::vector<std::string> tracer_environment() {
  std::vector<std::string> env = {
      "PATH=/usr/bin:/bin", "LANG=C.UTF-8",      "LC_ALL=C.UTF-8",  "OPENBLAS_NUM_THREADS=1",
      "OMP_NUM_THREADS=1",  "MKL_NUM_THREADS=1", "PYTHONHASHSEED=0"};
  if (const char* d = std::getenv("NCVERIFY_FRONTEND_DEBUG"); d != nullptr) {
    env.push_back(std::string("NCVERIFY_FRONTEND_DEBUG=") + d);
  }
  return env;
}
bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string trim_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

bool is_python_target(std::string_view target) {
  const size_t colon = target.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view path = target.substr(0, colon);
  return path.size() > 3 && path.substr(path.size() - 3) == ".py" &&
         is_identifier(target.substr(colon + 1));
}

int frontend_timeout_seconds() {
  const char* t = std::getenv("NCVERIFY_FRONTEND_TIMEOUT_S");
  if (t == nullptr) return 300;
  const std::string text = t;
  const bool digits =
      !text.empty() && text.size() <= 5 &&
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  const long v = digits ? std::strtol(text.c_str(), nullptr, 10) : 0;
  if (!digits || v < 1 || v > 86400) {
    throw FrontendError("NCVERIFY_FRONTEND_TIMEOUT_S='" + text +
                        "': the tracing time limit is a whole number of seconds in [1, 86400]");
  }
  return static_cast<int>(v);
}

std::string trace_nki(const TraceRequest& request) {
  const std::string path = request.target.substr(0, request.target.rfind(':'));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw FrontendError(path + ": no such file (expected FILE.py:FUNCTION)");
  }
  // The child runs in a scratch directory: the kernel's path must not depend on ours.
  const std::string target = std::filesystem::absolute(path, ec).string() +
                             request.target.substr(request.target.rfind(':'));
  SandboxLimits limits;
  limits.timeout_s = frontend_timeout_seconds();
  limits.memory_bytes = request.memory_mib << 20;
  limits.max_program_bytes = static_cast<size_t>(request.max_program_bytes);
  limits.max_error_bytes = kMaxErrorBytes;
  std::vector<std::string> argv = {python_interpreter(), "-I", "-B", tracer_script(), target,
                                   "--program-fd",       "3"};
  auto add = [&](const char* flag, const std::vector<std::string>& values) {
    for (const std::string& v : values) {
      argv.push_back(flag);
      argv.push_back(v);
    }
  };
  add("--param", request.params);
  add("--option", request.options);
  add("--input", request.inputs);
  add("--shape", request.shapes);
  if (!request.grid.empty()) {
    argv.push_back("--grid");
    argv.push_back(request.grid);
  }
  if (!request.generation.empty()) {
    argv.push_back("--gen");
    argv.push_back(request.generation);
  }
  if (access(argv[0].c_str(), X_OK) != 0) {
    throw FrontendError("cannot run " + argv[0] + " (" + strerror(errno) +
                        "): the NKI front end needs python3 and python3-numpy (ci/setup "
                        "installs them)");
  }
  SandboxResult o;
  try {
    o = run_sandboxed(argv, tracer_environment(), limits);
  } catch (const std::runtime_error& e) {
    throw FrontendError(request.target + ": cannot start the tracer: " + e.what());
  }
  // The kernel's file names itself by its absolute path inside the tracer; the user named it
  // as given.
  auto user_text = [&](std::string text) {
    const std::string abs = target.substr(0, target.rfind(':'));
    if (abs != path) {
      for (size_t at = text.find(abs); at != std::string::npos;
           at = text.find(abs, at + path.size())) {
        text.replace(at, abs.size(), path);
      }
    }
    return trim_newline(text);
  };
  if (o.timed_out) {
    throw FrontendError(request.target + ": tracing took longer than " +
                            std::to_string(limits.timeout_s) +
                            " s and was stopped (NCVERIFY_FRONTEND_TIMEOUT_S raises the limit)",
                        FrontendErrorKind::limit);
  }
  if (o.program_too_large) {
    throw FrontendError(request.target + ": the traced program exceeds " +
                            std::to_string(request.max_program_bytes >> 20) +
                            " MiB (--max-input-mib raises the limit)",
                        FrontendErrorKind::limit);
  }
  if (o.error_too_large) {
    throw FrontendError(request.target +
                            ": the tracer's error output exceeds 1 MiB; it was "
                            "stopped",
                        FrontendErrorKind::limit);
  }
  const bool exited = WIFEXITED(o.status);
  const int code = exited ? WEXITSTATUS(o.status) : -1;
  if (exited && code == 0) {
    if (o.program.empty()) {
      throw FrontendError(request.target + ": the tracer ended without a program");
    }
    return o.program;
  }
  if (exited && code == kExitTamper && !o.error.empty()) {
    throw FrontendError(user_text(o.error), FrontendErrorKind::tamper);
  }
  if (exited && code == kExitLimit && !o.error.empty()) {
    throw FrontendError(user_text(o.error), FrontendErrorKind::limit);
  }
  if (exited && code == 2 && !o.error.empty()) throw FrontendError(user_text(o.error));
  if (WIFSIGNALED(o.status) && (WTERMSIG(o.status) == SIGSYS || WTERMSIG(o.status) == SIGXFSZ)) {
    throw FrontendError(request.target +
                            ": tamper: the kernel made a system call the tracer's "
                            "sandbox forbids (writing files, starting processes, the network, "
                            "other processes) and was killed",
                        FrontendErrorKind::tamper);
  }
  if (WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGXCPU) {
    throw FrontendError(request.target + ": tracing used more CPU time than the " +
                            std::to_string(limits.timeout_s) + " s limit and was stopped",
                        FrontendErrorKind::limit);
  }
  std::string why = WIFSIGNALED(o.status)
                        ? "was killed by signal " + std::to_string(WTERMSIG(o.status))
                        : "exited with status " + std::to_string(code);
  std::string err = user_text(o.error);
  if (err.size() > 4000) err = "..." + err.substr(err.size() - 4000);
  if (exited && code == kSandboxSetupFailed) {
    throw FrontendError(request.target + ": the tracer's sandbox could not be set up:\n" + err);
  }
  throw FrontendError(request.target + ": the NKI front end (" + argv[0] + ") " + why +
                      " (its address space is limited to " + std::to_string(request.memory_mib) +
                      " MiB: --memory-budget-mib)" + (err.empty() ? "" : ":\n" + err));
}

std::vector<std::string> header_comments(std::string_view nkir) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < nkir.size() && nkir[pos] == '#') {
    const size_t end = nkir.find('\n', pos);
    out.emplace_back(nkir.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace ncv::frontend
