// The factories of each workload family, in registry order (internal to workloads/).
#pragma once

#include <vector>

#include "workloads/workload.h"

namespace ncv::workloads {

std::vector<Workload> gemm_workloads();
std::vector<Workload> mamba_workloads();

}  // namespace ncv::workloads
