// The kernel-level properties 1–4 (properties/README.md), as RapidCheck property bodies over any
// kernel under test, so that the ctest suites (properties/tests/kernel_prop.cpp), the catalogue
// test and `ncverify bugs` run the very same code. Each body draws one case, runs the kernel on the
// model and fails with RC_FAIL after logging (RC_LOG, printed for the shrunk case only) the case
// and the `ncverify check` command that replays it.
#pragma once

#include <string>
#include <vector>

#include "properties/kernel_case.h"

namespace ncv::props {

// 1. Output within the precision contract's per-element bound of the oracle; a dynamic-check
//    failure of the model fails too.
void prop_matches_oracle(const KernelUnderTest& k, const Budget& b);
// 2a. V * 2^e gives out * 2^e bit for bit (values and logits chosen so that nothing overflows
//     or becomes subnormal).
void prop_v_scaling_is_exact(const KernelUnderTest& k, const Budget& b);
// 2b. Permuting keys and values together leaves a non-causal output unchanged within the two
//     runs' bounds.
void prop_kv_permutation_invariant(const KernelUnderTest& k, const Budget& b);
// 2c. Every output element lies within [min, max] of its V column over the visible keys, within
//     the bound.
void prop_inside_convex_hull(const KernelUnderTest& k, const Budget& b);
// 2d. Q = 0 gives the mean of the visible V rows within the bound.
void prop_zero_q_gives_mean(const KernelUnderTest& k, const Budget& b);
// 3. Ten runs of one case are bit-identical.
void prop_deterministic(const KernelUnderTest& k, const Budget& b);
// 4. A rewrite against the variant it rewrites (for a catalogue entry: its base kernel), on the
//    same inputs: bit-identical when it claims the same numerics, else within the sum of the two
//    contracts' bounds. Succeeds trivially for an original kernel.
void prop_matches_predecessor(const KernelUnderTest& k, const Budget& b);

// The case of the most recent property failure on this thread. With shrinking on, RapidCheck
// continues from every failing shrink, so after a run this is the minimal case.
const KernelCase* last_failing_case();

struct KernelProperty {
  const char* name;
  void (*body)(const KernelUnderTest&, const Budget&);
};
// All of the above, in the order the catalogue and `ncverify bugs` try them.
const std::vector<KernelProperty>& kernel_properties();

}  // namespace ncv::props
