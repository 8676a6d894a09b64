// Runs the kernel properties (kernel_properties.h) on one kernel outside GoogleTest, the way
// the bug-catalogue test and `ncverify bugs` ask "does the property suite catch this kernel?".
#pragma once

#include <cstdint>
#include <string>

#include "properties/kernel_case.h"
#include "properties/kernel_properties.h"

namespace ncv::props {

struct SuiteParams {
  uint64_t seed = 1;      // RapidCheck seed: a fixed default, so the catch table is reproducible
  int max_success = 100;  // cases per property (RapidCheck's default budget)
  Budget budget;
};
// RapidCheck's max_success and seed from RC_PARAMS when given there, else the defaults above;
// the budget from default_budget().
SuiteParams default_suite_params();

struct SuiteVerdict {
  bool caught = false;
  bool gave_up = false;  // RapidCheck gave up (too many discards): neither caught nor passed
  std::string property;  // the first property that failed
  int cases_before = 0;  // cases that passed in that property before the failing one
  std::string message;   // RapidCheck's description of the failure
};

// One property: caught = it failed; gave_up when RapidCheck could not generate enough cases. With
// `shrink`, RapidCheck shrinks the failure (last_failing_case() is then the minimal case).
SuiteVerdict run_property(const KernelUnderTest& k, const KernelProperty& prop,
                          const SuiteParams& p, bool shrink);

// Tries the properties in kernel_properties() order and stops at the first failure (no
// shrinking: the question is only whether the suite fails).
SuiteVerdict run_property_suite(const KernelUnderTest& k, const SuiteParams& p);

}  // namespace ncv::props
