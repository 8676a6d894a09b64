// The Z3 context every prover and search of a thread shares.
#pragma once

#include <z3++.h>

namespace ncv::solver {

// Z3 4.8.12 takes about 70 ms to destroy a context that has decided queries (measured on the
// frontier search and on one prove_* call per Program: it dominated both), so one context per
// thread serves them all. Terms are reference-counted, so a finished proof leaves nothing behind
// but Z3's caches. A worker thread's context is destroyed when the thread ends; the main
// thread's never is (z3_context.cpp says why).
z3::context& shared_context();

}  // namespace ncv::solver
