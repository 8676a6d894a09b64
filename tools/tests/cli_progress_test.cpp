// Progress lines (tools/progress.h): shown on a terminal only, never under a pipe, silenced by
// --quiet, never mixed into standard output. The terminal is a pseudo-terminal (forkpty); every
// run uses NCVERIFY_PROGRESS_EVERY_S=0 so a short command prints at every update.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <regex>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// A small check: five cases at one small shape, well under a second.
const std::vector<std::string> kSmallCheck = {"check",   "sd_attention", "--param", "seqlen=128",
                                              "--param", "d_head=16",    "--cases", "5"};
// Smaller still, where one update is enough.
const std::vector<std::string> kTinyCheck = {"check",   "sd_attention", "--param", "seqlen=128",
                                             "--param", "d_head=16",    "--cases", "1"};

struct EnvVar {
  std::string name, value;
};

// Runs the binary with standard error (and standard input) on a fresh pseudo-terminal 200
// columns wide; standard output on the terminal too, or into `stdout_file` when given. Returns
// everything the terminal received (a pty turns "\n" into "\r\n").
CliResult run_on_terminal(const std::vector<std::string>& args, const std::vector<EnvVar>& env,
                          const fs::path& stdout_file = {}) {
  CliResult r;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 200;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) return r;
  if (pid == 0) {
    for (const EnvVar& e : env) setenv(e.name.c_str(), e.value.c_str(), 1);
    if (!stdout_file.empty()) {
      const int fd = open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
      close(fd);
    }
    std::vector<char*> argv;
    std::string binary = NCVERIFY_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      r.err.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: the child closed its side of the terminal
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!stdout_file.empty()) r.out = read_file(stdout_file);
  return r;
}

// Runs the binary with standard output and standard error redirected to files (not terminals).
CliResult run_redirected(const std::vector<std::string>& args, const std::string& env_prefix) {
  const fs::path out_path = temp_dir() / "progress_stdout.txt";
  const fs::path err_path = temp_dir() / "progress_stderr.txt";
  std::string cmd = env_prefix + " " + shell_quote(NCVERIFY_BINARY);
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += shell_quote(a);
  }
  cmd += " >" + shell_quote(out_path.string()) + " 2>" + shell_quote(err_path.string()) +
         " </dev/null";
  CliResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

std::vector<std::string> with(std::vector<std::string> args, const std::string& extra) {
  args.push_back(extra);
  return args;
}

const std::vector<EnvVar> kEveryUpdate = {{"NCVERIFY_PROGRESS_EVERY_S", "0"}};

TEST(CliProgress, NoProgressWhenStandardErrorIsNotATerminal) {
  // Every update would print (interval 0), yet a file is not a terminal: not a byte.
  const CliResult r = run_redirected(kTinyCheck, "NCVERIFY_PROGRESS_EVERY_S=0");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "") << describe(r);
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << describe(r);
}

TEST(CliProgress, ATerminalGetsOneUpdatingLineWithCountAndElapsedTime) {
  const CliResult r = run_on_terminal(kSmallCheck, kEveryUpdate);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  // Rewritten in place: carriage return and erase-line before each status.
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("\r\x1b\\[Kncverify check: [0-5]/5 cases, [0-9]+\\.[0-9] s \\(now: "
                        "sd_attention d_head=16 seqlen=128\\)")))
      << describe(r);
  EXPECT_NE(r.err.find("\r\x1b[Kncverify check: 5/5 cases done in "), std::string::npos)
      << describe(r);
  // The results follow the erased line, never glued to it.
  const size_t verdict = r.err.find("PASS");
  ASSERT_NE(verdict, std::string::npos) << describe(r);
  const size_t line_start = r.err.rfind('\n', verdict);
  ASSERT_NE(line_start, std::string::npos) << describe(r);
  EXPECT_EQ(r.err.substr(line_start, verdict - line_start).find("ncverify check:"),
            std::string::npos)
      << describe(r);
}

