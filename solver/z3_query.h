// One Z3 query with a wall-clock limit that does not use Z3's own timer.
//
// Z3 4.8.12's `timeout` parameter arms a `scoped_timer` (src/util/scoped_timer.cpp at tag
// z3-4.8.12). Its pooled timer thread, when the time is up, cancels the query and puts itself
// back into the pool while the query that armed it still holds the timer's mutex; a timer armed
// before that query ends (a `try_for` of the tactic the query runs) takes the same worker and
// locks that mutex again, and the thread waits for itself forever at 0% CPU. Z3 fixed it in
// 4.8.14 (commit 9d82c1d8a9, "fix deadlock in scoped_timer destructor", PR #5371); Debian ships
// 4.8.12. A solver's first check without push() runs the logic's tactic, and QF_NIA's is
// `or_else(sat, try_for(smt, 2000), try_for(nlsat, 3000), smt)`
// (src/tactic/smtlogics/qfnia_tactic.cpp): `prove` of a program with a cubic `require` and a
// 1 ms or 100 ms timeout hung there, in its non-empty-domain check (measured 2026-11-29, gdb: the
// main thread in pthread_mutex_lock under Z3_solver_check, the timer thread idle). The same pool
// also lets one thread's query, once timed out, wait for another thread's timer to end.
//
// So no query here sets `timeout`: a watchdog thread of ours interrupts the query's context
// (Z3_interrupt, which the Z3 API allows from another thread) once its deadline passes, and again
// every few milliseconds until the check returns (an interrupt that lands before the check has
// reset the context's resource limit would otherwise be lost). A query still runs on past its
// deadline where Z3 computes without looking at its cancel flag; Z3 4.8.12 checks that flag in
// the same place as `rlimit` (reslimit::inc, src/util/rlimit.cpp), so a resource limit would not
// stop such a computation either.
#pragma once

#include <z3++.h>

#include <chrono>
#include <string>

namespace ncv::solver {

struct QueryResult {
  z3::check_result result = z3::unknown;
  // The deadline passed and the query was interrupted (its answer, if it still gave one, holds).
  bool timed_out = false;
  // For unknown: "timeout", Z3's reason_unknown(), or the message of the exception Z3 threw
  // (a resource limit, an interrupted query).
  std::string why;
};

// s.check(), interrupted at `deadline`; never throws a Z3 exception (it becomes unknown).
QueryResult check_until(z3::solver& s, std::chrono::steady_clock::time_point deadline);

// check_until with the deadline `timeout_ms` from now.
QueryResult check_within(z3::solver& s, unsigned timeout_ms);

// Z3_interrupt also raises the cancel count of the context's resource limit, which only the next
// check resets (z3-4.8.12 src/api/api_context.cpp, context::interrupt; reslimit::push in
// src/util/rlimit.cpp). An interrupt that lands after a check has reset it on its way out makes
// the next simplify or model evaluation throw "canceled" (measured): check_until calls this, a
// check of nothing, after every query it interrupted.
void clear_interrupt(z3::context& ctx);

}  // namespace ncv::solver
