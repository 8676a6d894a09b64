// Which variants the registry-wide solver tests leave out of their costliest classes. (The
// generation those tests run a variant on is its default: find_hw_config(default_generation(v)).)
#pragma once

#include "kernels/variant.h"

namespace ncv::kernels {

// Whether the registry-wide ISA-rules proof and capacity-frontier cross-check (solver/tests) cover
// v; the well-formedness, bounds, allocation and initialization ones cover every variant. Not
// attention_tkg: its 66 option programs hold ~33,000 ISA-rule obligations, which add ~15 s to
// that test on the 2-core machine (18.3 s with it, 3.7 s without, 2026-11-26), beyond the default
// ctest budget; and its flash-attention options fix seqlen at 16384 or 32768, beyond the frontier
// cross-check's brute-force limit of 16384. `ncverify prove attention_tkg --gen trn2` proves
// every class for it on demand (~24 s, kernels/README.md).
bool in_registry_isa_and_frontier_tests(const Variant& v);

}  // namespace ncv::kernels
