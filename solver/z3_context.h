// The Z3 context every prover and search of a thread shares.
#pragma once

#include <z3++.h>

#include <string>

namespace ncv::solver {

// Z3 4.8.12 takes about 70 ms to destroy a context that has decided queries (measured on the
// frontier search and on one prove_* call per Program: it dominated both), so one context per
// thread serves them all. Terms are reference-counted, so a finished proof leaves nothing behind
// but Z3's caches. A worker thread's context is destroyed when the thread ends; the main
// thread's never is (z3_context.cpp says why).
z3::context& shared_context();

// s.check(), with a Z3 exception (a resource limit, an interrupted query) turned into unknown:
// its message goes to `error`, so the caller reports it instead of crashing.
inline z3::check_result check_or_unknown(z3::solver& s, std::string& error) {
  try {
    return s.check();
  } catch (const z3::exception& e) {
    error = e.msg();
    return z3::unknown;
  }
}

}  // namespace ncv::solver
