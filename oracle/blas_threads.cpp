// The cblas functions the suite calls (cblas_dgemm, cblas_sgemm, openblas_set_num_threads,
// openblas_get_corename), defined here and forwarded to OpenBLAS, which this file loads with
// dlopen at program start instead of the program linking it.
//
// Why: Debian 12's OpenBLAS (0.3.21, built with DYNAMIC_ARCH) picks its kernels from the CPU's
// family and model numbers when it is loaded. On CPUs newer than the library (here a Xeon whose
// model it does not know, with AVX-512) it falls back to its generic Prescott kernels, which ran
// the oracle's dgemms at half the speed of its SkylakeX kernels on the same machine
// (bench/oracle_bench: fast oracle at S = 4096, d = 64: 0.50 s vs 0.25 s). Its documented
// override is the environment variable OPENBLAS_CORETYPE, read once, when the library
// initialises: so the library is loaded after setting it, from the CPU features this program
// sees (AVX-512 F/VL/BW/DQ: SkylakeX; AVX2 with FMA: Haswell; otherwise OpenBLAS decides).
// A value the user set is kept. The choice changes speed only: every bound on a dgemm result
// holds for any summation order, blocking and use of fused multiply-adds (oracle/README.md).
#include "oracle/blas_threads.h"

#include <cblas.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#ifndef NCV_OPENBLAS_LIBRARY
#define NCV_OPENBLAS_LIBRARY "libopenblas.so.0"
#endif

namespace ncv::oracle {

namespace {

using DgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         double, const double*, blasint, const double*, blasint, double, double*,
                         blasint);
using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float*, blasint, const float*, blasint, float, float*,
                         blasint);
using SetThreadsFn = void (*)(int);
using CoreNameFn = char* (*)();

struct OpenBlas {
  DgemmFn dgemm = nullptr;
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_num_threads = nullptr;
  CoreNameFn corename = nullptr;
};

// OpenBLAS's kernel family for this CPU, or nullptr to let OpenBLAS detect it.
const char* core_type_for_this_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

[[noreturn]] void fail(const std::string& what) {
  // Before main: no exception can be caught, so say what is missing and stop.
  std::fprintf(stderr, "ncverify: cannot use OpenBLAS: %s (Debian package libopenblas0)\n",
               what.c_str());
  std::exit(2);
}

template <class Fn>
Fn symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) fail(std::string("no symbol ") + name + " in " + NCV_OPENBLAS_LIBRARY);
  return reinterpret_cast<Fn>(p);
}

OpenBlas load() {
  const char* chosen = std::getenv("OPENBLAS_CORETYPE") ? nullptr : core_type_for_this_cpu();
  // Set only around the load: child processes (the front end's python3, tests' subprocesses)
  // see the environment they were given.
  if (chosen != nullptr) setenv("OPENBLAS_CORETYPE", chosen, 0);
  void* lib = dlopen(NCV_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (chosen != nullptr) unsetenv("OPENBLAS_CORETYPE");
  if (lib == nullptr) fail(dlerror());
  OpenBlas b;
  b.dgemm = symbol<DgemmFn>(lib, "cblas_dgemm");
  b.sgemm = symbol<SgemmFn>(lib, "cblas_sgemm");
  b.set_num_threads = symbol<SetThreadsFn>(lib, "openblas_set_num_threads");
  b.corename = symbol<CoreNameFn>(lib, "openblas_get_corename");
  b.set_num_threads(1);
  return b;
}

const OpenBlas& openblas() {
  static const OpenBlas b = load();
  return b;
}

// Loaded during static initialisation, while the program has one thread (setenv is not safe
// beside other threads reading the environment); openblas() also serves a caller that runs
// before this initialiser.
[[maybe_unused]] const bool kLoadedAtStart = (openblas(), true);

}  // namespace

void use_one_blas_thread() {}

std::string blas_core_name() {
  return openblas().corename();
}

}  // namespace ncv::oracle

// The cblas entry points, forwarded. OpenBLAS is never linked into a program that uses these, so
// these are the only definitions.
extern "C" {

void cblas_dgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
                 blasint k, double alpha, const double* a, blasint lda, const double* b,
                 blasint ldb, double beta, double* c, blasint ldc) {
  ncv::oracle::openblas().dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
                 blasint k, float alpha, const float* a, blasint lda, const float* b, blasint ldb,
                 float beta, float* c, blasint ldc) {
  ncv::oracle::openblas().sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void openblas_set_num_threads(int n) {
  ncv::oracle::openblas().set_num_threads(n);
}

}  // extern "C"
