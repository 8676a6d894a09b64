// The loops of interval_rows_kernel.h built for AVX-512 (oracle/CMakeLists.txt), called only
// after interval_rows.cpp has checked the CPU (interval_rows_isa.inc).
#if defined(__x86_64__) && defined(__AVX512F__)
#define NCV_INTERVAL_ISA_BUILT 1
#else
#define NCV_INTERVAL_ISA_BUILT 0
#endif
#define NCV_INTERVAL_ISA(name) name##_avx512
#include "oracle/interval_rows_isa.inc"
