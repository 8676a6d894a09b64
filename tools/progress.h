// Progress of a long command on standard error. The rules:
//  - Only when standard error is a terminal (isatty(2)) and the command line has no --quiet.
//    Piped or redirected, a command prints no progress at all, so logs and captured output stay
//    what they were. Standard output (results, JSON) is never written here.
//  - Nothing for the first two seconds (short runs stay quiet); then, on the terminal, one line
//    that rewrites itself in place ("\r", then erase to the end of the line), redrawn a few times
//    a second from a ticker thread so the elapsed time moves even while one item takes long:
//      ncverify prove: 3/12 programs, 14.2 s (now: flash_fwd[causal] on trn2)
//    cut to the terminal's width. Whatever the command writes to std::cout or std::cerr while
//    the line is up erases it first (the line is redrawn below the text on the next tick).
//  - A closing line when anything was printed: "ncverify prove: 12/12 programs done in 31.0 s".
//  - NCVERIFY_PROGRESS=always|never|auto (default auto: the terminal rule above). `always` prints
//    also when standard error is not a terminal, one plain line per update (no "\r") at most
//    every interval; `never` prints nothing. --quiet wins over both. Another value is a usage
//    error (check_progress_environment, called before the command runs).
//  - NCVERIFY_PROGRESS_EVERY_S replaces the two seconds of the first delay and of the interval
//    between plain lines (0: from the start, every update; tests use it).
//  - One line per process: a Progress created while another is alive (a command running
//    another's job) stays silent; the outer one keeps the line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <string>
#include <thread>

namespace ncv::cli {

// --quiet: no Progress prints anything from now on (the command line sets it once per run).
void set_progress_quiet(bool quiet);

// Throws UsageError when NCVERIFY_PROGRESS is set to something other than always, never or auto.
void check_progress_environment();

class Progress {
 public:
  // `command` names the job ("check"), `unit` what is counted ("cases"), `total` how many.
  Progress(std::string command, std::string unit, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // What is being done now (shown as "now: ITEM" until the next update or start).
  void start(const std::string& item);
  // `done` of the total are finished; `item` names the one just finished (optional).
  void update(int64_t done, const std::string& item = "");
  // For jobs that plan as they go (check's shape sweep): the total known so far, and the final
  // count without printing a progress line (the closing line prints it).
  void set_total(int64_t total);
  void finish(int64_t done);

 private:
  enum class Style { silent, lines, terminal };

  double elapsed_s() const;
  std::string status_locked() const;
  void draw_locked(bool now);
  void tick();

  std::string command_, unit_;
  int64_t total_ = 0, done_ = 0;
  std::string now_, last_item_;
  std::chrono::steady_clock::time_point start_, last_;
  Style style_ = Style::silent;
  bool printed_ = false;
  bool stop_ = false;
  std::condition_variable wake_;
  std::thread ticker_;
};

// printf-style text on standard output through std::cout rather than stdio, so that a progress
// line on the terminal is erased before the text reaches it (commands that print tables while a
// Progress is alive use this instead of std::printf).
[[gnu::format(printf, 1, 2)]] void print_stdout(const char* format, ...);

}  // namespace ncv::cli
