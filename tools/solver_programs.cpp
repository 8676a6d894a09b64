#include "tools/solver_programs.h"

#include <stdexcept>

#include "frontend/nki_trace.h"
#include "kernels/registry.h"
#include "tools/cli_common.h"
#include "tools/kernel_source.h"

namespace ncv::cli {

std::vector<kernels::LabelledProgram> all_solver_programs() {
  std::vector<kernels::LabelledProgram> out;
  for (const kernels::Variant& v : kernels::registry()) {
    for (auto& lp : kernels::option_programs(v)) out.push_back(std::move(lp));
  }
  return out;
}

std::vector<kernels::LabelledProgram> solver_programs(
    const std::string& target, const kernels::Options& fixed,
    const std::vector<std::string>& traced_assignments, const NkiFlags& nki) {
  if (!traced_assignments.empty() && !frontend::is_python_target(target)) {
    throw UsageError("--param applies to an NKI kernel FILE.py:FUNCTION; " + target +
                     " is proved over every option and its whole param domain");
  }
  if (const kernels::Variant* v = kernels::find_variant(target)) {
    try {
      return kernels::option_programs(*v, fixed);
    } catch (const std::invalid_argument& e) {
      throw UsageError(target + ": " + e.what());
    }
  }
  if (!fixed.empty()) {
    throw UsageError(target + " is not a registered kernel: it has no options to fix");
  }
  // A .nkir file or a bug-catalogue entry; throws UsageError for anything else.
  KernelSource src = load_kernel_source(target, traced_assignments, "", nki);
  std::vector<kernels::LabelledProgram> out;
  out.push_back({src.label, src.options, std::move(src.program), src.variant});
  return out;
}

}  // namespace ncv::cli
