// The Programs `prove` and `frontier` hand to the solver: every option combination of a
// registered kernel (optionally with some options fixed; kernels/option_programs.h), a
// bug-catalogue entry or a .nkir file.
#pragma once

#include <string>
#include <vector>

#include "kernels/option_programs.h"
#include "tools/kernel_source.h"

namespace ncv::cli {

// Every option program of every registered kernel.
std::vector<kernels::LabelledProgram> all_solver_programs();

// `target`'s programs: for a registered kernel every option combination that agrees with
// `fixed`, else the one program of a catalogue entry, a .nkir file (then `fixed` must be
// empty) or an NKI kernel FILE.py:FUNCTION traced with `traced_assignments` (its keyword
// arguments and fixed shapes) and `nki`. Throws UsageError.
std::vector<kernels::LabelledProgram> solver_programs(
    const std::string& target, const kernels::Options& fixed,
    const std::vector<std::string>& traced_assignments = {}, const NkiFlags& nki = {});

}  // namespace ncv::cli
