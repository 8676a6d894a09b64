#include "solver/z3_query.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ncv::solver {

namespace {

using Clock = std::chrono::steady_clock;

// After the first interrupt, how often the watchdog repeats it until the check returns.
// Z3_solver_check resets the context's cancel count when it starts (scoped_rlimit's push,
// src/api/api_solver.cpp and src/util/rlimit.cpp at z3-4.8.12), so an interrupt that lands just
// before that is lost; the next one is not.
constexpr std::chrono::milliseconds kRepeat{2};

// One thread for the whole process: it sleeps until the earliest deadline armed, interrupts the
// contexts whose deadline has passed, and repeats that every kRepeat until they are disarmed.
// Arming costs a lock (and a wake-up only when the new deadline is the earliest), so it can run
// before every query: a proof asks thousands.
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog w;
    return w;
  }

  uint64_t arm(Z3_context ctx, Clock::time_point deadline) {
    std::lock_guard lock(mu_);
    const uint64_t id = next_id_++;
    armed_.push_back({id, ctx, deadline, false});
    if (deadline < wake_) cv_.notify_one();
    return id;
  }

  // After this returns no interrupt for `id` is sent any more. Returns whether one was sent.
  bool disarm(uint64_t id) {
    std::lock_guard lock(mu_);
    const auto it =
        std::find_if(armed_.begin(), armed_.end(), [id](const Armed& a) { return a.id == id; });
    const bool fired = it->fired;
    armed_.erase(it);
    return fired;
  }

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  struct Armed {
    uint64_t id;
    Z3_context ctx;
    Clock::time_point deadline;  // of the next interrupt
    bool fired;
  };

  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  void run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      const Clock::time_point now = Clock::now();
      wake_ = Clock::time_point::max();
      for (Armed& a : armed_) {
        if (a.deadline <= now) {
          // Under the lock: disarm() cannot return in between, so the context is still querying
          // (or just finished; check_until then clears what this leaves behind).
          Z3_interrupt(a.ctx);
          a.fired = true;
          a.deadline = now + kRepeat;
        }
        wake_ = std::min(wake_, a.deadline);
      }
      if (wake_ == Clock::time_point::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, wake_);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Armed> armed_;  // at most one per querying thread
  uint64_t next_id_ = 1;
  Clock::time_point wake_ = Clock::time_point::max();  // when run() wakes next
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace

void clear_interrupt(z3::context& ctx) {
  z3::solver empty(ctx, z3::solver::simple());
  try {
    empty.check();
  } catch (const z3::exception&) {
    // A check of no assertions does not fail. Should it all the same (out of memory), the count
    // stays raised and what the caller evaluates next throws: an error, never a wrong answer.
  }
}

QueryResult check_until(z3::solver& s, Clock::time_point deadline) {
  // Disarmed on every way out, so no interrupt reaches a context after its query (or its thread).
  struct Guard {
    Watchdog& w = Watchdog::instance();
    uint64_t id;
    bool fired = false;
    Guard(Z3_context ctx, Clock::time_point deadline) : id(w.arm(ctx, deadline)) {}
    bool disarm() {
      if (id != 0) fired = w.disarm(id);
      id = 0;
      return fired;
    }
    ~Guard() { disarm(); }
  } armed(s.ctx(), deadline);
  QueryResult out;
  try {
    out.result = s.check();
  } catch (const z3::exception& e) {
    out.result = z3::unknown;
    out.why = e.msg();
  }
  out.timed_out = armed.disarm();
  if (out.timed_out) clear_interrupt(s.ctx());
  if (out.result == z3::unknown && out.why.empty()) {
    out.why = out.timed_out ? "timeout" : std::string(s.reason_unknown());
  }
  return out;
}

QueryResult check_within(z3::solver& s, unsigned timeout_ms) {
  return check_until(s, Clock::now() + std::chrono::milliseconds(timeout_ms));
}

}  // namespace ncv::solver