TEST(CliProgress, AShortCommandStaysQuietOnATerminalToo) {
  // Nothing before the first delay (two seconds by default; 20 here, so a loaded machine does
  // not make the one case look long).
  const CliResult r = run_on_terminal(kTinyCheck, {{"NCVERIFY_PROGRESS_EVERY_S", "20"}});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("PASS"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("ncverify check:"), std::string::npos) << describe(r);
}

TEST(CliProgress, StandardOutputOnTheTerminalNeverRunsIntoTheLine) {
  // prove prints a block per generation while the line is up.
  const CliResult dump = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  const std::string file = write_temp("progress_sd.nkir", dump.out).string();
  const CliResult r = run_on_terminal({"prove", file, "--gen", "all"}, kEveryUpdate);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("ncverify prove: 3/3 programs done in "), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("(now: " + file + " on trn2)"), std::string::npos) << describe(r);
  size_t blocks = 0;
  const std::string block = "prove " + file + " (";
  for (size_t at = r.err.find(block); at != std::string::npos; at = r.err.find(block, at + 1)) {
    ++blocks;
    // Each result line starts a terminal line, or follows the erased progress line.
    const bool fresh_line =
        at == 0 || r.err[at - 1] == '\n' || (at >= 4 && r.err.compare(at - 4, 4, "\r\x1b[K") == 0);
    EXPECT_TRUE(fresh_line) << "at " << at << "\n" << describe(r);
  }
  EXPECT_EQ(blocks, 3u) << describe(r);
}

TEST(CliProgress, QuietSilencesTheTerminalBeforeOrAfterTheSubcommand) {
  std::vector<std::string> before = {"--quiet"};
  before.insert(before.end(), kTinyCheck.begin(), kTinyCheck.end());
  for (const std::vector<std::string>& args : {before, with(kTinyCheck, "--quiet")}) {
    const CliResult r = run_on_terminal(args, kEveryUpdate);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.err.find("ncverify check:"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("PASS"), std::string::npos) << describe(r);
  }
  const CliResult help = run_cli({"--help"});
  EXPECT_NE(help.out.find("--quiet"), std::string::npos) << describe(help);
  // NCVERIFY_PROGRESS=never too; a value it does not know is a usage error.
  const CliResult never = run_on_terminal(
      kTinyCheck, {{"NCVERIFY_PROGRESS_EVERY_S", "0"}, {"NCVERIFY_PROGRESS", "never"}});
  EXPECT_EQ(never.err.find("ncverify check:"), std::string::npos) << describe(never);
  const CliResult bad = run_redirected(kTinyCheck, "NCVERIFY_PROGRESS=sometimes");
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("NCVERIFY_PROGRESS='sometimes'"), std::string::npos) << describe(bad);
}

TEST(CliProgress, JsonOnStandardOutputStaysJsonWhileProgressIsOn) {
  // Forced on with standard error redirected: plain lines on standard error only.
  const CliResult forced = run_redirected(with(kTinyCheck, "--json"),
                                          "NCVERIFY_PROGRESS=always NCVERIFY_PROGRESS_EVERY_S=0");
  EXPECT_EQ(forced.exit_code, 0) << describe(forced);
  EXPECT_NE(forced.err.find("ncverify check: 1/1 cases done in "), std::string::npos)
      << describe(forced);
  EXPECT_EQ(forced.err.find('\r'), std::string::npos) << describe(forced);
  EXPECT_TRUE(nlohmann::json::accept(forced.out)) << describe(forced);
  // On a terminal, with standard output in a file.
  const fs::path out = temp_dir() / "progress_json.txt";
  const CliResult tty = run_on_terminal(with(kTinyCheck, "--json"), kEveryUpdate, out);
  EXPECT_EQ(tty.exit_code, 0) << describe(tty);
  EXPECT_NE(tty.err.find("ncverify check: 1/1 cases done in "), std::string::npos) << describe(tty);
  EXPECT_TRUE(nlohmann::json::accept(tty.out)) << describe(tty);
  EXPECT_EQ(tty.out.find("ncverify check: "), std::string::npos) << describe(tty);
  EXPECT_EQ(tty.out.find('\r'), std::string::npos) << describe(tty);
}

}  // namespace
}  // namespace ncv::cli_test
