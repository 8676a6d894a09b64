#include "tools/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <streambuf>

#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_quiet{false};

// Guards the line on the terminal: who owns it, whether it is drawn, and every write to it.
std::mutex g_mutex;
const Progress* g_owner = nullptr;  // the Progress that may print (the outermost one)
bool g_line_drawn = false;          // a "\r" line is on the terminal now

// Seconds of quiet before the first line and between plain lines: 2, or
// NCVERIFY_PROGRESS_EVERY_S (tests set 0 to see every line without waiting).
std::chrono::duration<double> interval() {
  static const double seconds = [] {
    const char* env = std::getenv("NCVERIFY_PROGRESS_EVERY_S");
    if (env == nullptr) return 2.0;
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    return end != env && *end == '\0' && v >= 0 && v < 1e6 ? v : 2.0;
  }();
  return std::chrono::duration<double>(seconds);
}

// How often the terminal line is redrawn at most (the ticker's period).
constexpr std::chrono::milliseconds kRedraw{250};

const char* mode_env() {
  const char* env = std::getenv("NCVERIFY_PROGRESS");
  return env == nullptr || *env == '\0' ? "auto" : env;
}

// The stream buffer put in front of std::cout (when standard output is a terminal too) and
// std::cerr while a terminal line is drawn: it erases the line before any text passes, so
// results and messages never run into it, and remembers whether its stream ended a line (the
// ticker draws only then, so it never cuts a half-written line).
class ErasingBuf : public std::streambuf {
 public:
  void attach(std::streambuf* next) {
    next_ = next;
    at_line_start_ = true;
  }
  std::streambuf* next() const { return next_; }
  bool at_line_start() const { return at_line_start_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override { return next_->pubsync(); }

 private:
  std::streambuf* next_ = nullptr;
  bool at_line_start_ = true;
};

ErasingBuf g_out_buf, g_err_buf;
bool g_out_wrapped = false, g_err_wrapped = false;

// Writes to the terminal behind std::cerr, past the erasing buffer. Called with g_mutex held.
void write_err_locked(const std::string& text) {
  std::streambuf* err = g_err_wrapped ? g_err_buf.next() : std::cerr.rdbuf();
  err->sputn(text.data(), static_cast<std::streamsize>(text.size()));
  err->pubsync();
}

void erase_line_locked() {
  if (!g_line_drawn) return;
  write_err_locked("\r\033[K");
  g_line_drawn = false;
}

std::streamsize ErasingBuf::xsputn(const char* s, std::streamsize n) {
  if (n <= 0) return 0;
  const std::lock_guard<std::mutex> lock(g_mutex);
  erase_line_locked();
  const std::streamsize written = next_->sputn(s, n);
  if (written > 0) at_line_start_ = s[written - 1] == '\n';
  return written;
}

// Swaps a stream's buffer without clearing its error state (rdbuf(sb) calls clear(), and a
// failed write must still reach finish_standard_output).
void swap_buf(std::ostream& os, std::streambuf* sb) {
  const std::ios_base::iostate state = os.rdstate();
  os.rdbuf(sb);
  os.setstate(state);
}

// Columns of the terminal on standard error (0: unknown).
size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0) return ws.ws_col;
  return 0;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

void set_progress_quiet(bool quiet) {
  g_quiet = quiet;
}

void check_progress_environment() {
  const std::string mode = mode_env();
  if (mode != "auto" && mode != "always" && mode != "never") {
    throw UsageError("NCVERIFY_PROGRESS='" + mode +
                     "' is not one of always, never or auto (progress lines on standard error)");
  }
}

Progress::Progress(std::string command, std::string unit, int64_t total)
    : command_(std::move(command)),
      unit_(std::move(unit)),
      total_(total),
      start_(Clock::now()),
      last_(start_) {
  const std::string mode = mode_env();
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (g_quiet || mode == "never" || (mode != "always" && !tty)) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_owner != nullptr) return;  // an outer job has the line
  g_owner = this;
  style_ = tty ? Style::terminal : Style::lines;
  if (style_ != Style::terminal) return;
  if (isatty(STDOUT_FILENO) == 1) {
    g_out_buf.attach(std::cout.rdbuf());
    swap_buf(std::cout, &g_out_buf);
    g_out_wrapped = true;
  }
  g_err_buf.attach(std::cerr.rdbuf());
  swap_buf(std::cerr, &g_err_buf);
  g_err_wrapped = true;
  ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  if (style_ == Style::silent) return;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (printed_) {
    const std::string closing = "ncverify " + command_ + ": " + std::to_string(done_) + "/" +
                                std::to_string(total_) + " " + unit_ + " done in " +
                                seconds_text(elapsed_s()) + " s\n";
    if (style_ == Style::terminal) {
      erase_line_locked();
      write_err_locked(closing);
    } else {
      std::cerr << closing;
    }
  }
  if (g_out_wrapped) swap_buf(std::cout, g_out_buf.next());
  if (g_err_wrapped) swap_buf(std::cerr, g_err_buf.next());
  g_out_wrapped = g_err_wrapped = false;
  g_owner = nullptr;
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

std::string Progress::status_locked() const {
  std::string s = "ncverify " + command_ + ": " + std::to_string(done_) + "/" +
                  std::to_string(total_) + " " + unit_ + ", " + seconds_text(elapsed_s()) + " s";
  if (!now_.empty()) {
    s += " (now: " + now_ + ")";
  } else if (!last_item_.empty()) {
    s += " (last: " + last_item_ + ")";
  }
  return s;
}

// Prints the status if it is time to: `now` (an update or start) or from the ticker.
void Progress::draw_locked(bool now) {
  const auto t = Clock::now();
  if (t - start_ < interval()) return;
  if (style_ == Style::lines) {
    // One plain line per update, at most one per interval.
    if (!now || (printed_ && t - last_ < interval())) return;
    last_ = t;
    printed_ = true;
    std::cerr << status_locked() << "\n";
    return;
  }
  // The terminal line: at every update when the interval is 0, else at most every kRedraw; never
  // while a stream has half a line on the terminal.
  const bool due = (now && interval().count() == 0) || !printed_ || t - last_ >= kRedraw;
  if (!due || !g_err_buf.at_line_start() || (g_out_wrapped && !g_out_buf.at_line_start())) {
    return;
  }
  std::fflush(stdout);
  std::string line = status_locked();
  const size_t width = terminal_width();
  if (width > 1 && line.size() > width - 1) {
    line.resize(width - 1);
    // Never end inside a UTF-8 sequence.
    while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) {
      line.pop_back();
    }
    if (!line.empty() && (static_cast<unsigned char>(line.back()) & 0x80) != 0) line.pop_back();
  }
  write_err_locked("\r\033[K" + line);
  g_line_drawn = true;
  last_ = t;
  printed_ = true;
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(g_mutex);
  while (!stop_) {
    wake_.wait_for(lock, kRedraw);
    if (!stop_) draw_locked(false);
  }
}

void Progress::start(const std::string& item) {
  if (style_ == Style::silent) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  now_ = item;
  if (style_ == Style::terminal) draw_locked(true);
}

void Progress::update(int64_t done, const std::string& item) {
  if (style_ == Style::silent) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  done_ = done;
  now_.clear();
  last_item_ = item;
  draw_locked(true);
}

void Progress::set_total(int64_t total) {
  if (style_ == Style::silent) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  total_ = total;
}

void Progress::finish(int64_t done) {
  if (style_ == Style::silent) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  done_ = done;
}

void print_stdout(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  std::cout << text;
}

}  // namespace ncv::cli
