#include "frontend/sandboxed_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "frontend/syscall_filter.h"

namespace ncv::frontend {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + strerror(errno));
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

// A private empty directory for the child's working directory, removed with what it holds.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    std::string tmpl = base + "/ncverify-trace-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("cannot create a scratch directory in " + base + ": " +
                               strerror(errno));
    }
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Async-signal-safe writes for the child between fork and execve.
void child_fail(const char* what, int err) {
  const char* why = strerror(err);
  [[maybe_unused]] ssize_t r = write(2, "ncverify tracer sandbox: ", 25);
  r = write(2, what, strlen(what));
  r = write(2, ": ", 2);
  r = write(2, why, strlen(why));
  r = write(2, "\n", 1);
  _exit(kSandboxSetupFailed);
}

void set_limit(int resource, rlim_t value, const char* what) {
  const rlimit l{value, value};  // hard = soft: the child cannot raise it again
  if (setrlimit(resource, &l) != 0) child_fail(what, errno);
}

[[noreturn]] void run_child(const char* path, char* const* argv, char* const* envp,
                            const char* workdir, int program_fd, int error_fd,
                            SyscallFilter& filter, const SandboxLimits& limits) {
  // Dies with its parent: an interrupted ncverify leaves no tracer behind.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int null_fd = open("/dev/null", O_RDWR);
  if (null_fd < 0) child_fail("open /dev/null", errno);
  if (dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 || dup2(error_fd, 2) < 0 ||
      dup2(program_fd, 3) < 0) {
    child_fail("dup2", errno);
  }
  // Nothing else of ncverify's is inherited (its output files, its inputs).
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
#endif
  {
    for (int fd = 4; fd < 65536; ++fd) close(fd);
  }
  if (chdir(workdir) != 0) child_fail("chdir to the scratch directory", errno);
  set_limit(RLIMIT_AS, static_cast<rlim_t>(limits.memory_bytes), "RLIMIT_AS");
  // CPU time a little past the wall deadline: a backstop if the parent's kill is late.
  set_limit(RLIMIT_CPU, static_cast<rlim_t>(limits.timeout_s) + 5, "RLIMIT_CPU");
  set_limit(RLIMIT_FSIZE, 0, "RLIMIT_FSIZE");  // no regular file grows
  set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE");
  set_limit(RLIMIT_NOFILE, 256, "RLIMIT_NOFILE");
  set_own_pid(filter, static_cast<long>(getpid()));
  if (const int err = install_syscall_filter(filter); err != 0) {
    // A kernel without seccomp (ENOSYS, EINVAL): the limits above and the tracer's own checks
    // remain (syscall_filter_available); any other failure is an error.
    if (err != ENOSYS && err != EINVAL) child_fail("installing the system-call filter", err);
  }
  execve(path, argv, envp);
  child_fail("execve", errno);
  _exit(kSandboxSetupFailed);
}

}  // namespace

SandboxResult run_sandboxed(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env, const SandboxLimits& limits) {
  ScratchDir scratch;
  Pipe program, error;
  // Everything the child needs is built here: between fork and execve it may not allocate.
  std::vector<char*> args, envs;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // HOME and TMPDIR are the scratch directory: nothing looks up the user (a lookup may try the
  // network) or writes beside the user's files.
  const std::string home = "HOME=" + scratch.path, tmp = "TMPDIR=" + scratch.path;
  envs.push_back(const_cast<char*>(home.c_str()));
  envs.push_back(const_cast<char*>(tmp.c_str()));
  for (const std::string& e : env) envs.push_back(const_cast<char*>(e.c_str()));
  envs.push_back(nullptr);
  const char* path = args[0];
  SyscallFilter filter = tracer_syscall_filter(path);
  if (filter.code.empty()) {
    throw std::runtime_error("the tracer's system-call filter does not know this architecture");
  }
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    run_child(path, args.data(), envs.data(), scratch.path.c_str(), program.fd[1], error.fd[1],
              filter, limits);
  }
  program.close_end(1);
  error.close_end(1);

  SandboxResult o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limits.timeout_s);
  pollfd fds[2] = {{program.fd[0], POLLIN, 0}, {error.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.program, &o.error};
  const size_t caps[2] = {limits.max_program_bytes, limits.max_error_bytes};
  bool* over[2] = {&o.program_too_large, &o.error_too_large};
  int open_fds = 2;
  static thread_local char buf[65536];
  bool stop = false;
  while (open_fds > 0 && !stop) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.timed_out = true;
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int k = 0; k < 2 && !stop; ++k) {
      if (fds[k].fd < 0 || (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t r = read(fds[k].fd, buf, sizeof buf);
      if (r > 0) {
        sinks[k]->append(buf, static_cast<size_t>(r));
        if (sinks[k]->size() > caps[k]) {
          *over[k] = true;
          stop = true;
        }
      } else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  // The child may close its channels and go on running: the deadline still holds.
  while (!o.timed_out && !stop) {
    const pid_t done = waitpid(pid, &o.status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return o;
    if (std::chrono::steady_clock::now() >= deadline) {
      o.timed_out = true;
      break;
    }
    usleep(2'000);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, &o.status, 0) < 0 && errno == EINTR) {
  }
  return o;
}

}  // namespace ncv::frontend
