// The check rewrites are judged by today (properties/README.md "Power"): numpy-style
// allclose(out, ref, rtol=1e-5, atol=1e-2) on 5 random uniform [0, 1) inputs (np.random.rand,
// what the NKI samples' own tests draw) at one fixed shape, against a float64 reference. It is
// the baseline column of `ncverify bugs`.
#pragma once

#include <map>
#include <string>

#include "properties/kernel_case.h"

namespace ncv::props {

struct BaselineVerdict {
  bool caught = false;
  // True when the only thing that caught the kernel was one of the model's dynamic checks
  // (out-of-bounds, uninitialized or clobbered read, carried dependency, ...). Counted as caught
  // (generous to the baseline), but on hardware those bugs are silent unless the values show it.
  bool by_model_check = false;
  std::string detail;  // the failing input's max |out - ref|, or the model's error
  ParamValues shape;   // the fixed shape it ran at
};

// The fixed shape: seqlen nearest 512, d_head 64 (else the nearest legal), other params at
// their minimum; options as k fixes them, defaults otherwise.
ParamValues baseline_shape(const KernelUnderTest& k, const kernels::Options& options);

BaselineVerdict allclose_baseline(const KernelUnderTest& k);

}  // namespace ncv::props
