// The factories of each workload family, in registry order (internal to workloads/).
#pragma once

#include <vector>

#include "workloads/workload.h"

namespace ncv::workloads {

std::vector<Workload> gemm_workloads();
std::vector<Workload> matmul_tutorial_workloads();
// matmul_tutorial_fully_optimized at other TILES_IN_BLOCK_M/N/K (the source's meta-parameters;
// the registered workload uses its defaults 16, 2, 8): lets a test check the values at a shape
// small enough to interpret.
Program build_matmul_tutorial_fully_optimized(int tiles_m, int tiles_n, int tiles_k);
std::vector<Workload> mamba_workloads();
std::vector<Workload> mamba_tutorial_workloads();
// Programs around one instruction whose duration a public profile shows (anchors.cpp).
std::vector<Workload> anchor_workloads();

}  // namespace ncv::workloads
