// The Programs of a registered kernel the solver proves: one per combination of its build
// options (options select instructions and dtypes, so each combination is a different Program;
// shapes stay symbolic params within each).
#pragma once

#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::solver {

struct LabelledProgram {
  std::string label;  // "sd_attention use_causal_mask=true ..." (options in name order)
  kernels::Options options;
  Program program;
};

std::vector<LabelledProgram> option_programs(const kernels::Variant& v);

}  // namespace ncv::solver
