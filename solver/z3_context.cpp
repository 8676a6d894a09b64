#include "solver/z3_context.h"

#include <unistd.h>

namespace ncv::solver {

namespace {

// The main thread's context, once its thread_local holder is gone: a global keeps it reachable,
// so LeakSanitizer counts it as still in use rather than leaked.
z3::context* g_main_thread_context = nullptr;

// One thread's context. Destroying it is a deliberate leak on the main thread: that thread ends
// only with the process, whose memory the OS reclaims at once, whereas Z3_del_context frees every
// term and cache one by one and grows faster than the proof did (measured 2026-11-29: `prove` of
// a 20,000-instruction straight-line .nkir printed its verdict after 4.8 s and exited at 60 s,
// 55 s of it in Z3_del_context under exit()). Worker threads (report's job pool, equiv's option
// sets) end mid-process, so theirs is destroyed as before.
struct ThreadContext {
  z3::context* ctx = new z3::context;
  ThreadContext() = default;
  ThreadContext(const ThreadContext&) = delete;
  ThreadContext& operator=(const ThreadContext&) = delete;
  ~ThreadContext() {
    if (gettid() == getpid()) {
      g_main_thread_context = ctx;  // the main thread: the process is exiting
    } else {
      delete ctx;
    }
  }
};

}  // namespace

z3::context& shared_context() {
  thread_local ThreadContext context;
  return *context.ctx;
}

}  // namespace ncv::solver
