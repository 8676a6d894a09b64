// How long `ncverify import` takes on a new-API kernel at seqlen 8192, and its peak memory
// (issue 45's target: <= 5 s and <= 2 GiB). The kernel is frontend/tests/import_bench/
// flash_attention_newapi.py, a flash-attention forward written in the new API's Python style:
// its key-tile loop is unrolled (a Python list indexed by the loop variable, carried
// rebindings); the query-tile loop stays a loop of the program (`symbolic q loop`), or is
// unrolled too when every output tile is kept in a Python list (`collect=true`: the fully
// specialised program, 64 x 64 key-tile bodies). Each variant runs in a child process whose
// wall time and peak resident memory (the largest of ncverify and its python3 tracer,
// getrusage RUSAGE_CHILDREN) are printed. Measured and printed, never asserted.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Measure {
  double seconds = 0;
  double peak_mib = 0;
  int status = -1;
};

// Runs `command` in a fresh child (so the peak is this command's alone).
Measure measure(const std::string& command) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    Measure m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    m.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
    m.status = status;
    const ssize_t n = write(fds[1], &m, sizeof m);
    _exit(n == static_cast<ssize_t>(sizeof m) ? 0 : 1);
  }
  close(fds[1]);
  Measure m;
  const ssize_t n = read(fds[0], &m, sizeof m);
  close(fds[0]);
  int child = 0;
  waitpid(pid, &child, 0);
  return n == static_cast<ssize_t>(sizeof m) ? m : Measure{};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string seqlen = argc > 1 ? argv[1] : "8192";
  const std::string base = std::string("'") + NCV_NCVERIFY_BINARY + "' import '" +
                           NCV_NEWAPI_IMPORT_BENCH + ":flash_fwd' --shape k=d,seqlen --shape " +
                           "v=seqlen,d --param seqlen=" + seqlen + " >/dev/null";
  std::printf("ncverify import of a new-API flash-attention forward at seqlen %s\n",
              seqlen.c_str());
  for (const auto& [label, extra] :
       {std::pair<const char*, const char*>{"symbolic q loop", ""},
        std::pair<const char*, const char*>{"fully unrolled (collect=true)",
                                            " --param collect=true"}}) {
    const Measure m = measure(base + extra);
    std::printf("  %-30s %7.2f s  peak %7.1f MiB%s\n", label, m.seconds, m.peak_mib,
                m.status == 0 ? "" : "  (import FAILED)");
  }
  std::printf("target: <= 5 s and <= 2048 MiB (a shared, loaded machine's figures vary)\n");
  return 0;
}
