// Timing workloads: kernels that are not attention, written to follow measured NKI kernels so that
// the timing model can be calibrated on more than one kind of kernel (calibration/latencies/).
// A workload is a name, the source it follows, its params and a build function; it has no
// attention spec or precision contract (kernels/ owns those).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/ir/program.h"

namespace ncv::workloads {

struct BuildOptions {
  // Mamba only. nisa.tensor_tensor_scan is not an instruction of the IR. false (timing): the scan
  // is one Vector tensor_tensor over the same operands, costed as the documented scan (ISA-OLD
  // tensor_tensor_scan: max(MIN_II, 2N), the cost of a 2-input fp32 tensor_tensor) but computing
  // deltaA * deltaBu, not the recurrence. true (values): the scan is a sequential chain of
  // per-column tensor_scalar(multiply, add) that computes the recurrence exactly, at far more
  // than the scan's cost. Both programs have the same loads, stores and other instructions.
  bool exact_scan = false;
};

struct Workload {
  std::string name;
  std::string family;  // "gemm", "mamba"
  std::string source;  // repository, path, commit and candidate it follows
  std::string summary;
  std::vector<std::string> params;  // the Program's params, all required
  // What the workload models differently from its source, in words.
  std::vector<std::string> notes;
  std::function<Program(const BuildOptions&)> build;
};

// Every registered workload, in a fixed order.
const std::vector<Workload>& registry();
// nullptr when no workload has that name.
const Workload* find_workload(const std::string& name);

}  // namespace ncv::workloads
