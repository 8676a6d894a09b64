// The tracer's sandbox on its own, below the Python checks (kernel_language.py, sandbox.py): a
// Python process given code that does what a hostile kernel would, as if those checks had been
// passed. Each test asserts the refusal and, for a control, that the same process does the
// allowed thing (so the refusal is the sandbox's, not a broken harness).
#include "frontend/sandboxed_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/syscall_filter.h"

namespace ncv::frontend {
namespace {

namespace fs = std::filesystem;

const char* kPython = "/usr/bin/python3";

SandboxResult run_python(const std::string& code, SandboxLimits limits = {}) {
  return run_sandboxed({kPython, "-I", "-B", "-c", code}, {"OPENBLAS_NUM_THREADS=1"}, limits);
}

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("ncverify_sandbox_test_" + std::to_string(getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool killed_by(const SandboxResult& r, int sig) {
  return WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig;
}

bool exited(const SandboxResult& r, int code) {
  return WIFEXITED(r.status) && WEXITSTATUS(r.status) == code;
}

TEST(TracerSandbox, TheProgramArrivesOnItsOwnChannelAndStandardOutputIsDiscarded) {
  const SandboxResult r =
      run_python("import os, sys\nprint('forged program')\nos.write(3, b'kernel k\\n')");
  ASSERT_TRUE(exited(r, 0)) << r.error;
  EXPECT_EQ(r.program, "kernel k\n");
}

TEST(TracerSandbox, WritingAnyFileKillsTheProcessAndLeavesTheFileAlone) {
  if (!syscall_filter_available()) GTEST_SKIP() << "this kernel takes no seccomp filter";
  const fs::path dir = scratch("write");
  const fs::path victim = dir / "ncverify";
  std::ofstream(victim) << "the binary";
  for (const std::string mode : {"w", "a", "r+", "x"}) {
    const fs::path target = mode == "x" ? dir / "new_file" : victim;
    const SandboxResult r =
        run_python("f = open(" + std::string("'") + target.string() + "', '" + mode + "')");
    EXPECT_TRUE(killed_by(r, SIGSYS)) << mode << ": status " << r.status << " " << r.error;
  }
  EXPECT_EQ(read_file(victim), "the binary");
  EXPECT_FALSE(fs::exists(dir / "new_file"));
  // Control: the same file can be read.
  const SandboxResult ok =
      run_python("import os\nos.write(3, open('" + victim.string() + "').read().encode())");
  ASSERT_TRUE(exited(ok, 0)) << ok.error;
  EXPECT_EQ(ok.program, "the binary");
}

TEST(TracerSandbox, ChangingTheFileSystemKillsTheProcess) {
  if (!syscall_filter_available()) GTEST_SKIP() << "this kernel takes no seccomp filter";
  const fs::path dir = scratch("fs");
  std::ofstream(dir / "keep") << "x";
  for (const std::string& call :
       {"os.remove('" + (dir / "keep").string() + "')",
        "os.rename('" + (dir / "keep").string() + "', '" + (dir / "moved").string() + "')",
        "os.mkdir('" + (dir / "sub").string() + "')",
        "os.chmod('" + (dir / "keep").string() + "', 0o777)",
        "os.symlink('/etc/passwd', '" + (dir / "link").string() + "')"}) {
    const SandboxResult r = run_python("import os\n" + call);
    EXPECT_TRUE(killed_by(r, SIGSYS)) << call << ": status " << r.status << " " << r.error;
  }
  EXPECT_TRUE(fs::exists(dir / "keep"));
  EXPECT_FALSE(fs::exists(dir / "moved") || fs::exists(dir / "sub") || fs::exists(dir / "link"));
}

TEST(TracerSandbox, NoNewProcessesAndNoSecondProgram) {
  if (!syscall_filter_available()) GTEST_SKIP() << "this kernel takes no seccomp filter";
  for (const std::string code :
       {"import os\nos.fork()", "import subprocess\nsubprocess.run(['/bin/true'])",
        "import os\nos.execv('/bin/true', ['true'])"}) {
    const SandboxResult r = run_python(code);
    EXPECT_TRUE(killed_by(r, SIGSYS)) << code << ": status " << r.status << " " << r.error;
  }
  // Threads are not processes: allowed.
  const SandboxResult ok = run_python(
      "import os, threading\nt = threading.Thread(target=lambda: None)\nt.start()\nt.join()\n"
      "os.write(3, b'joined')");
  ASSERT_TRUE(exited(ok, 0)) << ok.error;
  EXPECT_EQ(ok.program, "joined");
}

TEST(TracerSandbox, NoNetworkAndNoSignalsToOthers) {
  if (!syscall_filter_available()) GTEST_SKIP() << "this kernel takes no seccomp filter";
  const SandboxResult net = run_python(
      "import socket\ntry:\n  socket.socket()\nexcept PermissionError:\n"
      "  import os; os.write(3, b'refused')");
  ASSERT_TRUE(exited(net, 0)) << net.error;
  EXPECT_EQ(net.program, "refused");
  const SandboxResult sig = run_python("import os\nos.kill(os.getppid(), 0)");
  EXPECT_TRUE(killed_by(sig, SIGSYS)) << sig.status << " " << sig.error;
}

TEST(TracerSandbox, APrivateEmptyWorkingDirectoryAndAMinimalEnvironmentGoneAfterwards) {
  const SandboxResult r = run_python(
      "import os, json\n"
      "os.write(3, json.dumps([os.getcwd(), os.listdir('.'), sorted(os.environ)]).encode())");
  ASSERT_TRUE(exited(r, 0)) << r.error;
  EXPECT_NE(r.program.find("ncverify-trace-"), std::string::npos) << r.program;
  EXPECT_NE(r.program.find("[]"), std::string::npos) << r.program;  // nothing in it
  for (const char* leaked : {"\"PWD\"", "\"USER\"", "\"PYTHONPATH\"", "\"SSH_AUTH_SOCK\""}) {
    EXPECT_EQ(r.program.find(leaked), std::string::npos) << leaked << " in " << r.program;
  }
  const std::string cwd = r.program.substr(2, r.program.find('"', 2) - 2);
  EXPECT_FALSE(fs::exists(cwd)) << cwd;
}

TEST(TracerSandbox, MemoryTimeAndOutputAreLimited) {
  SandboxLimits small;
  small.memory_bytes = int64_t{512} << 20;
  const SandboxResult mem = run_python("x = bytearray(1 << 31)", small);
  EXPECT_TRUE(exited(mem, 1)) << mem.status;
  EXPECT_NE(mem.error.find("MemoryError"), std::string::npos) << mem.error;

  SandboxLimits quick;
  quick.timeout_s = 1;
  const SandboxResult spin = run_python("while True: pass", quick);
  EXPECT_TRUE(spin.timed_out);

  SandboxLimits little;
  little.max_program_bytes = 1 << 20;
  const SandboxResult flood =
      run_python("import os\nwhile True: os.write(3, b'x' * 65536)", little);
  EXPECT_TRUE(flood.program_too_large);
  EXPECT_LE(flood.program.size(), (size_t{1} << 20) + 65536);
}

}  // namespace
}  // namespace ncv::frontend
