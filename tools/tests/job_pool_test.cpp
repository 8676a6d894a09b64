// tools/job_pool.h in process: jobs start by priority, then in the order added; a job's exception
// comes back from wait(index) and leaves the other jobs alone; results written by jobs on several
// workers are all there, in their slots, after wait; the report's LatencyCache answers the same
// whichever caller (and whichever instance cap) comes first, also from several threads.
#include "tools/job_pool.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "tools/report_latency.h"
#include "tools/report_sweeps.h"

namespace ncv::cli {
namespace {

TEST(JobPool, StartsByPriorityThenInTheOrderAdded) {
  JobPool pool(1);
  ASSERT_EQ(pool.threads(), 1u);
  // The only worker is held by job 0 until every other job is queued, so the order in which the
  // rest start is the pool's choice alone.
  std::promise<void> all_added;
  std::shared_future<void> gate = all_added.get_future().share();
  std::mutex mu;
  std::vector<int> started;
  auto record = [&](int id) {
    return [&, id] {
      const std::lock_guard<std::mutex> lock(mu);
      started.push_back(id);
    };
  };
  pool.add([gate] { gate.wait(); });
  const int priorities[] = {0, 2, 1, 2, 0, 1};
  std::vector<size_t> index;
  for (int i = 0; i < 6; ++i) index.push_back(pool.add(record(i), priorities[i]));
  all_added.set_value();
  for (size_t i : index) pool.wait(i);
  EXPECT_EQ(started, (std::vector<int>{1, 3, 2, 5, 0, 4}));
}

TEST(JobPool, AJobsExceptionComesBackFromItsWaitAlone) {
  JobPool pool(2);
  std::atomic<int> ran{0};
  const size_t a = pool.add([&] { ++ran; });
  const size_t b = pool.add([] { throw std::runtime_error("job b failed"); });
  const size_t c = pool.add([&] { ++ran; });
  pool.wait(a);
  try {
    pool.wait(b);
    ADD_FAILURE() << "wait(b) must rethrow b's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job b failed");
  }
  pool.wait(c);
  EXPECT_EQ(ran.load(), 2);
}

// A job that spins for 30 ms of its thread's CPU time: the pool counts at least that much CPU
// and at least as much wall time.
TEST(JobPool, CountsEachJobsWallAndCpuSeconds) {
  JobPool pool(1);
  const size_t spin = pool.add([] {
    timespec t0{}, t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < 30e6);
  });
  const size_t idle = pool.add([] {});
  pool.wait(spin);
  pool.wait(idle);
  EXPECT_GE(pool.cpu_seconds(spin), 0.03);
  EXPECT_GE(pool.seconds(spin), pool.cpu_seconds(spin) - 1e-3);
  EXPECT_LT(pool.cpu_seconds(idle), 0.03);
}

TEST(JobPool, EveryResultIsInItsSlotAfterWait) {
  JobPool pool(0);
  EXPECT_EQ(pool.threads(), default_job_threads());
  constexpr int kJobs = 200;
  std::vector<long> slot(kJobs, -1);
  std::vector<size_t> index;
  for (int i = 0; i < kJobs; ++i) {
    index.push_back(pool.add(
        [&slot, i] {
          long sum = 0;
          for (int k = 0; k <= i * 1000; ++k) sum += k % 7;
          slot[static_cast<size_t>(i)] = sum;
        },
        i % 3));
  }
  for (int i = 0; i < kJobs; ++i) {
    pool.wait(index[static_cast<size_t>(i)]);
    long sum = 0;
    for (int k = 0; k <= i * 1000; ++k) sum += k % 7;
    EXPECT_EQ(slot[static_cast<size_t>(i)], sum) << i;
  }
}

// A key first asked for under a cap it is over, then without one (and the other way round, and
// from two threads at once): each caller gets the answer of its own cap.
TEST(LatencyCache, TheAnswerDependsOnTheCallersCapNotOnWhoAskedFirst) {
  const kernels::Variant& v = *kernels::find_variant("sd_attention");
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  const ParamValues params = report_params(p, 256);
  const HwConfig& hw = hw_config_trn1();
  const InstanceCount n = count_instances(p, params, hw);
  ASSERT_TRUE(n.error.empty()) << n.error;
  ASSERT_GT(n.instances, 10);
  const int64_t small = n.instances - 1;
  const Latency full = modelled_latency(p, params, hw);
  ASSERT_TRUE(full.us.has_value()) << full.error;
  const std::string refusal = trace_cap_refusal(n.instances, small);

  LatencyCache capped_first;
  EXPECT_EQ(capped_first.get(v, o, params, hw, small).error, refusal);
  EXPECT_EQ(capped_first.get(v, o, params, hw).us, full.us);
  LatencyCache full_first;
  EXPECT_EQ(full_first.get(v, o, params, hw).us, full.us);
  const Latency capped = full_first.get(v, o, params, hw, small);
  EXPECT_FALSE(capped.us.has_value());
  EXPECT_EQ(capped.error, refusal);

  LatencyCache shared;
  JobPool pool(2);
  std::vector<Latency> got(8);
  std::vector<size_t> jobs;
  for (size_t i = 0; i < got.size(); ++i) {
    jobs.push_back(
        pool.add([&, i] { got[i] = shared.get(v, o, params, hw, i % 2 ? small : 1 << 30); }));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    pool.wait(jobs[i]);
    if (i % 2) {
      EXPECT_EQ(got[i].error, refusal) << i;
    } else {
      EXPECT_EQ(got[i].us, full.us) << i;
    }
  }
}

}  // namespace
}  // namespace ncv::cli
