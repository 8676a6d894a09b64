// OpenBLAS on one thread, for the oracle's dgemm calls.
#pragma once

namespace ncv::oracle {

// Sets OpenBLAS to one thread, once per process. Why: Debian's libopenblas0-pthread starts a
// worker per core whose idle workers spin in sched_yield between calls; with the oracle's many
// small dgemms (blocks of 64-256 query rows) on a shared 2-core host that spinning took about
// half of a `check` (perf, issue 25 item 8) and the products gained nothing from threads.
// The bounds do not depend on the thread count (γ_n holds for any summation order).
void use_one_blas_thread();

}  // namespace ncv::oracle
