// Progress of a long command on standard error: nothing for the first two seconds (short runs
// stay quiet), then one line at most every two seconds ("ncverify check: 1200/100000 cases,
// 14.2 s"), and a closing line if anything was printed. Standard output, which carries results
// and JSON, is never touched. NCVERIFY_PROGRESS_EVERY_S replaces the two seconds (0: every
// update).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ncv::cli {

class Progress {
 public:
  // `command` names the job ("check"), `unit` what is counted ("cases"), `total` how many.
  Progress(std::string command, std::string unit, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of the total are finished; `item` names the one just finished (optional).
  void update(int64_t done, const std::string& item = "");
  // For jobs that plan as they go (check's shape sweep): the total known so far, and the final
  // count without printing a progress line (the closing line prints it).
  void set_total(int64_t total) { total_ = total; }
  void finish(int64_t done) { done_ = done; }

 private:
  double elapsed_s() const;

  std::string command_, unit_;
  int64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
};

}  // namespace ncv::cli
