#include "tools/progress.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace ncv::cli {

namespace {

// Seconds of quiet before the first line and between lines: 2, or NCVERIFY_PROGRESS_EVERY_S
// (tests set 0 to see every line without waiting).
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

}  // namespace

Progress::Progress(std::string command, std::string unit, int64_t total)
    : command_(std::move(command)),
      unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() {
  if (!printed_) return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", elapsed_s());
  std::cerr << "ncverify " << command_ << ": " << done_ << "/" << total_ << " " << unit_
            << " done in " << seconds << " s\n";
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(int64_t done, const std::string& item) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < interval() || (printed_ && now - last_ < interval())) return;
  last_ = now;
  printed_ = true;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", elapsed_s());
  std::cerr << "ncverify " << command_ << ": " << done << "/" << total_ << " " << unit_
            << (item.empty() ? "" : " (last: " + item + ")") << ", " << seconds << " s\n";
}

}  // namespace ncv::cli
