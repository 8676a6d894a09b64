#include "tools/job_pool.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>

namespace ncv::cli {

namespace {

// CPU seconds the calling thread has used.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

unsigned default_job_threads() {
  // The CPUs this process may run on (a container's or taskset's limit), else the machine's.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

JobPool::JobPool(unsigned threads) {
  const unsigned n = threads == 0 ? default_job_threads() : threads;
  for (unsigned t = 0; t < n; ++t) workers_.emplace_back([this] { work(); });
}

JobPool::~JobPool() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : workers_) t.join();
}

size_t JobPool::add(std::function<void()> job, int priority) {
  size_t index = 0;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    index = jobs_.size();
    jobs_.push_back(std::make_shared<Job>());
    jobs_.back()->run = std::move(job);
    waiting_.emplace(-priority, index);
  }
  queued_.notify_one();
  return index;
}

void JobPool::wait(size_t index) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::shared_ptr<Job> job = jobs_.at(index);
  finished_.wait(lock, [&] { return job->done; });
  if (job->error) std::rethrow_exception(job->error);
}

double JobPool::seconds(size_t index) const {
  const std::lock_guard<std::mutex> lock(mu_);
  return jobs_.at(index)->seconds;
}

double JobPool::cpu_seconds(size_t index) const {
  const std::lock_guard<std::mutex> lock(mu_);
  return jobs_.at(index)->cpu_seconds;
}

void JobPool::work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [&] { return stop_ || !waiting_.empty(); });
    if (stop_) return;
    const std::shared_ptr<Job> job = jobs_[waiting_.begin()->second];
    waiting_.erase(waiting_.begin());
    lock.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    std::exception_ptr error;
    try {
      job->run();
    } catch (...) {
      error = std::current_exception();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    lock.lock();
    job->done = true;
    job->error = error;
    job->seconds = s;
    job->cpu_seconds = thread_cpu_seconds() - c0;
    job->run = nullptr;  // what it captured is released now, not when the pool ends
    finished_.notify_all();
  }
}

}  // namespace ncv::cli
