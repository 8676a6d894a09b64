#include "properties/suite_runner.h"

#include <rapidcheck.h>

#include <cstdlib>
#include <cstring>

#include "properties/kernel_properties.h"

namespace ncv::props {

SuiteParams default_suite_params() {
  SuiteParams p;
  const char* env = std::getenv("RC_PARAMS");
  const rc::detail::TestParams& rc_params = rc::detail::configuration().testParams;
  if (env && std::strstr(env, "seed=")) p.seed = rc_params.seed;
  if (env && std::strstr(env, "max_success=")) p.max_success = rc_params.maxSuccess;
  p.budget = default_budget();
  return p;
}

SuiteVerdict run_property_suite(const KernelUnderTest& k, const SuiteParams& p) {
  rc::detail::TestParams params;
  params.seed = p.seed;
  params.maxSuccess = p.max_success;
  params.disableShrinking = true;
  SuiteVerdict v;
  for (const KernelProperty& prop : kernel_properties()) {
    rc::detail::TestMetadata meta;
    meta.id = k.name + "/" + prop.name;
    meta.description = prop.name;
    const auto result = rc::detail::checkTestable([&] { prop.body(k, p.budget); }, meta, params);
    rc::detail::FailureResult failure;
    if (result.match(failure)) {
      v.caught = true;
      v.property = prop.name;
      v.cases_before = failure.numSuccess;
      v.message = failure.description;
      return v;
    }
    rc::detail::GaveUpResult gave_up;
    if (result.match(gave_up)) {
      v.caught = true;  // a property that cannot even generate cases is a failing suite
      v.property = prop.name;
      v.message = "gave up: " + gave_up.description;
      return v;
    }
  }
  return v;
}

}  // namespace ncv::props
