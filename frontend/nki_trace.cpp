#include "frontend/nki_trace.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

extern char** environ;

namespace ncv::frontend {

namespace {

constexpr size_t kMaxOutputBytes = size_t{256} << 20;

std::string python_interpreter() {
  if (const char* p = std::getenv("NCVERIFY_PYTHON"); p != nullptr && *p != '\0') return p;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

std::string tracer_script() {
  std::string dir = NCVERIFY_FRONTEND_PY_DIR;
  if (const char* d = std::getenv("NCVERIFY_FRONTEND_DIR"); d != nullptr && *d != '\0') dir = d;
  return dir + "/ncverify_trace.py";
}

int timeout_seconds() {
  if (const char* t = std::getenv("NCVERIFY_FRONTEND_TIMEOUT_S"); t != nullptr) {
    char* end = nullptr;
    const long v = std::strtol(t, &end, 10);
    if (end != t && *end == '\0' && v > 0 && v < 86400) return static_cast<int>(v);
  }
  return 300;
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw FrontendError(std::string("pipe: ") + strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void close_end(int k) {
    if (fd[k] >= 0) close(fd[k]);
    fd[k] = -1;
  }
};

struct Output {
  std::string out, err;
  int status = 0;
  bool timed_out = false, too_large = false;
};

Output run_process(const std::vector<std::string>& argv) {
  Pipe out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw FrontendError("cannot run " + argv[0] + " (" + strerror(rc) +
                        "): the NKI front end needs python3 and python3-numpy (ci/setup "
                        "installs them)");
  }
  out.close_end(1);
  err.close_end(1);
  Output o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds());
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.timed_out = true;
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t r = read(fds[k].fd, buf, sizeof buf);
      if (r > 0) {
        sinks[k]->append(buf, static_cast<size_t>(r));
        if (sinks[k]->size() > kMaxOutputBytes) {
          o.too_large = true;
          open_fds = 0;
          break;
        }
      } else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  // The child may close its output and go on running: the deadline still holds.
  while (!o.timed_out && !o.too_large) {
    const pid_t done = waitpid(pid, &o.status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return o;
    if (std::chrono::steady_clock::now() >= deadline) {
      o.timed_out = true;
      break;
    }
    usleep(10'000);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, &o.status, 0) < 0 && errno == EINTR) {
  }
  return o;
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

std::string trace_nki(const TraceRequest& request) {
  const std::string path = request.target.substr(0, request.target.rfind(':'));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw FrontendError(path + ": no such file (expected FILE.py:FUNCTION)");
  }
  std::vector<std::string> argv = {python_interpreter(), "-I", "-B", tracer_script(),
                                   request.target};
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
  const Output o = run_process(argv);
  if (o.timed_out) {
    throw FrontendError(request.target + ": tracing took longer than " +
                        std::to_string(timeout_seconds()) +
                        " s and was stopped (NCVERIFY_FRONTEND_TIMEOUT_S raises the limit)");
  }
  if (o.too_large) throw FrontendError(request.target + ": the traced program exceeds 256 MiB");
  if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) return o.out;
  if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 2 && !o.err.empty()) {
    throw FrontendError(trim_newline(o.err));
  }
  std::string why = WIFSIGNALED(o.status)
                        ? "was killed by signal " + std::to_string(WTERMSIG(o.status))
                        : "exited with status " + std::to_string(WEXITSTATUS(o.status));
  std::string err = trim_newline(o.err);
  if (err.size() > 4000) err = "..." + err.substr(err.size() - 4000);
  throw FrontendError(request.target + ": the NKI front end (" + argv[0] + ") " + why +
                      (err.empty() ? "" : ":\n" + err));
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
