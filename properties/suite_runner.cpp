#include "properties/suite_runner.h"

#include <rapidcheck.h>
#include <rapidcheck/detail/TestListener.h>

#include <cstdlib>
#include <cstring>

#include "properties/kernel_properties.h"

namespace ncv::props {

namespace {

// RapidCheck's default listener collects failures and prints an RC_PARAMS reproduce line when
// the program exits; here a failure is the expected answer to "is this kernel caught?", so the
// runs report to nobody.
class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

SuiteParams default_suite_params() {
  SuiteParams p;
  const char* env = std::getenv("RC_PARAMS");
  const rc::detail::TestParams& rc_params = rc::detail::configuration().testParams;
  if (env && std::strstr(env, "seed=")) p.seed = rc_params.seed;
  if (env && std::strstr(env, "max_success=")) p.max_success = rc_params.maxSuccess;
  p.budget = default_budget();
  return p;
}

SuiteVerdict run_property(const KernelUnderTest& k, const KernelProperty& prop,
                          const SuiteParams& p, bool shrink) {
  rc::detail::TestParams params;
  params.seed = p.seed;
  params.maxSuccess = p.max_success;
  params.disableShrinking = !shrink;
  rc::detail::TestMetadata meta;
  meta.id = k.name + "/" + prop.name;
  meta.description = prop.name;
  SilentListener silent;
  const auto result =
      rc::detail::checkTestable([&] { prop.body(k, p.budget); }, meta, params, silent);
  SuiteVerdict v;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  if (result.match(failure)) {
    v.caught = true;
    v.cases_before = failure.numSuccess;
    v.message = failure.description;
  } else if (result.match(gave_up)) {
    // Too many discarded cases: the property tested too little to say anything, which is not a
    // catch.
    v.gave_up = true;
    v.message = "gave up: " + gave_up.description;
  }
  if (v.caught || v.gave_up) v.property = prop.name;
  return v;
}

SuiteVerdict run_property_suite(const KernelUnderTest& k, const SuiteParams& p) {
  SuiteVerdict last_gave_up;
  for (const KernelProperty& prop : kernel_properties()) {
    SuiteVerdict v = run_property(k, prop, p, /*shrink=*/false);
    if (v.caught) return v;
    if (v.gave_up) last_gave_up = v;
  }
  return last_gave_up;  // not caught; says which property could not generate its cases, if any
}

}  // namespace ncv::props
