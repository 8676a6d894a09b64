// Independent jobs run on worker threads, started by priority and then in the order they were
// added, while the caller consumes their results in the order it chooses (so what it prints does
// not depend on which worker finished first). `report` uses it for its rows, proofs and page
// sections; any command whose items are independent can.
//
// What a job may touch: its own result slot, and shared state that is safe across threads. The
// libraries a report job calls are: the interpreter keeps its scratch buffers per thread
// (model/interp/host_memory.cpp, model/semantics/matmul.cpp), symbols and expression nodes are
// interned under a mutex (model/ir/expr.cpp), Z3 has one context per thread
// (solver/z3_context.h; the workers live as long as the pool, so each keeps its context),
// OpenBLAS runs one thread per caller (oracle/blas_threads.cpp), and equiv already runs option
// sets on threads (equiv/equiv.cpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace ncv::cli {

// The worker count of `--jobs 0`: the cores this process may use (at least 1).
unsigned default_job_threads();

class JobPool {
 public:
  // `threads` workers (0: default_job_threads()).
  explicit JobPool(unsigned threads);
  // Jobs not started yet are dropped, running ones finish; then the workers are joined.
  ~JobPool();
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

  // Queues a job; returns its index (0, 1, ... in the order added). Among the jobs not started, a
  // worker takes one of the highest `priority` first, the earliest added among those: a caller
  // that knows which jobs are long starts them first, so that no long one is left for the end
  // while the other workers idle.
  size_t add(std::function<void()> job, int priority = 0);

  // Blocks until job `index` has run; rethrows what it threw. What the job wrote is visible to
  // the caller afterwards.
  void wait(size_t index);

  // Seconds job `index` took on its worker, wall clock and CPU time of the worker's thread (valid
  // after wait(index); the CPU time leaves out threads the job starts itself, and on a loaded
  // machine it is the steadier of the two).
  double seconds(size_t index) const;
  double cpu_seconds(size_t index) const;

 private:
  struct Job {
    std::function<void()> run;
    bool done = false;
    std::exception_ptr error;
    double seconds = 0, cpu_seconds = 0;
  };
  void work();

  mutable std::mutex mu_;
  std::condition_variable queued_, finished_;
  std::vector<std::shared_ptr<Job>> jobs_;    // every job added (a worker holds its own)
  std::set<std::pair<int, size_t>> waiting_;  // (-priority, index) of the jobs not started
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ncv::cli
