// The Programs of a registered kernel: one per combination of its build options (options select
// instructions and dtypes, so each combination is a different Program; shapes stay symbolic
// params within each). What `prove`, `frontier`, the seed generators and the registry tests
// iterate.
#pragma once

#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

struct LabelledProgram {
  std::string label;  // "sd_attention use_causal_mask=true ..." (options in name order)
  Options options;    // complete (Variant::resolve)
  Program program;
  // The registered kernel it belongs to (its generations, kernels::generation_refusal); null
  // for a program of no registered kernel (a .nkir file).
  const Variant* variant = nullptr;
};

// Every combination of v's option values, the first option varying slowest, each as given (not
// resolved; a variant without options has one empty combination), except those v.excluded names.
std::vector<Options> option_combinations(const Variant& v);

// Every combination that agrees with `fixed`, resolved, in option_combinations' order. Throws
// std::invalid_argument (from Variant::resolve) when `fixed` names an unknown option or value.
std::vector<Options> resolved_combinations(const Variant& v, const Options& fixed = {});

// One Program per option combination that agrees with `fixed`. Throws std::invalid_argument
// (from Variant::resolve) when `fixed` names an unknown option or value.
std::vector<LabelledProgram> option_programs(const Variant& v, const Options& fixed = {});

}  // namespace ncv::kernels
