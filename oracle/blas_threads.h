// OpenBLAS for the oracle's dgemm calls: loaded at program start with kernels chosen for this
// CPU, on one thread.
#pragma once

#include <string>

namespace ncv::oracle {

// Sets OpenBLAS to one thread (done once when the library is loaded; calling it again is a
// no-op kept for readers of the call sites). Why one thread: Debian's libopenblas0-pthread starts
// a worker per core whose idle workers spin in sched_yield between calls; with the oracle's many
// small dgemms (blocks of 64-256 query rows) on a shared 2-core host that spinning took about half
// of a `check` (perf, issue 25 item 8) and the products gained nothing from threads. The bounds do
// not depend on the thread count (γ_n holds for any summation order).
void use_one_blas_thread();

// OpenBLAS's name for the kernels it runs ("SkylakeX", "Haswell", ...), for benchmarks to print.
std::string blas_core_name();

}  // namespace ncv::oracle
