#include "oracle/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace ncv::oracle {

void use_one_blas_thread() {
  static std::once_flag once;
  // openblas_set_num_threads is declared by OpenBLAS's cblas.h (every Debian 12 variant:
  // pthread, openmp, serial); the build links OpenBLAS by pkg-config (CMakeLists.txt).
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

}  // namespace ncv::oracle
